# bpe-encode-hf: --tokenizer-type HuggingFaceTokenizer against Hugging
# Face's own `tokenizers` (npm 0.23.2, the Rust library, native), with the
# tokenizer.json files of contrib/oracle/hf-tokenizer-json.js: GPT-2's and
# the Llama-3-style one (cl100k_base's ranks, a Split regex, 256 special
# tokens). One core (taskset -c 0; RAYON_NUM_THREADS=1 for tokenizers),
# HFREPS (3) alternating runs, medians of CPU seconds (user + system):
# bpe-encode's whole process (start-up, tokenizer.json parsed, the
# patterns compiled, JSON records read and ids written, --workers 1)
# against the CPU time of tokenizers' encodeBatch calls alone
# (process.cpuUsage around them, the text read and parsed and the
# tokenizer loaded before). Input: DISTINCT (default
# $OWT_BUILD/bench/distinct.jsonl, make-distinct.sh's 20 MB, when it is
# there), else ../shared's 5 MB sample. Token counts are compared.
. "$OWT_SRC/contrib/bench/lib.sh"

: "${HFREPS:=3}"
in=${DISTINCT:-$OWT_BUILD/bench/distinct.jsonl}
[ -s "$in" ] || in=$OWT_SHARED/data/corpus-sample.jsonl
if [ ! -s "$in" ]; then
	echo "(no input: neither make-distinct.sh's text nor ../shared's sample)"
	exit 0
fi
if ! command -v npm >/dev/null 2>&1 ||
    ! (cd "$BW" && cp "$OWT_SRC/t/hftok/package.json" "$OWT_SRC/t/hftok/package-lock.json" . &&
    npm ci --no-audit --no-fund --loglevel=error >/dev/null 2>&1); then
	echo "(npm could not install tokenizers: reference skipped)"
	exit 0
fi
cat >"$BW/ref-hf.js" <<'EOF'
const fs = require('fs');
const path = require('path');
const { Tokenizer } = require('tokenizers');
const [dir, file, countfile] = process.argv.slice(2);
const t = Tokenizer.fromFile(path.join(dir, 'tokenizer.json'));
const texts = fs.readFileSync(file, 'utf8').split('\n').filter((l) => l)
    .map((l) => JSON.parse(l).text);
(async () => {
	let n = 0;
	const c0 = process.cpuUsage();
	for (let i = 0; i < texts.length; i += 256)
		for (const e of await t.encodeBatch(texts.slice(i, i + 256), { addSpecialTokens: true }))
			n += e.getIds().length;
	const c = process.cpuUsage(c0);
	fs.writeFileSync(countfile, n + ' ' + (c.user + c.system) / 1e6 + '\n');
})();
EOF
mk="env NODE_PATH=$BW/node_modules node $OWT_SRC/contrib/oracle/hf-tokenizer-json.js"
$mk gpt2 "$BW/gpt2" "$OWT_SRC/data/gpt2/encoder.json" "$OWT_SRC/data/gpt2/vocab.bpe"
$mk llama3 "$BW/llama3"
tb=$(wc -c <"$in")
echo "HuggingFaceTokenizer: one core (taskset -c 0), $in, $tb bytes; CPU seconds, bpe-encode's whole process against tokenizers' encodeBatch calls alone; median of $HFREPS alternating runs"
for m in gpt2 llama3; do
	hf="--tokenizer-type HuggingFaceTokenizer --tokenizer-model $BW/$m"
	tn=$(bpe-encode $hf "$in" 2>&1 >/dev/null | sed -n 's/.* documents, \([0-9]*\) tokens.*/\1/p')
	: >"$BW/tb"; : >"$BW/tr"
	for i in $(seq "$HFREPS"); do
		cputime -o "$BW/.time" \
		    taskset -c 0 bpe-encode -q --workers 1 $hf "$in" >/dev/null
		awk '{ print $1, $2, $3 + $4 }' "$BW/.time" >>"$BW/tb"
		taskset -c 0 env RAYON_NUM_THREADS=1 NODE_PATH="$BW/node_modules" \
		    node "$BW/ref-hf.js" "$BW/$m" "$in" "$BW/c"
		echo "0 0 $(cut -d' ' -f2 "$BW/c")" >>"$BW/tr"
	done
	cb=$(median "$BW/tb" 3)
	cr=$(median "$BW/tr" 3)
	echo "  $m: bpe-encode $cb s ($(mbps "$tb" "$cb") MB/s CPU, $(($(median "$BW/tb" 2) / 1024)) MB RSS); tokenizers 0.23.2 $cr s: $(ratio "$cr" "$cb")x"
	n=$(cut -d' ' -f1 "$BW/c")
	[ "$n" = "$tn" ] && echo "    token counts agree: $tn" ||
	    echo "    TOKEN COUNTS DIFFER: bpe-encode $tn, tokenizers $n"
done
