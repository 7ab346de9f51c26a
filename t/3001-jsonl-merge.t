#!/bin/sh
# jsonl-merge: pass-through, directories, text files, compression, ids,
# the shuffle, and every bad-input path with its exit status and message.
. "${OWT_SRC:-.}/t/lib.sh"

cd "$T" || exit 3
mkdir -p d/sub d/.hidden
printf '{"text":"hello","n":1.5e3, "x" : [1,{"a":2}] }\n' >d/b.jsonl
printf '{"url":"u","text":"\\u00e9\\ud83d\\ude00 caf\303\251"}\r\n' >>d/b.jsonl
printf 'plain "text"\n\tline2\n' >d/sub/c.txt
printf '{"text":"zipped"}\n' | gzip >d/a.jsonl.gz
printf '{"text":"zstd"}\n' | zstd -q >d/e.json.zst
printf 'not read' >d/f.bin
printf '{"text":"hidden"}\n' >d/.hidden/h.jsonl

# Expected: sorted order a.jsonl.gz, b.jsonl, e.json.zst, f.bin (ignored), sub/c.txt.
cat >want <<'EOF'
{"text":"zipped"}
{"text":"hello","n":1.5e3, "x" : [1,{"a":2}] }
{"url":"u","text":"\u00e9\ud83d\ude00 café"}
{"text":"zstd"}
{"text":"plain \"text\"\n\tline2\n","src":"d/sub/c.txt"}
EOF
run jsonl-merge d
is "$rc" 0 "a clean directory exits 0"
same want out "records in sorted order, bytes kept, text file wrapped"
like err '5 records from 4 files' "summary counts records and files"
like err '1 files ignored' "summary counts the ignored file"
like err 'dropped: none' "summary says nothing was dropped"

run jsonl-merge - <d/b.jsonl
sed -n 2,3p want >want2
same want2 out "stdin is read when the operand is -"

run jsonl-merge -q --add-id owt d
cat >want <<'EOF'
{"text":"zipped","adlr_id":"owt-0000000001"}
{"text":"hello","n":1.5e3, "x" : [1,{"a":2}] ,"adlr_id":"owt-0000000002"}
{"url":"u","text":"\u00e9\ud83d\ude00 café","adlr_id":"owt-0000000003"}
{"text":"zstd","adlr_id":"owt-0000000004"}
{"text":"plain \"text\"\n\tline2\n","src":"d/sub/c.txt","adlr_id":"owt-0000000005"}
EOF
same want out "--add-id numbers records from 1 with ten digits"
is "$(cat err)" "" "-q prints nothing on success"

printf '{"adlr_id":"old","text":"t","z":0}\n{}\n' >ids.jsonl
run jsonl-merge -q -k --add-id P ids.jsonl
printf '{"adlr_id":"P-0000000001","text":"t","z":0}\n' >want
same want out "--add-id replaces an existing id in place"
is "$rc" 1 "a record without text exits 1 under -k"
like err '^jsonl-merge: ids.jsonl:2: missing .text. field$' "missing text is reported with file and line"
run jsonl-merge -q -k --add-id 'a"b\c' ids.jsonl
printf '{"adlr_id":"a\\"b\\\\c-0000000001","text":"t","z":0}\n' >want
same want out "--add-id writes its prefix as a JSON string (quotes and backslashes escaped)"

printf '{"body":"b"}\n' >keys.jsonl
run jsonl-merge -q --json-keys body keys.jsonl
same keys.jsonl out "--json-keys names the checked field"
printf 'x' >k.txt
run jsonl-merge -q --json-keys body k.txt
printf '{"body":"x","src":"k.txt"}\n' >want
same want out "--json-keys names the field of a text file"

# The shuffle: a permutation, fixed by the seed, the same in memory and spilled.
awk 'BEGIN { for (i = 0; i < 20000; i++) printf "{\"text\":\"document %d %0100d\"}\n", i, i }' >many.jsonl
run jsonl-merge -q --shuffle --seed 7 many.jsonl
cp out s1
run jsonl-merge -q --shuffle --seed 7 --memory 1M --tmpdir "$T" many.jsonl
same s1 out "--shuffle output does not depend on --memory (spilled to 3 runs)"
sort many.jsonl >a; sort s1 >b
same a b "--shuffle writes every record once"
cmp -s many.jsonl s1 && not_ok "--shuffle changes the order" || ok "--shuffle changes the order"
run jsonl-merge -q --shuffle --seed 8 many.jsonl
cmp -s s1 out && not_ok "another seed gives another order" || ok "another seed gives another order"
first=$(head -c 40 s1)
run jsonl-merge -q --shuffle --seed 7 --add-id s many.jsonl
like out '"adlr_id":"s-0000000001"}$' "--add-id after --shuffle numbers in output order"
is "$(head -c 40 out)" "$first" "--add-id keeps the shuffled order"
ls "$T" | grep -q owt-shuffle && not_ok "no temporary files left" || ok "no temporary files left"

# Bad input.
printf '{"text":"ok1"}\n{"text":"bad\n{"text":"ok2"}\n' >badjson.jsonl
run jsonl-merge badjson.jsonl
is "$rc" 1 "invalid JSON exits 1"
like err '^jsonl-merge: badjson.jsonl:2: invalid JSON: ' "invalid JSON names file and line"
printf '{"text":"ok1"}\n' >want
same want out "records before the bad one are written"

run jsonl-merge -k badjson.jsonl
is "$rc" 1 "invalid JSON under -k still exits 1"
printf '{"text":"ok1"}\n{"text":"ok2"}\n' >want
same want out "-k skips the bad record and goes on"
like err 'dropped: 1 invalid JSON$' "-k counts the bad record in the summary"

printf '{"text":"a\377"}\n' >utf.jsonl
run jsonl-merge utf.jsonl
is "$rc" 1 "invalid UTF-8 exits 1"
like err '^jsonl-merge: utf.jsonl:1: invalid UTF-8 at byte 11$' "invalid UTF-8 names file, line and byte"
printf '{"text":"\300\257"}\n{"text":"\355\240\200"}\n{"text":"\364\220\200\200"}\n{"text":"\\ud800x"}\n' >utf2.jsonl
run jsonl-merge -k utf2.jsonl
like err 'dropped: 3 invalid UTF-8, 1 invalid JSON$' "overlong, surrogate, >U+10FFFF and a lone \\u surrogate are rejected"

printf 'caf\351\n' >latin1.txt
run jsonl-merge latin1.txt
is "$rc" 1 "a text file with invalid UTF-8 exits 1"
like err '^jsonl-merge: latin1.txt:1: invalid UTF-8 at byte 4$' "names the text file, line and byte"

: >empty.jsonl
: >empty.txt
run jsonl-merge -k empty.jsonl empty.txt d/b.jsonl
is "$rc" 1 "empty files exit 1"
like err '^jsonl-merge: empty.jsonl: empty file$' "an empty JSONL file is reported"
like err '^jsonl-merge: empty.txt: empty file$' "an empty text file is reported"
like err 'dropped: 2 empty file$' "empty files are counted"
tr -d '\r' <d/b.jsonl >b.lf
same b.lf out "-k goes on to the next file"

run jsonl-merge nosuch.jsonl
is "$rc" 1 "a missing file exits 1"
like err "^jsonl-merge: cannot open 'nosuch.jsonl': No such file or directory$" "a missing file is named"
mkdir locked && printf '{"text":"x"}\n' >locked/x.jsonl && chmod 000 locked
if [ "$(id -u)" = 0 ]; then
	skip "unreadable directory (root reads everything)"
else
	run jsonl-merge -k locked
	like err "^jsonl-merge: cannot read 'locked'" "an unreadable directory is reported"
fi
chmod 755 locked

head -c 30 d/a.jsonl.gz >trunc.jsonl.gz
run jsonl-merge trunc.jsonl.gz
is "$rc" 1 "truncated gzip exits 1"
like err '^jsonl-merge: trunc.jsonl.gz:[0-9]+: truncated gzip data$' "truncated gzip is reported"
printf '\037\213garbage-garbage-garbage' >corrupt.gz
run jsonl-merge corrupt.gz
is "$rc" 1 "corrupt gzip exits 1"
like err 'corrupt gzip data' "corrupt gzip is reported"

awk 'BEGIN { s = "{\"text\":\""; for (i = 0; i < 3000; i++) s = s "x"; print s "\"}"; print "{\"text\":\"short\"}" }' >long.jsonl
OWT_MAX_LINE=2048 run jsonl-merge long.jsonl
is "$rc" 1 "a line over OWT_MAX_LINE exits 1"
like err '^jsonl-merge: long.jsonl:1: line longer than 2048 bytes$' "the long line is named"
OWT_MAX_LINE=2048 run jsonl-merge -k long.jsonl
printf '{"text":"short"}\n' >want
same want out "-k skips the long line and reads the next"
OWT_MAX_LINE=12 run jsonl-merge long.jsonl
is "$rc" 2 "a bad OWT_MAX_LINE is a usage error"
like err "^jsonl-merge: OWT_MAX_LINE: '12' is out of range 1024\.\.2147483648\$" \
    "a bad OWT_MAX_LINE is named, with the range"
OWT_MAX_LINE=5 run jsonl-merge missing.jsonl
is "$rc" 2 "OWT_MAX_LINE is checked at start-up, before any input is opened"
like err "^jsonl-merge: OWT_MAX_LINE: '5' is out of range 1024\.\.2147483648\$" \
    "the start-up check names the value"

printf '[1,2]\n"s"\n{"text":"a"} {"text":"b"}\n{"text":"a"}x\n\n' >shapes.jsonl
run jsonl-merge -k shapes.jsonl
like err 'shapes.jsonl:1: not a JSON object$' "an array is not a record"
like err 'shapes.jsonl:2: not a JSON object$' "a string is not a record"
like err 'shapes.jsonl:3: invalid JSON' "two objects on a line are rejected"
like err 'shapes.jsonl:4: invalid JSON' "trailing garbage is rejected"
like err 'shapes.jsonl:5: empty line$' "a blank line is reported"

# zstd --long=31 (as the Reddit dumps are): a frame that declares a 2 GiB
# window, past zstd's default decoding limit of 128 MB. Through a pipe the
# size is unknown, so even a small input gets the large window.
seq 1 2000 | sed 's/.*/{"text":"line &"}/' >long.jsonl
zstd -q --long=31 --ultra -22 <long.jsonl >long.jsonl.zst
zstd -lv long.jsonl.zst >zinfo 2>&1
like zinfo 'Window Size: 2.00 GiB' "the fixture's frame declares a 2 GiB window"
run jsonl-merge -q long.jsonl.zst
is "$rc" 0 "a zstd --long=31 frame is read"
same long.jsonl out "and gives the records back exactly"
zstd -q --long=31 <long.jsonl | head -c 300 >cut.jsonl.zst
run jsonl-merge -q cut.jsonl.zst
is "$rc" 1 "a truncated --long=31 frame exits 1"
like err '^jsonl-merge: cut.jsonl.zst:[0-9]+: truncated zstd data$' "and says it is truncated"

# Usage errors.
run jsonl-merge --memory 10 d
is "$rc" 2 "--memory below 1M is a usage error"
like err "^jsonl-merge: --memory: '10' is out of range" "--memory names the problem"
run jsonl-merge --seed x d
is "$rc" 2 "a non-numeric --seed is a usage error"
run jsonl-merge --json-keys a,b d
is "$rc" 2 "--json-keys takes one field"
like err "^jsonl-merge: --json-keys: 'a,b' is not one field name$" "and says why"

# A failed write is exit 3, never a truncated success.
if [ -w /dev/full ]; then
	jsonl-merge d >/dev/full 2>err
	is "$?" 3 "a full disk exits 3"
	like err 'write error on standard output' "a full disk is reported"
else
	skip "no /dev/full"
fi
done_testing
