#!/bin/sh
# owt-dedup on small fixtures: every stage alone and all together against
# expected bytes, the report, the summary, the same output with any number
# of workers, decontamination against filter_ngrams.py's output, and every
# bad-input path with its exit status and message.
. "${OWT_SRC:-.}/t/lib.sh"

D=$OWT_SRC/t/data
cd "$T" || exit 3
cp "$D/dedup-mix.jsonl" mix.jsonl

# t/data/dedup-mix.jsonl, one document a line:
#  1 e1 English          5 e1-copy: e1 respaced     9 b1 site header+footer
#  2 m1 mojibake, CRLF   6 e2: e1's URL              10 b2 same header+footer
#  3 g1 German           7 e3 English               11 n1 no letters
#  4 f1 French           8 e3-near: e3, 2 edits     12 s1 53 characters
# (b1 and b2 are different articles that share a site header and footer.)
fixed() {
	printf '{"id": "m1", "url": "https://example.org/cafe", "text": "The caf\303\251 on the corner serves the best croissants in town \342\200\224 ask anyone who lives nearby. Prices are fair, the staff are friendly and the coffee is strong enough to wake the dead.\\nOpen daily."}\n'
}
F='"file":"mix.jsonl"'

run owt-dedup --min-tokens 20 --report rep.jsonl mix.jsonl
is "$rc" 0 "all stages: exit 0"
{ sed -n 1p mix.jsonl; fixed; sed -n '7p;9,10p' mix.jsonl; } >want
same want out "all stages: five documents kept, other fields byte for byte"
cat >want <<EOF
{$F,"line":2,"id":"m1","url":"https://example.org/cafe","stage":"fix","reason":"fixed","fixes":["fix_encoding","fix_line_breaks"]}
{$F,"line":3,"id":"g1","url":"https://example.de/hafen","stage":"lang","reason":"other language","lang":"de","percent":99}
{$F,"line":4,"id":"f1","url":"https://example.fr/port","stage":"lang","reason":"other language","lang":"fr","percent":99}
{$F,"line":5,"id":"e1-copy","url":"https://mirror.example.org/harbour","stage":"exact","reason":"exact duplicate","kept":"e1","similarity":1.000}
{$F,"line":6,"id":"e2","url":"https://example.org/harbour","stage":"exact","reason":"duplicate url","kept":"e1","similarity":0.004}
{$F,"line":8,"id":"e3-near","url":"https://example.org/garden-2","stage":"near","reason":"near duplicate","kept":"e3","similarity":0.780}
{$F,"line":11,"id":"n1","url":"https://example.org/numbers","stage":"lang","reason":"unknown language","lang":"un","percent":0}
{$F,"line":12,"id":"s1","url":"https://example.org/short","stage":"length","reason":"too short","chars":53,"tokens":10}
EOF
same want rep.jsonl "the report names every changed and dropped document"
like err '^owt-dedup: 12 documents in, 5 out; ' "summary: documents in and out"
like err '^owt-dedup: fixed 1 document: 1 fix_encoding, 1 fix_line_breaks$' \
    "summary: the fixes"
like err '^owt-dedup: dropped: 2 other language, 1 unknown language, 1 too short, 1 exact duplicate, 1 duplicate url, 1 near duplicate$' \
    "summary: every reason counted"
like err '^owt-dedup: index: 5 documents, ' "summary: the index"

# Each stage alone.
run owt-dedup -q --stages fix --report rep.jsonl mix.jsonl
{ sed -n 1p mix.jsonl; fixed; sed -n '3,$p' mix.jsonl; } >want
same want out "fix alone changes only the mojibake"
is "$(wc -l <rep.jsonl)" 1 "fix alone reports one document"
run owt-dedup -q --stages lang mix.jsonl
sed '3,4d;11d' mix.jsonl >want
same want out "lang alone drops German, French and the text without letters"
run owt-dedup -q --stages lang --lang de mix.jsonl
sed -n 3p mix.jsonl >want
same want out "--lang de keeps the German document only"
run owt-dedup -q --stages length --min-chars 100 --min-tokens 0 mix.jsonl
sed '11,12d' mix.jsonl >want
same want out "length alone drops texts under --min-chars"
run owt-dedup -q --stages length --report rep.jsonl mix.jsonl
sed -n '5p;9,10p' mix.jsonl >want
same want out "length alone drops texts of fewer than 128 GPT-2 tokens (e1 has 124, its respaced copy more)"
like rep.jsonl '"id":"e1",.*"reason":"too short","chars":579,"tokens":124}$' \
    "the report gives characters and tokens (EOD included)"
# Megatron's rule: only texts under 8 x --min-tokens characters are counted.
printf '{"text":"international%s"}\n' "$(printf ' international%.0s' 1 2 3 4 5 6 7 8)" >t9.jsonl
printf '{"text":"international%s"}\n' "$(printf ' international%.0s' 1 2 3 4 5 6 7 8 9)" >t10.jsonl
run owt-dedup -q --stages length --min-tokens 16 --report rep.jsonl t9.jsonl t10.jsonl
same t10.jsonl out "139 characters (>= 8 x 16) are never counted: kept with 11 tokens"
printf '{"file":"t9.jsonl","line":1,"stage":"length","reason":"too short","chars":125,"tokens":10}\n' >want
same want rep.jsonl "125 characters are counted: 10 tokens < 16, dropped"
run owt-dedup -q --stages exact mix.jsonl
sed '5,6d' mix.jsonl >want
same want out "exact alone drops the respaced copy and the repeated URL"
run owt-dedup -q --stages near mix.jsonl
sed '5d;8d' mix.jsonl >want
same want out "near alone drops the respaced copy and the near copy"
run owt-dedup -q --stages near --near-threshold 0.8 mix.jsonl
sed '5d' mix.jsonl >want
same want out "--near-threshold 0.8 keeps the near copy (0.780)"
run owt-dedup -q --stages near,exact --seed 99 --report rep.jsonl mix.jsonl
sed '5,6d;8d' mix.jsonl >want
same want out "another --seed finds the same duplicates here"
like rep.jsonl '"id":"e3-near",.*"kept":"e3","similarity":0\.[0-9]{3}}$' \
    "near duplicates report the kept document and the similarity"

# Without id or url a document is named by FILE:LINE.
printf '{"text":"the same text"}\n{"text":" the  same\\ntext ","n":2}\n' >noid.jsonl
run owt-dedup -q --stages exact --report rep.jsonl noid.jsonl
printf '{"file":"noid.jsonl","line":2,"stage":"exact","reason":"exact duplicate","kept":"noid.jsonl:1","similarity":1.000}\n' >want
same want rep.jsonl "a document without a name is FILE:LINE; whitespace is normalised"

# Fixing: quotes, and another text field.
printf '{"body":"\342\200\234Quoted\342\200\235 caf\303\203\302\251","text":"x"}\n' >q.jsonl
run owt-dedup -q --stages fix --json-keys body q.jsonl
printf '{"body":"\\"Quoted\\" caf\303\251","text":"x"}\n' >want
same want out "--json-keys names the text field; quotes are uncurled"
run owt-dedup -q --stages fix --json-keys body --keep-quotes q.jsonl
printf '{"body":"\342\200\234Quoted\342\200\235 caf\303\251","text":"x"}\n' >want
same want out "--keep-quotes leaves the quotes curly"

# Same output and report with any number of workers (ids made unique, so
# that exact and near duplicates are found across batches too).
awk '{ for (i = 0; i < 120; i++) { s = $0; gsub(/"id": "/, "\"id\": \"" i "-", s); print s } }' \
    mix.jsonl >big.jsonl
owt-dedup -q --min-tokens 20 --workers 1 --report r1 big.jsonl >o1 2>/dev/null
for w in 2 3 8; do
	run owt-dedup -q --min-tokens 20 --workers $w --report r$w big.jsonl
	same o1 out "--workers $w: the same output as one worker"
	same r1 r$w "--workers $w: the same report as one worker"
done
is "$(wc -l <o1)" 5 "1440 documents: five kept (the rest duplicates)"

# Decontamination: t/data/decontam-want.jsonl holds the records Megatron-LM's
# tools/openwebtext/filter_ngrams.py (commit 17b8a8a7, Debian python3 with
# python3-nltk) writes with
#   filter_ngrams.py --tasks lambada --lambada-path t/data/tasks.jsonl \
#       --dedup-dataset t/data/decontam.jsonl text --output out.jsonl \
#       --num-threads 1
# equal as JSON values, field by field, once its split_id prefix "lambada"
# is read as "tasks" (owt-dedup names the task by its file, owt-dedup(1)),
# in owt-dedup's bytes (re-checked 2026-12-02: 30 of 30 records).
cp "$D/tasks.jsonl" "$D/decontam.jsonl" .
run owt-dedup --stages decontam --decontam tasks.jsonl --report rep.jsonl \
    decontam.jsonl
is "$rc" 0 "decontam: exit 0"
same "$D/decontam-want.jsonl" out "decontam: pieces and split_id as filter_ngrams.py"
same "$D/decontam-report.jsonl" rep.jsonl "decontam: the report"
like err 'dropped: 1 more than 10 pieces, 2 nothing left$' \
    "decontam: dropped documents counted"
like err 'decontam: 18 task n-grams; 23 n-grams cut out of 6 documents, 30 pieces$' \
    "decontam: the summary"
run owt-dedup -q --decontam tasks.jsonl --stages fix,decontam --workers 3 \
    decontam.jsonl
same "$D/decontam-want.jsonl" out "decontam after fix, three workers: the same"

# Many machines: per-document stages and signatures per shard, one pass
# over the signatures, then each shard drops what that pass listed. The
# result is the one-machine result.
head -n 6 mix.jsonl >s0.jsonl
tail -n 6 mix.jsonl >s1.jsonl
owt-dedup -q --min-tokens 20 --report one.rep s0.jsonl s1.jsonl >one.out 2>/dev/null
for k in 0 1; do
	run owt-dedup -q --stages fix,lang,length --min-tokens 20 --sign s$k.sig \
	    --workers 3 s$k.jsonl
	is "$rc" 0 "shard $k: per-document stages and --sign exit 0"
	mv out c$k.jsonl
done
like s0.sig '^\{"file":"s0.jsonl","line":1,"id":"e1","url":"https://example.org/harbour","text_hash":"[0-9a-f]{32}","minhash":"[0-9a-f]{256}"\}$' \
    "a signature: the names, the text hash, the MinHash sketch"
run owt-dedup --signed --report drops.rep s0.sig s1.sig
is "$rc" 0 "--signed: one pass over the signatures exits 0"
grep -E '"stage":"(exact|near)"' one.rep >want
same want drops.rep "--signed reports the duplicates one machine finds"
is "$(wc -l <out)" 5 "--signed writes the signatures it keeps"
cat c0.jsonl c1.jsonl >c.jsonl
run owt-dedup -q --stages none --drop drops.rep c.jsonl
same one.out out "--drop on the shards leaves the one-machine output"
run owt-dedup -q --stages none mix.jsonl
same mix.jsonl out "--stages none passes every document through"
printf '{"file":"x","line":1,"text_hash":"abc"}\n' >bad.sig
run owt-dedup --signed bad.sig
is "$rc" 1 "a bad signature exits 1"
like err '^owt-dedup: bad.sig:1: bad signature record$' "the bad signature is named"
run owt-dedup --signed --stages fix s0.sig
is "$rc" 2 "--signed with a text stage is a usage error"
run owt-dedup --signed --sign x.sig s0.sig
is "$rc" 2 "--signed with --sign is a usage error"
printf '{"id":"x"}\n' >bad.rep
run owt-dedup --drop bad.rep mix.jsonl
is "$rc" 1 "a --drop file that is not a report exits 1"
like err '^owt-dedup: bad.rep:1: not a report line \(no stage or reason\)$' \
    "the bad --drop line is named"

# Bad input.
printf '{"text":"one"}\n{"text":"bad\n{"text":"two"}\n[1]\n\n{"body":"x"}\n{"text":5}\n{"text":"a\377"}\n' >bad.jsonl
run owt-dedup --stages fix bad.jsonl
is "$rc" 1 "invalid JSON exits 1"
like err '^owt-dedup: bad.jsonl:2: invalid JSON: ' "invalid JSON names file and line"
printf '{"text":"one"}\n' >want
same want out "the documents before the bad one are written"
run owt-dedup -k --stages fix --report rep.jsonl bad.jsonl
is "$rc" 1 "-k still exits 1"
printf '{"text":"one"}\n{"text":"two"}\n' >want
same want out "-k skips bad records"
like err '^owt-dedup: bad.jsonl:4: not a JSON object$' "not an object"
like err '^owt-dedup: bad.jsonl:5: empty line$' "an empty line"
like err "^owt-dedup: bad.jsonl:6: missing 'text' field\$" "a missing text field"
like err "^owt-dedup: bad.jsonl:7: non-string 'text' field\$" "a non-string text field"
like err '^owt-dedup: bad.jsonl:8: invalid UTF-8 at byte 11$' "invalid UTF-8"
like err 'dropped: 1 empty line, 1 invalid UTF-8, 1 invalid JSON, 1 not an object, 2 missing text field$' \
    "-k counts every bad record"
like rep.jsonl '^\{"file":"bad.jsonl","line":8,"stage":"input","reason":"invalid UTF-8","error":"bad.jsonl:8: invalid UTF-8 at byte 11"\}$' \
    "bad records are in the report"
run owt-dedup nosuch.jsonl
is "$rc" 1 "a missing file exits 1"
like err "^owt-dedup: cannot open 'nosuch.jsonl': No such file or directory\$" \
    "a missing file is named"
printf '{"text":"x"}\n' | gzip | head -c 20 >trunc.jsonl.gz
run owt-dedup trunc.jsonl.gz
is "$rc" 1 "truncated gzip exits 1"
like err '^owt-dedup: trunc.jsonl.gz:[0-9]+: truncated gzip data$' "truncated gzip is named"
awk 'BEGIN { s = "{\"text\":\""; for (i = 0; i < 3000; i++) s = s "x"; print s "\"}" }' >long.jsonl
OWT_MAX_LINE=2048 run owt-dedup long.jsonl
is "$rc" 1 "a line over OWT_MAX_LINE exits 1"
like err '^owt-dedup: long.jsonl:1: line longer than 2048 bytes$' "the long line is named"
cat mix.jsonl >>long.jsonl
OWT_MAX_LINE=2048 run owt-dedup -k --stages fix --report rep.jsonl long.jsonl
is "$rc" 1 "-k: a line over OWT_MAX_LINE still exits 1"
sed -n 1p rep.jsonl >first
printf '{"file":"long.jsonl","line":1,"stage":"input","reason":"line too long","error":"long.jsonl:1: line longer than 2048 bytes"}\n' >want
same want first "-k: the long line is in the report, its message whole"
is "$(wc -l <out)" 12 "-k: the documents after the long line are read"
printf '{"text":"a b c d e f g h i j"}\n{"text":\n' >badtask.jsonl
run owt-dedup --decontam badtask.jsonl mix.jsonl
is "$rc" 1 "a bad task file exits 1"
like err '^owt-dedup: badtask.jsonl:2: invalid JSON: ' "the bad task line is named"
printf '{"task":"x"}\n' >notext.jsonl
run owt-dedup --decontam notext.jsonl mix.jsonl
is "$rc" 1 "a task without text exits 1"
like err "^owt-dedup: notext.jsonl:1: missing 'text' field\$" "the task line is named"
run owt-dedup --decontam nosuch.jsonl mix.jsonl
is "$rc" 1 "a missing task file exits 1"
like err "^owt-dedup: cannot open 'nosuch.jsonl'" "the missing task file is named"

# Usage errors.
for args in "--stages fix,bogus" "--stages ," "--near-threshold 2" \
    "--near-threshold x" "--workers 0" "--lang e_n" "--min-chars -1" \
    "--seed -1" "--json-keys a,b" "--stages fix --decontam tasks.jsonl" \
    "--stages decontam" "--min-tokens x" "--vocab-file v.json"; do
	run owt-dedup $args mix.jsonl
	is "$rc" 2 "usage error: $args"
done
fails 2 "^owt-dedup: --json-keys: '' is not one field name\$" \
    "--json-keys ''" owt-dedup --json-keys '' mix.jsonl
for l in xx EN un zh-Hant 81 ''; do
	fails 2 "^owt-dedup: --lang: '$l' is not a language CLD2 detects\$" \
	    "--lang '$l'" owt-dedup --lang "$l" mix.jsonl
done
run owt-dedup -q --stages lang --lang haw mix.jsonl
is "$rc:$(wc -c <out | tr -d ' ')" "0:0" "--lang haw (a code of CLD2's own) is accepted"
run owt-dedup --stages fix,bogus mix.jsonl
like err "^owt-dedup: --stages: unknown stage 'bogus' in 'fix,bogus'\$" \
    "an unknown stage is named"
run owt-dedup --stages decontam mix.jsonl
like err '^owt-dedup: the decontam stage needs --decontam files$' \
    "decontam without task files is explained"

# The report and the signatures get the mode a new file gets under the umask.
for m in 022:644 002:664 077:600; do
	rm -f m.rep m.sig
	(umask "${m%:*}" && owt-dedup -q --min-tokens 20 --report m.rep \
	    --sign m.sig mix.jsonl >/dev/null)
	is "$(stat -c %a m.rep m.sig | tr '\n' ' ')" "${m#*:} ${m#*:} " \
	    "umask ${m%:*}: --report and --sign are ${m#*:}"
done

# System errors.
run owt-dedup --report nodir/rep.jsonl mix.jsonl
is "$rc" 3 "an uncreatable report exits 3"
like err "^owt-dedup: cannot create 'nodir/rep.jsonl': No such file or directory\$" \
    "the report file is named"
if [ -w /dev/full ]; then
	owt-dedup -q mix.jsonl >/dev/full 2>err
	is "$?" 3 "a full disk exits 3"
	like err 'write error on standard output' "a full disk is reported"
	owt-dedup -q --report /dev/full mix.jsonl >/dev/null 2>err
	is "$?" 3 "a full disk under the report exits 3"
else
	skip "no /dev/full"
fi
no_threads 8 "no room for 8 threads (a 1 GB stack each in 3 GB)" \
    owt-dedup -q --workers 8 mix.jsonl
done_testing
