# bpe-encode: MB/s, tokens/s and peak RSS against npm tiktoken-node
# (tiktoken's Rust core, native) and npm tiktoken (the same core in WASM),
# installed here into a scratch folder; side by side on the same input,
# pinned to one core, then on all cores; the 1 -> 2 worker scaling; and the
# time per MB of single pieces (no white space) of 10 KB, 100 KB and 1 MB.
# The headline (issue 17) is on distinct text read once, start-up included
# on both sides, HREPS (5) runs alternating, medians: the shared sample
# (5 MB), and a second set of distinct multilingual text that
# make-distinct.sh builds from this machine's Debian packages (20 MB,
# kept in $OWT_BUILD/bench/distinct.jsonl; DISTINCT=FILE names another).
# Real corpora are mostly text no cache has seen. COPIES (8) copies of the
# same sample follow, labelled: from the second copy on, bpe-encode's
# cache of merged pieces answers most pieces, so that figure is not the
# headline.
. "$OWT_SRC/contrib/bench/lib.sh"

: "${COPIES:=8}"
: "${HREPS:=5}"
ncpu=$(nproc)
in=$BW/in.jsonl
if [ -f "$OWT_SHARED/data/corpus-sample.jsonl" ]; then
	src="$COPIES copies of shared/data/corpus-sample.jsonl (multilingual)"
	for i in $(seq "$COPIES"); do cat "$OWT_SHARED/data/corpus-sample.jsonl"; done >"$in"
	cold=$OWT_SHARED/data/corpus-sample.jsonl
else
	src="synthetic English-like records"
	perl -e 'srand(1); my @w = qw(the of and to in a is that for it as was with be by on not he this are or his from at which but have an they you were her she there one all we their);
	    for (1 .. 100000) { print "{\"text\":\"", join(" ", map { $w[rand @w] } 1 .. 40), ".\"}\n" }' >"$in"
	cold=
fi
bytes=$(wc -c <"$in")
tokens=$(bpe-encode --workers "$ncpu" "$in" 2>&1 >/dev/null | sed -n 's/.* documents, \([0-9]*\) tokens.*/\1/p')

# The references, in a scratch folder; skipped when npm cannot install them.
ref=1
if ! command -v npm >/dev/null 2>&1 ||
    ! (cd "$BW" && npm init -y >/dev/null 2>&1 &&
    npm install --no-audit --no-fund --loglevel=error \
    tiktoken@1.0.22 tiktoken-node@0.0.7 >/dev/null 2>&1); then
	ref=0
	echo "(npm could not install tiktoken and tiktoken-node: references skipped)"
fi
# ref.js KIND FILE COUNTFILE: encode the text of each record; write the token count.
cat >"$BW/ref.js" <<'EOF'
const fs = require('fs');
const [kind, file, countfile] = process.argv.slice(2);
let encode;
if (kind === 'node') {
	const e = require('tiktoken-node').getEncoding('gpt2');
	encode = (t) => e.encode(t);
} else {
	const e = require('tiktoken').get_encoding('gpt2');
	encode = (t) => e.encode_ordinary(t);
}
let n = 0;
for (const line of fs.readFileSync(file, 'utf8').split('\n'))
	if (line)
		n += encode(JSON.parse(line).text).length;
fs.writeFileSync(countfile, n + '\n');
EOF
node_ref="env NODE_PATH=$BW/node_modules node $BW/ref.js"

# timed OUT CMD...: as measure, also with the CPU seconds (user + system),
# to the microsecond (lib.sh's cputime: GNU time's two decimals are 2.5%
# of a 0.4 s run).
timed() {
	out=$1
	shift
	cputime -o "$BW/.time" "$@"
	awk '{ printf "%s %s %.4f\n", $1, $2, $3 + $4 }' "$BW/.time" >>"$out"
}

# report LABEL FILE: median MB/s (wall and CPU time), tokens/s and peak RSS.
report() {
	t=$(median "$2" 1)
	c=$(median "$2" 3)
	printf '  %-38s %6s MB/s %6s Mtok/s %6s MB/s CPU  %4s MB RSS\n' "$1" \
	    "$(mbps "$bytes" "$t")" "$(mbps "$tokens" "$t")" "$(mbps "$bytes" "$c")" \
	    "$(($(median "$2" 2) / 1024))"
}

# ratios A B: B's time over A's, wall and CPU.
ratios() {
	echo "$(ratio "$(median "$2" 1)" "$(median "$1" 1)")x wall, $(ratio "$(median "$2" 3)" "$(median "$1" 3)")x CPU"
}

# TikTokenizer (issue 29): cl100k_base against tiktoken-node (native) and
# npm tiktoken (WASM), o200k_base against npm tiktoken (tiktoken-node has
# none); one core, distinct text read once, TREPS (3) runs alternating
# on a free core (tiktoken_bench says how that is told).
# bpe-encode's CPU time is its whole process (start-up, the rank file,
# the pattern's compile, JSON); the references' is their encode calls
# alone (process.cpuUsage around them), the text parsed beforehand.
# PART=tiktoken runs this part alone.
cat >"$BW/ref-tt.js" <<'EOF'
const fs = require('fs');
const [kind, enc, file, countfile] = process.argv.slice(2);
let encode;
if (kind === 'node') {
	const e = require('tiktoken-node').getEncoding(enc);
	encode = (t) => e.encode(t);
} else {
	const e = require('tiktoken').get_encoding(enc);
	encode = (t) => e.encode_ordinary(t);
}
const texts = fs.readFileSync(file, 'utf8').split('\n').filter((l) => l)
    .map((l) => JSON.parse(l).text);
let n = 0;
const c0 = process.cpuUsage();
for (const t of texts)
	n += encode(t).length;
const c = process.cpuUsage(c0);
fs.writeFileSync(countfile, n + ' ' + (c.user + c.system) / 1e6 + '\n');
EOF
# run_ratios REF OURS: each run's ratio of the CPU seconds (third field)
run_ratios() {
	paste -d' ' "$1" "$2" | awk '{ printf " %.2f", $3 / $6 }'
}
# tiktoken_bench FILE WHAT
#
# Each run is bracketed by coreprobe: before bpe-encode, after it, after
# WASM (cl100k_base: after tiktoken-node too). The runs of bpe-encode and
# a reference on a free core (each probe around the two at least 85% of
# the upper quartile of the encoding's probes) are the ones judged
# against the target; a run beside a busy hyperthread twin is printed,
# marked, and made again, till TREPS free runs or 4 * TREPS in all. The twin (another guest's)
# slows bpe-encode 1.5x and tiktoken-node 1.7x (RESULTS.md, twelfth
# slice): a run that straddles its spells measures the neighbour, not the
# programs. The medians of all runs are printed beside. Where coreprobe
# is not built every run counts.
tiktoken_bench() {
	: "${TREPS:=3}"
	tb=$(wc -c <"$1")
	echo "TikTokenizer: one core (taskset -c 0), $2, $tb bytes; CPU seconds, bpe-encode's whole process against the references' encode calls alone; median of $TREPS alternating runs on a free core (coreprobe, below)"
	for e in cl100k_base o200k_base; do
		NODE_PATH=$BW/node_modules node "$OWT_SRC/contrib/oracle/tiktoken-ranks.js" $e "$BW"
		tt="--tokenizer-type TikTokenizer --tokenizer-model $BW/$e.tiktoken"
		tn=$(bpe-encode $tt "$1" 2>&1 >/dev/null | sed -n 's/.* documents, \([0-9]*\) tokens.*/\1/p')
		# a run a line: bpe-encode's RSS KB and CPU s, WASM's and
		# tiktoken-node's CPU s (0: not run), the four probes (0: none)
		: >"$BW/runs"
		: >"$BW/tb"
		i=0
		while [ $i -lt $((4 * TREPS)) ] &&
		    [ "$(tt_runs "$BW/runs" $e count)" -lt "$TREPS" ]; do
			i=$((i + 1))
			p0=$(core_share)
			timed "$BW/tb" taskset -c 0 bpe-encode -q --workers 1 $tt "$1" >/dev/null
			p1=$(core_share)
			taskset -c 0 env NODE_PATH="$BW/node_modules" node "$BW/ref-tt.js" wasm $e "$1" "$BW/c"
			cw=$(cut -d' ' -f2 "$BW/c")
			p2=$(core_share)
			cn=0 p3=0
			if [ $e = cl100k_base ]; then
				taskset -c 0 env NODE_PATH="$BW/node_modules" node "$BW/ref-tt.js" node $e "$1" "$BW/c"
				cn=$(cut -d' ' -f2 "$BW/c")
				p3=$(core_share)
			fi
			echo "$(tail -n 1 "$BW/tb" | cut -d' ' -f2,3) $cw $cn $p0 $p1 $p2 $p3" |
			    awk '{ for (k = 5; k <= 8; k++) if ($k == "-") $k = 0; print }' >>"$BW/runs"
		done
		tt_runs "$BW/runs" $e report "$tb"
		n=$(cut -d' ' -f1 "$BW/c")
		[ "$n" = "$tn" ] && echo "    token counts agree: $tn" ||
		    echo "    TOKEN COUNTS DIFFER: bpe-encode $tn, the reference $n"
	done
}
# tt_runs RUNS ENCODING count|report [BYTES]: how many runs are on a free
# core (for the target's reference: tiktoken-node for cl100k_base, WASM
# for o200k_base), or the report of them all
tt_runs() {
	awk -v enc="$2" -v what="$3" -v bytes="${4:-0}" '
	function srt(a, n,   i, j, t) {
		for (i = 2; i <= n; i++)
			for (j = i; j > 1 && a[j - 1] > a[j]; j--) {
				t = a[j]; a[j] = a[j - 1]; a[j - 1] = t
			}
	}
	# the median of a[1..n], a left in its order
	function med(a, n,   i, t) {
		for (i = 1; i <= n; i++)
			t[i] = a[i]
		srt(t, n)
		return n == 0 ? 0 : t[int((n + 1) / 2)]
	}
	{
		cb[NR] = $2; rss[NR] = $1; cw[NR] = $3; cn[NR] = $4
		p0[NR] = $5; p1[NR] = $6; p2[NR] = $7; p3[NR] = $8
		for (k = 5; k <= 8; k++)
			if ($k > 0)
				pr[++np] = $k
	}
	END {
		# the upper quartile of the probes: a free core, unless
		# most of the bench ran beside a busy twin
		srt(pr, np)
		hi = np == 0 ? 0 : pr[int((3 * np + 3) / 4)]
		lim = 0.85 * hi
		nw = nn = 0
		for (r = 1; r <= NR; r++) {
			# no probe (0) where coreprobe is not built: free
			fw = hi == 0 || (p0[r] >= lim && p1[r] >= lim && p2[r] >= lim)
			fn = fw && (hi == 0 || p3[r] >= lim)
			mark[r] = (fw ? "" : "*") (enc == "cl100k_base" && !fn ? "+" : "")
			if (fw) { bw[++nw] = cb[r]; ww[nw] = cw[r] }
			if (fn && enc == "cl100k_base") { bn[++nn] = cb[r]; wn[nn] = cn[r] }
		}
		if (what == "count") {
			print enc == "cl100k_base" ? nn : nw
			exit
		}
		b = med(bw, nw); w = med(ww, nw)
		line = sprintf("  %s: bpe-encode %.4f s (%.1f MB/s CPU, %d MB RSS); tiktoken 1.0.22 (WASM) %.4f s: %.2fx",
		    enc, b, b > 0 ? bytes / 1e6 / b : 0, med(rss, NR) / 1024, w, b > 0 ? w / b : 0)
		if (enc == "cl100k_base") {
			b2 = med(bn, nn); n2 = med(wn, nn)
			line = line sprintf("; tiktoken-node 0.0.7 %.4f s against bpe-encode %.4f s: %.2fx (target >= 10x)",
			    n2, b2, b2 > 0 ? n2 / b2 : 0)
		}
		print line
		line = sprintf("    runs on a free core: %d of %d for WASM", nw, NR)
		if (enc == "cl100k_base")
			line = line sprintf(", %d for tiktoken-node", nn)
		print line
		line = "    each run, in order: WASM"
		for (r = 1; r <= NR; r++)
			line = line sprintf(" %.2f", cw[r] / cb[r])
		if (enc == "cl100k_base") {
			line = line "; tiktoken-node"
			for (r = 1; r <= NR; r++)
				line = line sprintf(" %.2f", cn[r] / cb[r])
		}
		print line
		b = med(cb, NR)
		line = sprintf("    the medians of all %d runs: WASM %.2fx", NR, med(cw, NR) / b)
		if (enc == "cl100k_base")
			line = line sprintf(", tiktoken-node %.2fx", med(cn, NR) / b)
		print line
		# * beside a busy twin around bpe-encode or WASM; + around
		# bpe-encode or tiktoken-node
		line = sprintf("    coreprobe'"'"'s chains at once around each (free: >= %.2f):", lim)
		for (r = 1; r <= NR; r++) {
			line = line sprintf(" %s/%s/%s", p0[r], p1[r], p2[r])
			if (enc == "cl100k_base")
				line = line "/" p3[r]
			line = line mark[r]
		}
		print line
	}' "$1"
}
# PART=tiktoken-ab OLD=DIR (another build's folder, holding bin/): that
# build's bpe-encode against this one's, one core, CPU seconds, alternating,
# the median of TREPS (3): cl100k_base and o200k_base on the distinct set,
# and GPT-2 (--append-eod) on the shared sample (REPS 5), peak RSS too;
# then the median of the pairs' old/new ratios and their range (the
# host's spells: a pair's two runs see the same one).
if [ "${PART:-all}" = tiktoken-ab ]; then
	[ $ref = 1 ] && [ -x "${OLD:-}/bin/bpe-encode" ] || {
		echo "tiktoken-ab: needs npm and OLD=another build"
		exit 0
	}
	: "${TREPS:=3}"
	echo "load $(cut -d' ' -f1 /proc/loadavg) on $ncpu cores; $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)"
	distinct=${DISTINCT:-$OWT_BUILD/bench/distinct.jsonl}
	[ -s "$distinct" ] || sh "$OWT_SRC/contrib/bench/make-distinct.sh" "$distinct" 20
	# abrun LABEL N ARGS...: old and new alternating, N times each
	abrun() {
		label=$1 n=$2
		shift 2
		: >"$BW/ao"; : >"$BW/an"
		for i in $(seq "$n"); do
			timed "$BW/ao" taskset -c 0 "$OLD/bin/bpe-encode" -q --workers 1 "$@" >"$BW/o.tok"
			timed "$BW/an" taskset -c 0 "$OWT_BUILD/bin/bpe-encode" -q --workers 1 "$@" >"$BW/n.tok"
		done
		cmp -s "$BW/o.tok" "$BW/n.tok" && same="same output" || same="outputs differ"
		echo "  $label: old $(median "$BW/ao" 3) s, $(($(median "$BW/ao" 2) / 1024)) MB; new $(median "$BW/an" 3) s, $(($(median "$BW/an" 2) / 1024)) MB; old/new $(ratio "$(median "$BW/ao" 3)" "$(median "$BW/an" 3)")x ($same)"
		run_ratios "$BW/ao" "$BW/an" | tr ' ' '\n' | sed '/^$/d' | sort -n |
		    awk '{ v[NR] = $1 } END { printf "    the %d pairs: old/new %.3f (median), %.3f-%.3f\n",
		    NR, NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2, v[1], v[NR] }'
	}
	for e in cl100k_base o200k_base; do
		NODE_PATH=$BW/node_modules node "$OWT_SRC/contrib/oracle/tiktoken-ranks.js" $e "$BW"
		abrun "$e" "$TREPS" --tokenizer-type TikTokenizer --tokenizer-model "$BW/$e.tiktoken" "$distinct"
	done
	[ -n "$cold" ] && abrun "GPT-2 --append-eod" "$REPS" --append-eod "$cold"
	exit 0
fi
if [ "${PART:-all}" = tiktoken ]; then
	[ $ref = 1 ] || exit 0
	echo "load $(cut -d' ' -f1 /proc/loadavg) on $ncpu cores; $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)"
	distinct=${DISTINCT:-$OWT_BUILD/bench/distinct.jsonl}
	if [ ! -s "$distinct" ] && [ -z "${DISTINCT:-}" ]; then
		mkdir -p "$(dirname "$distinct")"
		sh "$OWT_SRC/contrib/bench/make-distinct.sh" "$distinct" 20 || :
	fi
	tiktoken_bench "$distinct" "Debian's translations, manual pages and documentation (make-distinct.sh)"
	exit 0
fi

echo "median of $REPS runs, each pair back to back; load $(cut -d' ' -f1 /proc/loadavg) on $ncpu cores; $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)"
echo "MB/s of JSONL input by wall-clock time and by CPU time (user + system)"
# headline FILE WHAT: one core, FILE read once, HREPS runs alternating.
headline() {
	hb=$(wc -c <"$1")
	ht=$(bpe-encode "$1" 2>&1 >/dev/null | sed -n 's/.* documents, \([0-9]*\) tokens.*/\1/p')
	: >"$BW/hb"; : >"$BW/hn"; : >"$BW/hw"
	for i in $(seq "$HREPS"); do
		timed "$BW/hb" taskset -c 0 bpe-encode -q --workers 1 "$1" >/dev/null
		timed "$BW/hn" taskset -c 0 $node_ref node "$1" "$BW/hn.count"
		timed "$BW/hw" taskset -c 0 $node_ref wasm "$1" "$BW/hw.count"
	done
	echo "HEADLINE: one core (taskset -c 0), distinct text read once, start-up included: $2, $hb bytes, $ht tokens; median of $HREPS alternating runs"
	bytes=$hb tokens=$ht
	report "bpe-encode --workers 1" "$BW/hb"
	report "tiktoken-node 0.0.7 encode" "$BW/hn"
	report "tiktoken 1.0.22 (WASM) encode_ordinary" "$BW/hw"
	[ "$(cat "$BW/hn.count")" = "$ht" ] && [ "$(cat "$BW/hw.count")" = "$ht" ] &&
	    echo "  token counts agree: $ht" || echo "  TOKEN COUNTS DIFFER"
	echo "  bpe-encode / tiktoken-node: $(ratios "$BW/hb" "$BW/hn") (target >= 15x, aim 20x: issue 17)"
	echo "  bpe-encode / tiktoken WASM: $(ratios "$BW/hb" "$BW/hw")"
}

if [ $ref = 1 ]; then
	all_bytes=$bytes all_tokens=$tokens
	[ -n "$cold" ] && headline "$cold" "shared/data/corpus-sample.jsonl"
	distinct=${DISTINCT:-$OWT_BUILD/bench/distinct.jsonl}
	if [ ! -s "$distinct" ] && [ -z "${DISTINCT:-}" ]; then
		mkdir -p "$(dirname "$distinct")"
		sh "$OWT_SRC/contrib/bench/make-distinct.sh" "$distinct" 20 || :
	fi
	if [ -s "$distinct" ]; then
		headline "$distinct" "Debian's translations, manual pages and documentation (make-distinct.sh)"
	else
		echo "(no distinct multilingual set: make-distinct.sh failed)"
	fi
	bytes=$all_bytes tokens=$all_tokens
fi
echo "one core, repeated text ($src, $bytes bytes, $tokens tokens; copies 2.. hit the piece cache, not the headline):"
for i in $(seq "$REPS"); do
	timed "$BW/b1" taskset -c 0 bpe-encode -q --workers 1 "$in" >/dev/null
	[ $ref = 1 ] || continue
	timed "$BW/n1" taskset -c 0 $node_ref node "$in" "$BW/n1.count"
	timed "$BW/w1" taskset -c 0 $node_ref wasm "$in" "$BW/w1.count"
done
report "bpe-encode --workers 1" "$BW/b1"
if [ $ref = 1 ]; then
	report "tiktoken-node 0.0.7 encode" "$BW/n1"
	report "tiktoken 1.0.22 (WASM) encode_ordinary" "$BW/w1"
	[ "$(cat "$BW/n1.count")" = "$tokens" ] && [ "$(cat "$BW/w1.count")" = "$tokens" ] &&
	    echo "  token counts agree: $tokens" || echo "  TOKEN COUNTS DIFFER"
	echo "  bpe-encode / tiktoken-node: $(ratios "$BW/b1" "$BW/n1")"
	echo "  bpe-encode / tiktoken WASM: $(ratios "$BW/b1" "$BW/w1")"
fi

echo "all $ncpu cores:"
if [ $ref = 1 ]; then
	# tiktoken-node encodes on one thread (encodeBatch too): one process a shard.
	split -n "l/$ncpu" "$in" "$BW/shard."
	cat >"$BW/shards.sh" <<EOF
for f in $BW/shard.??; do $node_ref node \$f \$f.count & done
wait
EOF
fi
for i in $(seq "$REPS"); do
	timed "$BW/bn" bpe-encode -q --workers "$ncpu" "$in" >/dev/null
	[ $ref = 1 ] && timed "$BW/nn" sh "$BW/shards.sh"
done
report "bpe-encode --workers $ncpu" "$BW/bn"
if [ $ref = 1 ]; then
	report "tiktoken-node, $ncpu processes" "$BW/nn"
	echo "  bpe-encode / tiktoken-node: $(ratios "$BW/bn" "$BW/nn")"
fi

# 1 -> 2 workers, unpinned, several times. The machine is shared, so each
# pair is run back to back, beside the same pair for a job that is
# perfectly parallel (sha256sum of the input, one and two at once): what
# the machine gave at that moment.
if [ "$ncpu" -ge 2 ]; then
	: >"$BW/scale"
	: >"$BW/par"
	for i in $(seq $((REPS * 2))); do
		: >"$BW/s1"; : >"$BW/s2"; : >"$BW/h1"; : >"$BW/h2"
		timed "$BW/s1" bpe-encode -q --workers 1 "$in" >/dev/null
		timed "$BW/s2" bpe-encode -q --workers 2 "$in" >/dev/null
		timed "$BW/h1" sha256sum "$in" "$in" >/dev/null
		timed "$BW/h2" sh -c "sha256sum '$in' >/dev/null & sha256sum '$in' >/dev/null; wait"
		echo "$(ratio "$(cut -d' ' -f1 "$BW/s1")" "$(cut -d' ' -f1 "$BW/s2")")" >>"$BW/scale"
		echo "$(ratio "$(cut -d' ' -f1 "$BW/h1")" "$(cut -d' ' -f1 "$BW/h2")")" >>"$BW/par"
	done
	echo "scaling, --workers 1 -> 2 (each pair back to back): $(tr '\n' ' ' <"$BW/scale")"
	echo "  median $(median "$BW/scale" 1)x (target >= 1.8x)"
	echo "the same for two sha256sum at once, the machine's share:  $(tr '\n' ' ' <"$BW/par")"
	echo "  median $(median "$BW/par" 1)x"
fi

# Pieces without white space: 1 MB of input each, as 100 x 10 KB, 10 x
# 100 KB and 1 x 1 MB documents of random letters; tiktoken is quadratic
# in a piece's length, so it gets the 10 KB pieces and one 100 KB piece.
pieces() {	# pieces N SIZE FILE
	perl -e 'srand(7); for (1 .. $ARGV[0]) { print "{\"text\":\"", join("", map { chr(97 + int rand 26) } 1 .. $ARGV[1]), "\"}\n" }' "$@"
}
[ $ref = 1 ] && [ -s "${distinct:-}" ] &&
    tiktoken_bench "$distinct" "Debian's translations, manual pages and documentation (make-distinct.sh)"

echo "one piece without white space (random a-z), seconds per MB, one core:"
for spec in "100 10240" "10 102400" "1 1048576"; do
	set -- $spec
	pieces "$1" "$2" >"$BW/p.jsonl"
	: >"$BW/pb"
	for i in $(seq "$REPS"); do
		timed "$BW/pb" taskset -c 0 bpe-encode -q --workers 1 "$BW/p.jsonl" >/dev/null
	done
	t=$(median "$BW/pb" 1)
	line=$(printf '  %4s KB pieces: bpe-encode %s s/MB, %s MB RSS' "$(($2 / 1024))" \
	    "$(awk -v t="$t" -v b="$(($1 * $2))" 'BEGIN { printf "%.3f", t / (b / 1048576) }')" \
	    "$(($(median "$BW/pb" 2) / 1024))")
	if [ $ref = 1 ] && [ "$2" -le 102400 ]; then
		n=$(( $1 > 10 ? 10 : 1 ))
		pieces "$n" "$2" >"$BW/pn.jsonl"
		: >"$BW/pn"
		timed "$BW/pn" taskset -c 0 $node_ref node "$BW/pn.jsonl" "$BW/pn.count"
		t=$(cut -d' ' -f1 "$BW/pn")
		line="$line; tiktoken-node $(awk -v t="$t" -v b="$((n * $2))" 'BEGIN { printf "%.3f", t / (b / 1048576) }') s/MB ($n pieces, one run)"
	fi
	echo "$line"
done
