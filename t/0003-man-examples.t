#!/bin/sh
# Every example in the EXAMPLES section of a man page, and owt(7)'s
# pipeline, runs as a user would type it, in a scratch folder on small
# data: it exits 0, and where its page states a result (an output, what a
# file holds afterwards) the result is checked. An example that cannot run here is listed below with its
# reason (notrun), and its options are still checked against the
# program's -h. An example neither run nor listed fails, and so does an
# entry here that names no example: the pages cannot drift from the code.
#
# How the examples meet this machine, without their text changing:
# - owt-fetch is a wrapper ($T/bin) that adds --allow-private --delay 0,
#   so that a crawl may reach t/httpd on loopback at once; urls.txt names
#   t/httpd's pages.
# - "..." in an example stands for "the options as before": it is
#   replaced by the tiny model's options (see $tiny).
# - the small-model example runs 2 iterations of its 500 (an edit given
#   to ex below).
# - owt(7) and owt-tok(5) write data/owt without saying to make data/
#   first, as the other pages do: data/ is made for them.
. "${OWT_SRC:-.}/t/lib.sh"
. "$OWT_SRC/t/httpd.sh"
tiny=

command -v bash >/dev/null || skip_all "no bash (the examples run with pipefail)"
py=/usr/bin/python3
[ -x "$py" ] || skip_all "no /usr/bin/python3 (the JSON checks)"

# Each example block (.Bd -literal ... .Ed, or .Dl) of an EXAMPLES section,
# of the Examples of a SERVING section, and each of owt.7 (its commands), into $T/ex/PAGE.N, unescaped;
# $T/ex/index has "PAGE<tab>N<tab>first line" (a "$ " prompt left out).
mkdir "$T/ex" "$T/bin" "$T/w"
: >"$T/ex/seen"
for page in "$OWT_SRC"/man/*.[157]; do
	awk -v dir="$T/ex" -v name="${page##*/}" '
	function unesc(s,   out, i, c, e) {
		out = ""
		while ((i = index(s, "\\")) > 0) {
			out = out substr(s, 1, i - 1)
			c = substr(s, i + 1, 1)
			s = substr(s, i + 2)
			if (c == "e")
				out = out "\\"
			else if (c == "-")
				out = out "-"
			else if (c == "(") {
				e = substr(s, 1, 2)
				s = substr(s, 3)
				out = out (e == "dq" ? "\"" : e == "aq" ? "\047" : "\\(" e)
			} else if (c != "&")
				out = out "\\" c
		}
		return out s
	}
	function start() {
		n++
		f = dir "/" name "." n
		first = 1
	}
	function line(s) {
		s = unesc(s)
		print s >f
		if (first) {
			sub(/^\$ /, "", s)
			printf "%s\t%d\t%s\n", name, n, s >>(dir "/index")
			first = 0
		}
	}
	/^\.Sh / { on = $0 == ".Sh EXAMPLES" || name == "owt.7"
		serving = $0 == ".Sh SERVING"; next }
	serving && /^\.Ss / { on = $0 == ".Ss Examples"; next }
	!on { next }
	/^\.Bd -literal/ { start(); lit = 1; next }
	/^\.Ed/ { lit = 0; close(f); next }
	lit { line($0); next }
	/^\.Dl / { start(); line(substr($0, 5)); close(f) }
	' "$page"
done

# The options an example gives owt's programs: "PROG --opt" lines.
ex_opts() {
	sed 's/^\$ //' "$1" | awk '
	{ s = s $0 "\n" }
	END {
		gsub(/\\\n/, " ", s)
		gsub(/\|\||&&|[|;\n]/, "\n", s)
		n = split(s, seg, "\n")
		for (i = 1; i <= n; i++) {
			k = split(seg[i], w, /[ \t]+/)
			j = 1
			while (j <= k && (w[j] == "" || w[j] ~ /^[A-Za-z_]+=/))
				j++
			for (m = j + 1; m <= k; m++)
				if (w[m] ~ /^--?[A-Za-z]/) {
					sub(/=.*/, "", w[m])
					print w[j], w[m]
				}
		}
	}'
}

# The options -h lists (as t/0001-docs.t reads them).
help_opts() {
	"$OWT_BUILD/bin/$1" -h 2>/dev/null | sed -n 's/^  *\(-[^ ].*\)$/\1/p' |
	    sed 's/   *.*//' | tr ', ' '\n\n' | grep -E '^--?[A-Za-z0-9]' | sort -u
}

# check_opts DESC: every option the example gives an owt program is one
# that program has.
check_opts() {
	ex_opts "$f" | while read -r prog opt; do
		[ -x "$OWT_BUILD/bin/$prog" ] || continue
		help_opts "$prog" | grep -qxF -- "$opt" ||
		    echo "$prog has no option $opt"
	done >"$T/badopts"
	if [ -s "$T/badopts" ]; then
		not_ok "$1: its options exist"
		sed 's/^/# /' "$T/badopts"
	else
		ok "$1: its options exist"
	fi
}

# find_ex PAGE LINE: $f, the example of man/PAGE whose first line is LINE,
# marked as seen; $T/cmd its commands, $T/want the output it states
# (the lines of a "$ " block that are not commands). Fails when none.
find_ex() {
	n=$(P=$1 L=$2 awk -F '\t' '$1 == ENVIRON["P"] && $3 == ENVIRON["L"] { print $2; exit }' \
	    "$T/ex/index")
	if [ -z "$n" ]; then
		not_ok "man/$1 has an example beginning '$2'"
		return 1
	fi
	echo "$1	$n" >>"$T/ex/seen"
	f=$T/ex/$1.$n
	: >"$T/want"
	if grep -q '^\$ ' "$f"; then
		awk -v cmd="$T/cmd" -v want="$T/want" '
		/^\$ / { print substr($0, 3) >cmd; c = /[\\|]$/; next }
		c { print >cmd; c = /[\\|]$/; next }
		{ print >want }' "$f"
	else
		cp "$f" "$T/cmd"
	fi
}

# ex PAGE LINE [SED]: run that example (SED applied, "..." replaced) in
# $wd with bash -e -o pipefail (EX_NOE=1: without -e, for an example that
# shows a failing stage and then echo $?); stdout in $T/out, stderr in
# $T/err. One test: it exits 0.
ex() {
	find_ex "$1" "$2" || return
	what="$1: $(grep -v '^mkdir ' "$T/cmd" | head -n 1 |
	    sed 's/\\n/ /g; s/\\//g; s/ *|* *$//')"
	[ $# -lt 3 ] || sed -i -e "$3" "$T/cmd"
	sed -i "s/\.\.\.\$/$tiny/" "$T/cmd"
	e=-e
	[ -z "${EX_NOE:-}" ] || e=+e
	(cd "$wd" && bash $e -o pipefail "$T/cmd") >"$T/out" 2>"$T/err"
	rc=$?
	is "$rc" 0 "$what: exits 0"
	[ "$rc" -eq 0 ] || sed "s/^/# /" "$T/err" | tail -n 10
}

# shown exact|form: what the example shows (stdout, then stderr) is the
# output its page states, byte for byte, or (form) with numbers masked.
shown() {
	cat "$T/out" "$T/err" >"$T/shown"
	if [ "$1" = form ]; then
		sed -E -i 's/[0-9]+(\.[0-9]+)?/N/g' "$T/shown" "$T/want"
	fi
	[ -s "$T/want" ] || not_ok "$what: its page states an output"
	same "$T/shown" "$T/want" "$what: shows what its page states ($1)"
}

# notrun PAGE LINE REASON: listed, not run; its options are checked.
notrun() {
	find_ex "$1" "$2" || return
	check_opts "$1: $2 (not run: $3)"
}

# field FILE KEY: each record's KEY, one a line: JSON text, or for a long
# one its length and hash (short lines in a diff).
field() {
	"$py" -c '
import hashlib, json, sys
for l in open(sys.argv[1]):
    if not l.startswith("{"):
        continue
    v = json.dumps(json.loads(l).get(sys.argv[2]))
    if len(v) > 60:
        v = "%s... (%d, %s)" % (v[:40], len(v), hashlib.sha1(v.encode()).hexdigest()[:12])
    print(v)
' "$1" "$2"
}

# The machine: owt-fetch allowed onto loopback, without the politeness delay.
cat >"$T/bin/owt-fetch" <<EOF
#!/bin/sh
exec "$OWT_BUILD/bin/owt-fetch" --allow-private --delay 0 "\$@"
EOF
chmod +x "$T/bin/owt-fetch"
PATH=$T/bin:$PATH
export PATH

# The data: three speeches and what a crawl also brings (a near copy of
# address-03 among it), as a scrape directory.
data=$OWT_SRC/contrib/demo/data
wd=$T/w
cd "$wd" || exit 3
mkdir scraped
cp "$data"/speeches/address-0[123].txt "$data/crawl-extra.jsonl" scraped/

# --- jsonl-merge(1), owt-dedup(1): merge and clean.
ex jsonl-merge.1 'jsonl-merge --add-id owt scraped/ > merged.jsonl'
is "$(field merged.jsonl adlr_id | tr -d '"' | tr '\n' ' ')" \
    "owt-0000000001 owt-0000000002 owt-0000000003 owt-0000000004 owt-0000000005 owt-0000000006 owt-0000000007 " \
    "merged.jsonl: every document, each with its adlr_id"

ex owt-dedup.1 'owt-dedup --report clean.report merged.jsonl > clean.jsonl'
is "$(wc -l <clean.jsonl) $(wc -l <clean.report)" "4 4" \
    "clean.jsonl keeps 4 of the 7; clean.report has the 3 dropped and 1 fixed"
ex owt-dedup.1 "grep -o '\"stage\":\"[^\"]*\",\"reason\":\"[^\"]*\"' clean.report |"
cat >want <<'EOF'
      1 "stage":"fix","reason":"fixed"
      1 "stage":"lang","reason":"other language"
      1 "stage":"length","reason":"too short"
      1 "stage":"near","reason":"near duplicate"
EOF
same "$T/out" want "the decisions counted: the fix, the other language, the short text, the near copy"

# decontam: a LAMBADA text that is a passage of a kept document.
"$py" -c '
import json, sys
t = json.loads(open("clean.jsonl").readline())["text"].split()
print(json.dumps({"text": " ".join(t[40:80])}))
' >lambada.jsonl
ex owt-dedup.1 'owt-dedup --stages decontam --decontam lambada.jsonl clean.jsonl > final.jsonl'
"$py" -c '
import json, sys
bad = json.loads(open("lambada.jsonl").readline())["text"].split()[5:18]
kept = " ".join(" ".join(json.loads(l)["text"].split()) for l in open("final.jsonl"))
sys.exit(" ".join(bad) in kept)
' && ok "final.jsonl no longer holds a 13-word passage of the LAMBADA text" ||
    not_ok "final.jsonl no longer holds a 13-word passage of the LAMBADA text"

ex owt-dedup.1 'mkdir -p data'
idx-pack --info data/owt >"$T/out"
like "$T/out" '"documents":6,' "data/owt: of the 7 documents, only the near copy went"

# --- the shuffled, tokenized, packed corpus (three pages show it).
for p in jsonl-merge.1 bpe-encode.1 idx-pack.1; do
	rm -r data
	ex $p 'mkdir -p data'
	run idx-pack --check data/owt
	like "$T/out" ': ok: 4 sequences, 4 documents' "$p: data/owt holds the 4 clean documents"
done

mkdir shards
head -n 2 merged.jsonl >shards/a.jsonl
tail -n 5 merged.jsonl >shards/b.jsonl
ex jsonl-merge.1 'jsonl-merge shards/ > all.jsonl'
same all.jsonl merged.jsonl "the shards in name order give merged.jsonl back"
rm -r shards

# --- bpe-encode(1), owt-tok(5).
ex bpe-encode.1 'bpe-encode clean.jsonl > /dev/null'
shown form
bpe-encode -q clean.jsonl >data.tok
ex bpe-encode.1 'bpe-encode -d data.tok | head -n 3'
field "$T/out" text >got
head -n 3 clean.jsonl >want.jsonl
field want.jsonl text >want
same got want "the first 3 documents' text"
ex bpe-encode.1 "printf '{\"text\":\"Hello world\"}\\n' | bpe-encode -q | od -An -tu2 -j20 -N4"
shown exact
ex owt-tok.5 "printf '{\"text\":\"Hello world\"}\\n' | bpe-encode -q --append-eod | od -An -tx1"
shown exact

head -n 2 merged.jsonl >a.jsonl
tail -n 3 merged.jsonl >b.jsonl
rm -f data/owt.bin data/owt.idx
ex owt-tok.5 'bpe-encode --append-eod a.jsonl > a.tok'
run idx-pack --check data/owt
like "$T/out" ': ok: 5 sequences, 5 documents' "the joined streams hold both shards' documents"

# --- idx-pack(1): look at a dataset, pack and merge shards.
# A dead writer: no dataset is published (the page's "..." is yajl's words).
printf '{"text":"Hello world"}\n{"text":\n' >bad.jsonl
mv data/owt.bin data/owt.bin.keep && mv data/owt.idx data/owt.idx.keep
EX_NOE=1 ex owt-tok.5 'bpe-encode bad.jsonl | idx-pack -o data/owt; echo $?'
is "$(cat "$T/out")" 1 "$what: idx-pack's status is 1"
like "$T/err" '^bpe-encode: bad\.jsonl:2: invalid JSON: ' "$what: bpe-encode names the bad line"
is "$(grep '^idx-pack: ' "$T/err")" "$(sed -n 2p "$T/want")" "$what: idx-pack's message is the page's"
[ ! -e data/owt.bin ] && [ ! -e data/owt.idx ] && [ -z "$(ls data | grep tmp)" ] &&
    ok "$what: nothing published" || not_ok "$what: nothing published"
mv data/owt.bin.keep data/owt.bin && mv data/owt.idx.keep data/owt.idx

ex idx-pack.1 'idx-pack --info data/owt'
like "$T/out" '"documents":5,' "--info counts the documents"
grep '^{"text"' "$T/out" >cat.jsonl
field cat.jsonl text >got
head -n 2 a.jsonl | cat - b.jsonl | head -n 2 >want.jsonl
field want.jsonl text >want
same got want "the first two documents' text"
# Another machine's shard is there; this machine has no data/ yet.
rm -r data
mkdir shards
bpe-encode -q --append-eod a.jsonl | idx-pack -q -o shards/owt-00
tail -n 3 merged.jsonl >part-03.jsonl
ex idx-pack.1 'mkdir -p shards data'
like "$T/out" ': ok: 5 sequences, 5 documents' "--check: the merged shards hold every document"

# --- owt-fetch(1): a crawl of t/httpd on loopback.
mkdir www
for i in 1 2 3 4; do
	{
		echo "<html><head><title>Address $i</title></head><body><div class=\"nav\"><a href=\"/\">Home</a></div><article>"
		sed -n 's/^\(..*\)$/<p>\1<\/p>/p' "$data/speeches/address-0$i.txt" | head -n 12
		echo "</article></body></html>"
	} >www/address-$i.html
done
httpd_start www
printf '%s\n' "$B/address-1.html" "$B/address-2.html" "$B/address-3.html" \
    "$B/missing.html" "https://www.youtube.com/watch?v=x" >urls.txt
rm -f pages.jsonl
ex owt-fetch.1 'owt-fetch --log crawl.log --html-dir html < urls.txt > pages.jsonl'
is "$(wc -l <pages.jsonl) $(wc -l <crawl.log) $(ls html | wc -l)" "3 5 3" \
    "3 pages written, 5 outcomes logged, 3 pages kept"
field pages.jsonl title | sort | tr '\n' ' ' >got
is "$(cat got)" '"Address 1" "Address 2" "Address 3" ' "the pages' titles"
echo "$B/address-4.html" >>urls.txt
: >"$T/req.log"
ex owt-fetch.1 'owt-fetch --resume crawl.log --log crawl.log --html-dir html \'
is "$(wc -l <pages.jsonl) $(wc -l <crawl.log)" "4 6" "--resume fetches exactly the rest: one page more"
is "$(grep -c 'address-[123]' "$T/req.log")" 0 "and asks for none of the others again"
ex owt-fetch.1 'grep '"'"'"outcome":"ok"'"'"' crawl.log | owt-fetch --extract > pages2.jsonl'
field pages.jsonl text | sort >want
field pages2.jsonl text | sort >got
same got want "--extract on the saved pages gives the crawl's texts"
for i in 0 1 2 3 4 5 6 7; do
	echo "{\"id\": $i, \"url\": \"http://site$i.example.org/story-$i\", \"score\": 3}"
done | sed 's|site6.example.org/story-6|www.youtube.com/watch?v=6|' | gzip >submissions.jsonl.gz
ex owt-fetch.1 'owt-fetch --filter-only --shard 2/4 submissions.jsonl.gz > part2.jsonl'
zcat submissions.jsonl.gz | sed -n 3p >want
same part2.jsonl want "shard 2/4: of lines 2 and 6, the one that passes the filter, unchanged"
rm -f crawl.log pages.jsonl pages2.jsonl
ex owt-fetch.1 'owt-fetch --warc-file crawl --log crawl.log < urls.txt > pages.jsonl'
field pages.jsonl text | sort >want
field pages2.jsonl text | sort >got
is "$(wc -l <pages2.jsonl)" 4 "the crawl's four pages from its WARC archive"
same got want "--extract on the crawl's WARC archive gives the crawl's texts"
rm -f crawl.log pages.jsonl crawl.warc.gz
ex owt-fetch.1 'owt-fetch --warc-file crawl --warc-max-size 1G --warc-cdx \'
is "$(ls crawl-*.warc.gz crawl.cdx | tr '\n' ' ')" \
    "crawl-00000.warc.gz crawl-00001.warc.gz crawl.cdx " \
    "the crawl's file, the resumed run's, the CDX"
is "$(awk 'NR > 1 && $5 == 200' crawl.cdx | wc -l | tr -d ' ')" 4 \
    "the CDX indexes the four pages once: the resumed run fetched none again"
notrun owt-fetch.1 'wget -r --warc-file=site https://example.org/' \
    "a site on the network: t/1007-owt-fetch-wget-warc.t runs wget's crawl and --extract on loopback"
notrun owt-fetch.1 "curl -s 'https://index.commoncrawl.org/CC-MAIN-2024-33-index?url=example.com/&output=json' |" \
    "Common Crawl's index and archives on the network: t/1012-owt-fetch-warc-index.t fetches records by index from a loopback nginx"
httpd_stop

# bpe-encode(1) on the crawl's pages, with Megatron-LM's vocabulary files.
cp "$OWT_SRC/data/gpt2/encoder.json" gpt2-vocab.json
cp "$OWT_SRC/data/gpt2/vocab.bpe" gpt2-merges.txt
ex bpe-encode.1 'bpe-encode --json-keys title,text --vocab-file gpt2-vocab.json \'
bpe-encode -q --json-keys title,text --append-eod pages.jsonl >want.tok
same pages.tok want.tok "Megatron-LM's vocabulary files give the bundled vocabulary's tokens"
bpe-encode -q --append-eod pages.jsonl >text.tok
cmp -s pages.tok text.tok && not_ok "the titles are tokenized too" ||
    ok "the titles are tokenized too"
jsonl-merge -q --shuffle --seed 1 clean.jsonl >shuffled.jsonl
ex bpe-encode.1 'bpe-encode --input shuffled.jsonl --output-prefix data/owt \'
bpe-encode -q --append-eod shuffled.jsonl | idx-pack -qf -o want
cmp -s want.idx data/owt_text_document.idx && cmp -s want.bin data/owt_text_document.bin &&
    ok "preprocess_data.py's flags write data/owt_text_document as bpe-encode | idx-pack" ||
    not_ok "preprocess_data.py's flags write data/owt_text_document as bpe-encode | idx-pack"

# --- gpt-train(1), gpt-sample(1): a tiny model on data/owt.
tiny="--num-layers 1 --hidden-size 32 --num-attention-heads 2 --seq-length 16 --max-position-embeddings 128 --micro-batch-size 2 --eval-iters 0 --workers 1 -q"
rm -f data/owt.bin data/owt.idx
jsonl-merge -q --shuffle --seed 1 clean.jsonl | bpe-encode -q --append-eod | idx-pack -q -o data/owt
ex gpt-train.1 'gpt-train --data-path data/owt --num-layers 4 --hidden-size 128 \' \
    's/--train-iters 500/--train-iters 2/'
gpt-train --data-path data/owt $tiny --train-iters 2 --save ckpt
tiny="$tiny --train-iters 4"
ex gpt-train.1 'gpt-train --load ckpt --data-path data/owt --save ckpt ...'
is "$(cat ckpt/latest_checkpointed_iteration.txt)" 4 "the run continues from iteration 2 to 4"
cp -R ckpt/iter_0000004 gpt2
cp data/owt.bin data/mine.bin && cp data/owt.idx data/mine.idx
tiny="--seq-length 16 --micro-batch-size 2 --train-iters 2 --eval-iters 0 --workers 1 -q --save ft"
ex gpt-train.1 'gpt-train --load gpt2 --finetune --data-path data/mine --lr 1e-4 ...'
is "$(cat ft/latest_checkpointed_iteration.txt)" 2 "fine-tuning counts from iteration 0: 2 done"
notrun bpe-encode.1 'bpe-encode --tokenizer-type TikTokenizer \' \
    "needs OpenAI's rank file; t/4005-bpe-tiktoken.t makes it from npm tiktoken's and runs these flags"
notrun bpe-encode.1 'bpe-encode --tokenizer-type HuggingFaceTokenizer \' \
    "needs a model's tokenizer.json; t/4011-bpe-hf.t builds Llama-3-style ones and runs these flags"
notrun gpt-train.1 'gpt-train --data-path data/owt --train-iters 20000 \' \
    "GPT-2 124M for 20000 iterations: days on a CPU"
notrun gpt-train.1 'gpt-train --data-path data/owt --hidden-dropout 0 \' \
    "the same nanoGPT-style: days on a CPU"
notrun gpt-train.1 'gpt-train --num-layers 12 --hidden-size 768 \' \
    "Megatron's single-GPU line: t/6008-megatron-scripts.t runs it, sizes shrunk"
notrun gpt-train.1 'GPT2LMHeadModel.from_pretrained("ckpt/iter_0020000")' \
    "Python with Hugging Face transformers (t/6004-gpt-hf.t loads a checkpoint so)"

ex gpt-sample.1 "printf 'The meaning of life is\\nIn the beginning\\n' |"
[ "$(wc -l <"$T/out")" -ge 2 ] && ok "a line of text (or more) for each prompt" ||
    not_ok "a line of text (or more) for each prompt"
printf '{"prompt": "The meaning of life is"}\n{"prompt": "In the beginning", "id": 2}\n' >prompts.jsonl
ex gpt-sample.1 'gpt-sample --load gpt2 --greedy --sample-input-file prompts.jsonl \'
field out.jsonl prompt >got
field prompts.jsonl prompt >want
same got want "a record out for each record in"
printf '{"text": "%s"}\n' "And the king said unto him." "In the beginning was the word." \
    "We the people of the United States." >valid.jsonl
ex gpt-sample.1 'gpt-sample --load ckpt --score --sample-input-file valid.jsonl >scored.jsonl'
is "$(grep -c '"ppl":[0-9]' scored.jsonl)" 3 "each document scored"

# --- gpt-sample(1)'s SERVING: a server on a free port (the page's 8000),
# a request of each protocol, SIGTERM.
port=$("$py" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
ex gpt-sample.1 'gpt-sample --load ckpt --listen 8000 --log-json requests.jsonl &' \
    "s/8000/$port/g"
is "$(grep -c '^{"id":"cmpl-' "$T/out") $(grep -c '^data: {"id":"cmpl-' "$T/out" | sed 's/^[1-9][0-9]*$/some/') $(grep -c '^{"text":\["In the beginning' "$T/out") $(grep -c '^data: {"model_name":"ckpt","model_version":"1","text_output":"In the beginning"}$' "$T/out") $(grep -c '"outputs":\[{"name":"text_output","datatype":"BYTES","shape":\[1\],"data":\["In the beginning' "$T/out")" \
    "1 some 1 1 1" "OpenAI's answer and stream, Megatron's answer, Triton's stream (the prompt first) and infer"
like "$T/out" '^\{"model_name":"ckpt","model_version":"1","text_output":"In the beginning' \
    "generate: text_output holds the prompt, then the text"
like "$T/out" '^owt_requests_total\{path="/v2/models/\{name\}/infer",status="200"\} 1$' \
    "/metrics counts the infer request by its path"
is "$(grep -c '"status": 200' requests.jsonl)" 8 \
    "--log-json: a line for each request answered 200: ready, 6 generations, /metrics"
notrun gpt-sample.1 'python3 tools/text_generation_cli.py localhost:8000' \
    "Megatron-LM's tools/; t/7004-serve-megatron.t sends its CLI's requests with python3-requests"
# --- owt(7): web archives, on the network.
notrun owt.7 'idx=https://index.commoncrawl.org/CC-MAIN-2024-33-index' \
    "Common Crawl's index and archives on the network: t/1012-owt-fetch-warc-index.t fetches records by CDX, CDXJ and JSON rows from a loopback nginx"
notrun owt.7 'wget -r --warc-file=site --warc-cdx https://example.org/' \
    "a site on the network: t/1012-owt-fetch-warc-index.t runs wget's crawl, its CDX and nginx on loopback"

# --- owt(7): the dataset recipe, run by t/8003-owt-mk.t on loopback pages.
notrun owt.7 'make -f /usr/local/share/owt/owt.mk URLS=urls OUT=data SHARDS=64 \' \
    "t/8003-owt-mk.t runs owt.mk"
notrun owt.7 'cd /work' "needs Slurm; t/8003-owt-mk.t checks the job files"
notrun owt.7 'mk="make -f /usr/local/share/owt/owt.mk URLS=urls OUT=data SHARDS=64 NAME=my-gpt2"' \
    "needs ssh to other machines; t/8003-owt-mk.t runs the steps one by one"
notrun owt.7 '0 2 * * * cd /srv/owt && make -f /usr/local/share/owt/owt.mk URLS=urls OUT=data SHARDS=8 NAME=owt -j8 >>build.log 2>&1 || echo "owt: dataset not complete, see /srv/owt/build.log"' \
    "a crontab line"
notrun owt.7 '# /etc/systemd/system/owt-gpt2.service' \
    "a systemd unit: t/7009-serve-deploy.t checks it with systemd-analyze verify"
notrun owt.7 'upstream owt_gpt2 {' \
    "nginx's configuration: t/7009-serve-deploy.t runs nginx with it in front of gpt-sample"

# --- owt(7): the whole pipeline, in a folder of its own.
mkdir -p p7/scraped p7/www p7/data
cd p7 || exit 3
wd=$PWD
cp ../www/address-[12].html www/
cp "$data"/speeches/address-0[45].txt scraped/
cp "$data/crawl-extra.jsonl" more.jsonl
httpd_start www
printf '%s\n' "$B/address-1.html" "$B/address-2.html" >urls.txt
printf 'In the beginning\nWe the people\n' >prompts.txt
tiny="--num-layers 1 --hidden-size 32 --num-attention-heads 2 --seq-length 16 --max-position-embeddings 64 --micro-batch-size 2 --train-iters 2 --eval-iters 0 --workers 1 -q"
ex owt.7 'owt-fetch  < urls.txt          > pages.jsonl'
is "$(wc -l <pages.jsonl) $(cat ckpt/latest_checkpointed_iteration.txt)" "2 2" \
    "the pipeline: 2 pages fetched, a model trained and saved"
is "$(idx-pack --info data/owt | sed 's/.*"documents":\([0-9]*\),.*/\1/')" "$(wc -l <clean.jsonl)" \
    "the dataset holds the clean documents"
[ "$(wc -l <"$T/out")" -ge 2 ] && ok "a sample for each prompt" || not_ok "a sample for each prompt"
httpd_stop
cd .. || exit 3

# Every example was run or listed.
awk -F '\t' 'NR == FNR { seen[$1 "\t" $2] = 1; next }
    !seen[$1 "\t" $2] { print "# neither run nor listed: " $1 ": " $3 }' \
    "$T/ex/seen" "$T/ex/index" >"$T/unseen"
[ -s "$T/unseen" ] && { not_ok "every example of every page is run or listed here";
    cat "$T/unseen"; } || ok "every example of every page is run or listed here"
done_testing
