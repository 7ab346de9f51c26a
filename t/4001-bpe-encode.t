#!/bin/sh
# bpe-encode: ids equal tiktoken's on the edge fixtures, the stream format,
# documents and keys, -d round trips, workers, the vocabulary options and
# lookup, peak memory, and every bad-input path with its exit status and
# message.
#
# t/bpe/edge.jsonl and t/bpe/edge.ids were made by tiktoken (npm
# tiktoken@1.0.22, WASM, get_encoding("gpt2").encode_ordinary) with
#   NODE_PATH=/tmp/ref/node_modules node contrib/oracle/make-edge.js t/bpe/edge
. "${OWT_SRC:-.}/t/lib.sh"

cd "$T" || exit 3
E=$OWT_SRC/t/bpe
tok2ids() { perl "$E/tok2ids"; }

# Exactness: every edge case, without and with the end-of-document id.
run bpe-encode -q "$E/edge.jsonl"
is "$rc" 0 "the edge fixtures encode"
tok2ids <out >got
grep -v '^$' "$E/edge.ids" >want
same want got "ids equal tiktoken's encode_ordinary on $(wc -l <want) edge cases"
run bpe-encode -q --append-eod --workers 3 "$E/edge.jsonl"
tok2ids <out >got
grep -v '^$' "$E/edge.ids" | sed 's/$/ 50256/' >want
same want got "--append-eod ends each document with 50256; an empty text is no document"

# The stream: header, counts, little-endian ids, trailer (owt-tok(5)'s example).
printf '{"text":"Hello world"}\n' >hello.jsonl
run bpe-encode -q --append-eod hello.jsonl
od -An -tx1 out | tr -s ' \n' '  ' >got
is "$(cat got)" " 4f 57 54 54 4f 4b 02 02 51 c4 00 00 50 c4 00 00 03 00 00 00 88 3c e3 03 50 c4 4f 57 54 45 4e 44 00 00 01 00 00 00 00 00 00 00 03 00 00 00 00 00 00 00 bb 04 01 00 00 00 00 00 " \
    "header, count, ids and trailer are the bytes of owt-tok(5)"

# Documents: several keys, empty texts, the summary.
printf '{"title":"A","text":"b c"}\n{"text":"","title":"T"}\n' >keys.jsonl
run bpe-encode --json-keys title,text keys.jsonl
is "$rc" 0 "two keys"
printf '32\n65 269\n51\n' >want
tok2ids <out >got
same want got "each key is a document, in the order named; an empty text is dropped"
like err '^bpe-encode: 2 records, 3 documents, 4 tokens from 0.0 MB of text' "the summary counts records, documents, tokens"
like err 'dropped: 1 empty document$' "the empty document is counted"
run bpe-encode -q --json-keys title --json-keys text --append-eod keys.jsonl
printf '32 50256\n65 269 50256\n51 50256\n' >want
tok2ids <out >got
same want got "--json-keys repeats; with --append-eod an empty text is still dropped (Megatron-LM v2.5)"

# Input: stdin, several files, compression; output order is input order.
awk 'BEGIN { for (i = 0; i < 30000; i++) printf "{\"text\":\"document %d: the quick brown fox %d\"}\n", i, i * 7 }' >many.jsonl
run bpe-encode -q --workers 1 many.jsonl
cp out one.tok
run bpe-encode -q --workers 4 many.jsonl
same one.tok out "the output does not depend on --workers"
gzip -c many.jsonl >many.jsonl.gz
run bpe-encode -q --workers 2 - <many.jsonl.gz
same one.tok out "gzip on standard input"
head -n 100 many.jsonl >a.jsonl
tail -n +101 many.jsonl | zstd -q >b.jsonl.zst
run bpe-encode -q a.jsonl b.jsonl.zst
same one.tok out "two files, one zstd, make one stream"
bpe-encode -q a.jsonl >a.tok && tail -n +101 many.jsonl | bpe-encode -q >b.tok
cat a.tok b.tok >ab.tok
run bpe-encode -dq ab.tok
cp out ab.jsonl
run bpe-encode -dq one.tok
same ab.jsonl out "cat a.tok b.tok is one stream"
tok2ids <one.tok | head -n 1 >got
is "$(cat got)" "22897 657 25 262 2068 7586 21831 657" "the first document's ids"

# -d: back to text, byte for byte.
run bpe-encode -dq one.tok
same many.jsonl out "-d gives back the records"
bpe-encode -q --append-eod "$E/edge.jsonl" >edge.tok
run bpe-encode -d edge.tok
is "$rc" 0 "-d decodes the edge cases"
like err "^bpe-encode: $(grep -c -v '^$' "$E/edge.ids") documents, [0-9]+ tokens decoded" "-d summary"
bpe-encode -q --append-eod out >again.tok
same edge.tok again.tok "encode, decode, encode gives the same ids: every edge text round-trips"
printf '{"text":"tab\\tquote\\" nul\\u0000 \\u00e9\\ud83d\\ude00 <|endoftext|>"}\n' >esc.jsonl
bpe-encode -q --append-eod esc.jsonl >esc.tok
run bpe-encode -dq --json-keys body esc.tok
printf '{"body":"tab\\tquote\\" nul\\u0000 \303\251\360\237\230\200 <|endoftext|>"}\n' >want
same want out "-d writes JSON text under the first --json-keys name"

# Bad input: exact status and message; -k goes on and still exits 1.
printf '{"text":"ok1"}\n{"text":"bad\n{"text":"ok2"}\n' >badjson.jsonl
fails 1 '^bpe-encode: badjson.jsonl:2: invalid JSON: ' \
    "invalid JSON (file and line named)" bpe-encode -q badjson.jsonl
tok2ids <out >got
printf '482 16\n' >want
same want got "records before the bad one are written"
cp out dead.tok
is "$(wc -c <dead.tok | tr -d ' ')" 24 "but no trailer: the stream ends after the document, at byte 24"
run bpe-encode -d dead.tok
is "$rc" 1 "-d of a stream whose writer failed exits 1"
is "$(cat err)" "bpe-encode: dead.tok: byte 24: truncated token stream: no trailer after document 1 (the writer did not finish)" \
    "and says the writer did not finish"
printf '{"text":"ok1"}\n' >want
same want out "after writing what the stream holds, as gzip -d does"
run bpe-encode -k --workers 2 badjson.jsonl
is "$rc" 1 "invalid JSON under -k still exits 1"
tok2ids <out >got
printf '482 16\n482 17\n' >want
same want got "-k skips the bad record"
like err 'dropped: 1 invalid JSON$' "-k counts it"
tail -c 32 out | od -An -tx1 | tr -d ' \n' >got
is "$(cat got)" "4f5754454e44000002000000000000000400000000000000e503000000000000" \
    "-k still ends the stream with its trailer: 2 documents, 4 tokens, id sum 997"

printf '{"text":"a\377"}\n' >utf.jsonl
fails 1 '^bpe-encode: utf.jsonl:1: invalid UTF-8 at byte 11$' \
    "invalid UTF-8 (file, line and byte named)" bpe-encode utf.jsonl
printf '{"text":"\\ud800"}\n' >sur.jsonl
fails 1 '^bpe-encode: sur.jsonl:1: invalid JSON: unpaired UTF-16 surrogate' \
    "a lone surrogate escape" bpe-encode sur.jsonl

printf '{"title":"x"}\n{"text":5}\n{"text":null,"title":"t"}\n{"text":"fine"}\n' >field.jsonl
fails 1 '^bpe-encode: field.jsonl:1: missing .text. field$' \
    "missing and non-string fields (the missing one named)" bpe-encode -k field.jsonl
like err '^bpe-encode: field.jsonl:2: non-string .text. field$' "a number is not text"
like err '^bpe-encode: field.jsonl:3: non-string .text. field$' "null is not text"
like err 'dropped: 3 missing or non-string field$' "they are counted"
tok2ids <out >got
is "$(cat got)" "38125" "the good record is written"
run bpe-encode -q --json-keys text,title field.jsonl
like err '^bpe-encode: field.jsonl:1: missing .text. field$' "a record lacking one of several keys is bad"
printf '{"text":"a","title":"b"}\n{"text":"c"}\n' >two.jsonl
run bpe-encode -qk --json-keys text,title two.jsonl
tok2ids <out >got
printf '64\n65\n' >want
same want got "a bad record writes none of its documents"

printf '[1]\n\n{"text":"z"}\n' >shape.jsonl
run bpe-encode -k shape.jsonl
like err '^bpe-encode: shape.jsonl:1: not a JSON object$' "an array is not a record"
like err '^bpe-encode: shape.jsonl:2: empty line$' "a blank line is reported"
fails 1 "^bpe-encode: cannot open 'nosuch.jsonl': No such file or directory$" \
    "a missing file" bpe-encode nosuch.jsonl
mkdir adir
fails 1 "^bpe-encode: cannot read 'adir': a directory$" \
    "a directory as input (bad input, not a system error)" bpe-encode adir
fails 1 "^bpe-encode: cannot read 'adir': a directory$" \
    "a directory as -d input" bpe-encode -d adir
run bpe-encode -qk nosuch.jsonl hello.jsonl
tok2ids <out >got
is "$(cat got)" "15496 995" "-k goes on to the next file"
head -c 40 many.jsonl.gz >trunc.gz
fails 1 '^bpe-encode: trunc.gz:[0-9]+: truncated gzip data$' \
    "truncated gzip" bpe-encode trunc.gz
awk 'BEGIN { s = "{\"text\":\""; for (i = 0; i < 3000; i++) s = s "x"; print s "\"}"; print "{\"text\":\"short\"}" }' >long.jsonl
OWT_MAX_LINE=2048 run bpe-encode -k long.jsonl
is "$rc" 1 "a line over OWT_MAX_LINE exits 1"
like err '^bpe-encode: long.jsonl:1: line longer than 2048 bytes$' "the long line is named"
tok2ids <out >got
is "$(cat got)" "19509" "-k reads on after it"

# -d: bad token streams.
head -c 24 one.tok >cut.tok
fails 1 '^bpe-encode: cut.tok: byte 16: truncated token stream: document 1 has 2 of 8 tokens$' \
    "a truncated stream (where it ends)" bpe-encode -d cut.tok
# one.tok's first two documents end at byte 16 + 2 x (4 + 2 x 8) = 56.
head -c 56 one.tok >cut2.tok
run bpe-encode -d cut2.tok
is "$rc" 1 "a stream cut between documents exits 1"
is "$(cat err)" "bpe-encode: cut2.tok: byte 56: truncated token stream: no trailer after document 2 (the writer did not finish)" \
    "the missing trailer is named"
head -n 2 many.jsonl >want
same want out "the documents before the cut are written"
bpe-encode -q hello.jsonl >hello.tok
run bpe-encode -dk cut2.tok hello.tok
is "$rc" 1 "-dk goes on to the next stream and still exits 1"
like err '^bpe-encode: dropped: 1 bad token stream$' "and counts the cut one"
{ cat cut2.tok; bpe-encode -q hello.jsonl; } >cutcat.tok
run bpe-encode -d cutcat.tok
is "$(cat err)" "bpe-encode: cutcat.tok: byte 56: truncated token stream: no trailer after document 2, before the next header (the writer did not finish)" \
    "a cut stream with a whole one after it: the cut is found"
# A trailer that does not match: the document count, then an id (the sum).
{ head -c 32 hello.tok; printf '\002'; tail -c +34 hello.tok; } >count.tok
run bpe-encode -d count.tok
is "$rc" 1 "a trailer with a wrong document count exits 1"
is "$(cat err)" "bpe-encode: count.tok: byte 24: token stream trailer does not match its member: 2 documents, 2 tokens, id sum 16491; the member has 1, 2, 16491" \
    "and says what differs"
{ head -c 20 hello.tok; printf '\211'; tail -c +22 hello.tok; } >sum.tok
run bpe-encode -d sum.tok
is "$rc" 1 "a changed id exits 1"
is "$(cat err)" "bpe-encode: sum.tok: byte 24: token stream trailer does not match its member: 1 documents, 2 tokens, id sum 16491; the member has 1, 2, 16492" \
    "the id sum tells"
# Version 1: read, with a warning that its end cannot be checked.
{ printf 'OWTTOK\001'; head -c 24 hello.tok | tail -c +8; } >v1.tok
run bpe-encode -d v1.tok
is "$rc" 0 "a version 1 stream is still read"
is "$(cat out)" '{"text":"Hello world"}' "and decoded"
like err "^bpe-encode: v1.tok: a version 1 token stream: whether it is whole cannot be checked$" "with a warning"
fails 1 '^bpe-encode: many.jsonl: byte 0: not an owt token stream \(bad magic\)$' \
    "JSON as a token stream (bad magic)" bpe-encode -d many.jsonl
printf 'OWTTOK\001\002\003\000\000\000\377\377\377\377\001\000\000\000\005\000' >small.tok
fails 1 "^bpe-encode: small.tok: the stream's vocabulary has 3 tokens, the loaded one 50257$" \
    "a stream of another vocabulary (both sizes named)" bpe-encode -d small.tok
printf 'OWTTOK\001\002\121\304\000\000\120\304\000\000\001\000\000\000\121\304' >oor.tok
fails 1 '^bpe-encode: oor.tok: byte 20: token 50257 in document 1 is outside the vocabulary \(50257\)$' \
    "an id outside the vocabulary (named)" bpe-encode -d oor.tok
printf 'OWTTOK\001\002\121\304\000\000\120\304\000\000\001\000\000\000\345\000\002\000\000\000\017\000\020\000' >cut8.tok
fails 1 '^bpe-encode: cut8.tok: document 1: the tokens are not UTF-8 text \(byte 1\)$' \
    "tokens that are not UTF-8 text (the document named)" bpe-encode -d cut8.tok
run bpe-encode -dk cut8.tok
printf '{"text":"01"}\n' >want
same want out "-k skips it and decodes the next"
: >empty.tok
run bpe-encode -d empty.tok
is "$rc" 1 "an empty file is not a token stream"
run bpe-encode -q empty.tok
is "$rc" 0 "an empty JSONL input is fine"
od -An -tx1 out | tr -d ' \n' >got
is "$(cat got)" "4f5754544f4b020251c4000050c400004f5754454e440000000000000000000000000000000000000000000000000000" \
    "and gives a stream of no documents: a header and a trailer of zeros"

# Another vocabulary: ids 0..255 are GPT-2's bytes, then three merges whose
# ids differ from their ranks ("he" is id 256 but the second merge).
perl -ne 'while (/("(?:[^"\\]|\\.)*"): (\d+)/g) { push @e, "$1: $2" if $2 < 256 }
    END { print "{", join(", ", @e, "\"he\": 256", "\"\\u0120t\": 257",
    "\"\\u0120the\": 258", "\"<|endoftext|>\": 259"), "}\n" }' \
    "$OWT_SRC/data/gpt2/encoder.json" >enc.json
printf '#version: 0.2\n\304\240 t\nh e\n\304\240t he\n' >merges.txt
printf '{"text":"hethe the th"}\n' >small.jsonl
run bpe-encode -q --vocab-file enc.json --merge-file merges.txt --append-eod small.jsonl
is "$rc" 0 "--vocab-file and --merge-file load another vocabulary"
tok2ids <out >got
is "$(cat got)" "256 83 256 258 257 71 259" "its ids, by its ranks, and its <|endoftext|>"
od -An -tx1 -N16 out | tr -d ' \n' >got
is "$(cat got)" "4f5754544f4b02020401000003010000" "the header says 260 tokens, EOD 259"
cp out small.tok
run bpe-encode -dq --vocab-file enc.json --merge-file merges.txt - <small.tok
printf '{"text":"hethe the th"}\n' >want
same want out "and decodes with it"

run bpe-encode --vocab-file enc.json small.jsonl
is "$rc" 2 "--vocab-file alone is a usage error"
like err '^bpe-encode: --vocab-file and --merge-file go together$' "says why"
run bpe-encode --vocab-file nosuch.json --merge-file merges.txt small.jsonl
is "$rc" 1 "a missing vocabulary file exits 1"
like err "^bpe-encode: cannot open 'nosuch.json': No such file or directory$" "and is named"
# bad_vocab FILE CONTENT ERE DESC: a malformed vocabulary file (encoder.json
# when FILE ends in .json, else vocab.bpe) exits 1 with the message ERE.
bad_vocab() {
	printf "$2" >"$1"
	case $1 in
	*.json) run bpe-encode --vocab-file "$1" --merge-file merges.txt small.jsonl ;;
	*) run bpe-encode --vocab-file enc.json --merge-file "$1" small.jsonl ;;
	esac
	is "$rc" 1 "$4 exits 1"
	like err "^bpe-encode: $1$3\$" "$4 is named"
}
bad_vocab bad1.json '[1]' ': not a JSON object of token ids' "a vocabulary that is not an object"
bad_vocab bad2.json '{"a": 0, "b": 1' ': invalid JSON: .* at byte [0-9]+' "truncated JSON"
bad_vocab bad3.json '{"a": 0, "b": 0}' ': id 0 is used twice' "an id used twice"
bad_vocab bad4.json '{"a": 0, "b": 2}' ': ids are not 0..1: 1 is missing' "a missing id"
bad_vocab bad5.json '{"a": 0, "b": 1}' ': byte 0x00 has no token' "a byte without a token"
bad_vocab bad6.json '{"a b": 0}' ": token 'a b' is not written in GPT-2's byte alphabet" "a raw space"
bad_vocab bad7.json '{"a": 1.5}' ': not a JSON object of token ids' "a fractional id"
bad_vocab bad8.json '{"a": -1}' ': id -1 is out of range' "a negative id"
bad_vocab bad9.json '{"a": 1e0}' ': not a JSON object of token ids' "an id with an exponent"
bad_vocab bad10.json '{"a": {"b": 0}}' ': not a JSON object of token ids' "an object inside"
bad_vocab bad11.json '{"a": "0"}' ': not a JSON object of token ids' "an id as a string"
bad_vocab bad12.json '  \n' ': no tokens' "a file of white space"
bad_vocab bad13.json '{"\\ud800": 0}' ': invalid JSON: unpaired UTF-16 surrogate escape at byte 3' "a lone surrogate"
bad_vocab bad14.json '{"a": 2147483647}' ': id 2147483647 is out of range' "an id of 2^31-1"
# encoder.json is read as the JSON layer reads a record: one object,
# written over several lines and with escapes, loads the same tables.
perl -pe 's/, /,\n  /g; s/"he"/"\\u0068e"/' enc.json >pretty.json
run bpe-encode -q --vocab-file pretty.json --merge-file merges.txt --append-eod small.jsonl
tok2ids <out >got
is "$(cat got)" "256 83 256 258 257 71 259" "an encoder.json over several lines, with escapes, gives the same ids"
bad_vocab m1.txt '\304\240 t\nh e x\n' ":2: not a merge 'A B'" "a bad merge line"
bad_vocab m2.txt '\304\240 t\nq z\n' ":2: 'q z' makes a token that is not in the vocabulary" "a merge whose result is unknown"
bad_vocab m3.txt '\304\240 t\nh e\nh e\n' ":3: 'h e' makes a token that an earlier line made" "a repeated merge"
printf '{"text":"x"}\n' >x.jsonl
perl -pe 's/, "<\|endoftext\|>": 259//' enc.json >noeod.json
run bpe-encode --vocab-file noeod.json --merge-file merges.txt --append-eod x.jsonl
is "$rc" 2 "--append-eod with a vocabulary without <|endoftext|> is a usage error"
like err '^bpe-encode: --append-eod: the vocabulary has no <\|endoftext\|>$' "says why"

# The default vocabulary is built into the program (the image the build
# made of data/gpt2): a copy anywhere, with no data files, encodes as the
# build tree's does.
mkdir -p bare/bin
cp "$OWT_BUILD/bin/bpe-encode" bare/bin/
run bpe-encode -q hello.jsonl
cp out hello.tok
run bare/bin/bpe-encode -q hello.jsonl
is "$rc" 0 "a program copied away from the data files runs"
same hello.tok out "with the built-in GPT-2 vocabulary"

# A megabyte without white space is one piece: merged in n log n time.
perl -e 'srand(3); print "{\"text\":\"", join("", map { chr(97 + int rand 26) } 1 .. 1048576), "\"}\n"' >piece.jsonl
run timeout 120 bpe-encode -q piece.jsonl
is "$rc" 0 "a 1 MB piece encodes in well under two minutes"
cp out piece.tok
run bpe-encode -dq piece.tok
same piece.jsonl out "and decodes back"

# Memory (man bpe-encode, MEMORY): peak RSS, by /usr/bin/time, does not
# grow with the workers (with a 16 MB cache each, 64 took 395 MB here),
# and a record without white space stays under the stated bound,
# 80 MB + n x 0.25 MB + 12 x max(L, 8 MB) (this one took 304 MB). Not
# under a sanitizer, whose shadow memory counts too.
# under KB DESC: pass when the peak RSS in ./rss is under KB.
under() {
	_rss=$(tail -n 1 rss)
	if [ "$_rss" -lt "$1" ]; then
		ok "$2 ($_rss KB)"
	else
		not_ok "$2 ($_rss KB)"
	fi
}
why=
[ -x /usr/bin/time ] || why="no /usr/bin/time"
grep -q __asan_init "$OWT_BUILD/bin/bpe-encode" && why="a sanitizer build"
if [ -z "$why" ]; then
	run /usr/bin/time -f %M -o rss bpe-encode -q --workers 64 many.jsonl
	is "$rc" 0 "64 workers"
	same one.tok out "write the same stream"
	under 100000 "and stay under 100 MB"
	perl -e 'print "{\"text\":\"", "a" x (8 << 20), "\"}\n"' >a8.jsonl
	run /usr/bin/time -f %M -o rss bpe-encode -q --workers 4 a8.jsonl
	is "$rc" 0 "an 8 MB record without white space"
	under $((80000 + 1000 + 12 * 8192)) \
	    "takes under 80 MB + 4 x 0.25 MB + 12 x 8 MB"
	cp out a8.tok
	run bpe-encode -dq a8.tok
	same a8.jsonl out "and decodes back"
else
	for i in 1 2 3 4 5 6; do
		skip "peak RSS: $why"
	done
fi

# Usage errors and the terminal.
run bpe-encode --workers 0 hello.jsonl
is "$rc" 2 "--workers 0 is a usage error"
like err "^bpe-encode: --workers: '0' is out of range" "says why"
run bpe-encode --json-keys a,,b hello.jsonl
is "$rc" 2 "an empty key is a usage error"
like err "^bpe-encode: --json-keys: 'a,,b' has an empty field name$" "says why"
if [ -w /dev/full ]; then
	bpe-encode hello.jsonl >/dev/full 2>err
	is "$?" 3 "a full disk exits 3"
	like err 'write error on standard output' "a full disk is reported"
else
	skip "no /dev/full"
fi
no_threads 8 "no room for 8 threads (a 1 GB stack each in 3 GB)" \
    bpe-encode --workers 8 hello.jsonl
if command -v script >/dev/null 2>&1; then
	script -qec "bpe-encode $T/hello.jsonl" /dev/null >tty.out 2>&1
	like tty.out 'terminal' "the token stream is not written to a terminal"
else
	skip "no script(1) for a terminal"
fi
done_testing
