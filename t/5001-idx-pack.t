#!/bin/sh
# idx-pack: Megatron's byte-exact vectors, --info, --cat, --check, --merge,
# -f, empty documents, the shared GPT-2 sample, and every bad-input path
# with its exit status, message, and no dataset left behind.
. "${OWT_SRC:-.}/t/lib.sh"
. "$OWT_SRC/t/tok.sh"

cd "$T" || exit 3

# megatron-compat.md 1.6: three documents, vocabulary 50257, document mode.
printf '15496 995 50256\n40 716 257 1332 13 50256\n50255 50256\n' >vec.ids
mktok 50257 50256 <vec.ids >vec.tok
unhex >vec.idx.want <<'EOF'
4d4d4944 49445800 00 0100000000000000 08 0300000000000000 0400000000000000
03000000 06000000 02000000 0000000000000000 0600000000000000 1200000000000000
0000000000000000 0100000000000000 0200000000000000 0300000000000000
EOF
unhex >vec.bin.want <<'EOF'
883c e303 50c4 2800 cc02 0101 3405 0d00 50c4 4fc4 50c4
EOF
run idx-pack -o doc vec.tok
is "$rc" 0 "packing the notes' vector exits 0"
same vec.idx.want doc.idx "doc.idx equals Megatron's bytes"
same vec.bin.want doc.bin "doc.bin equals Megatron's bytes"
like err '^idx-pack: doc: 3 documents, 11 tokens \(uint16\), 0.0 MB in [0-9.]+ s$' "summary"
like err '^idx-pack: skipped: none$' "nothing skipped"
ls doc.* | tr '\n' ' ' >files
is "$(cat files)" "doc.bin doc.idx " "no temporary file is left"

run idx-pack -q -o stdin - <vec.tok
same vec.idx.want stdin.idx "standard input, as -"
is "$(cat err)" "" "-q prints nothing"
run idx-pack -q -o stdin2 <vec.tok
same vec.bin.want stdin2.bin "standard input without an operand"
# A regular file is mapped from where its descriptor stands: here, after
# five bytes another program read.
{ printf 'skip!'; cat vec.tok; } >off.tok
{ dd bs=5 count=1 of=/dev/null 2>/dev/null; idx-pack -q -o off; } <off.tok
same vec.bin.want off.bin "standard input that starts mid-file: the stream from there"
cat vec.tok vec.tok >two.tok
run sh -c 'cat two.tok | idx-pack -q -o pipe && idx-pack -q -o file two.tok && cmp pipe.bin file.bin && cmp pipe.idx file.idx'
is "$rc" 0 "a pipe and a mapped file give the same dataset"

# Vocabulary 100000: dtype int32 (code 4), tokens as int32.
printf '1 2 3\n99999\n' | mktok 100000 99999 >big.tok
run idx-pack -q -o big big.tok
unhex >want <<'EOF'
4d4d4944 49445800 00 0100000000000000 04 0200000000000000 0300000000000000
03000000 01000000 0000000000000000 0c00000000000000
0000000000000000 0100000000000000 0200000000000000
EOF
same want big.idx "vocabulary 100000: int32 index (dtype byte 04)"
printf '01000000 02000000 03000000 9f860100' | unhex >want
same want big.bin "vocabulary 100000: int32 tokens"
printf '1\n' | mktok 65500 0 >t65500.tok
printf '1\n' | mktok 65499 0 >t65499.tok
idx-pack -q -o t65500 t65500.tok && idx-pack -q -o t65499 t65499.tok
is "$(od -An -j17 -N1 -tu1 t65500.idx | tr -d ' ')$(od -An -j17 -N1 -tu1 t65499.idx | tr -d ' ')" \
    48 "vocabulary 65500 gives int32, 65499 uint16"

# --info, --check, --cat.
run idx-pack --info doc
is "$rc" 0 "--info exits 0"
is "$(cat out)" '{"prefix":"doc","dtype":"uint16","dtype_code":8,"sequences":3,"documents":3,"tokens":11,"bin_bytes":22,"idx_bytes":102,"empty_sequences":0,"empty_documents":0,"length":{"min":2,"max":6,"mean":3.67,"p50":3,"p90":6,"p99":6}}' \
    "--info: counts, dtype, sizes and length statistics in JSON"
run idx-pack --info doc.idx big.bin
is "$(cut -c 1-40 out | tr '\n' ' ')" '{"prefix":"doc","dtype":"uint16","dtype_ {"prefix":"big","dtype":"int32","dtype_c ' \
    "--info takes several datasets, named PREFIX.idx or PREFIX.bin too"
run idx-pack --check doc big
is "$rc" 0 "--check of valid datasets exits 0"
is "$(cat out)" "doc: ok: 3 sequences, 3 documents, 11 tokens (uint16)
big: ok: 2 sequences, 2 documents, 4 tokens (int32)" "--check reports each dataset"

run idx-pack --cat doc
is "$rc" 0 "--cat exits 0"
same vec.tok out "--cat gives the token stream back, byte for byte"
run idx-pack --cat --docs 1:2 doc
sed -n 2p vec.ids | mktok 50257 50256 >want
same want out "--docs 1:2 is document 1"
run idx-pack --cat --docs 1 doc
same want out "--docs 1 is document 1"
run idx-pack --cat --docs 1: doc
sed -n 2,3p vec.ids | mktok 50257 50256 >want
same want out "--docs 1: is documents 1 and 2"
run idx-pack --cat --docs :1 doc
sed -n 1p vec.ids | mktok 50257 50256 >want
same want out "--docs :1 is document 0"
run idx-pack --cat --docs 2:100 doc doc
{ sed -n 3p vec.ids | mktok 50257 50256; sed -n 3p vec.ids | mktok 50257 50256; } >want
same want out "--docs past the end stops at the end, for each dataset"
run idx-pack --cat --docs 5:9 doc
printf '' | mktok 50257 50256 >want
same want out "--docs beyond the documents gives only the header"
run idx-pack --cat --vocab 100000 --eod 99999 big
same big.tok out "--cat --vocab --eod writes that header"
run idx-pack --cat big
is "$rc" 1 "--cat of ids above --vocab exits 1"
is "$(cat err)" "idx-pack: big.bin: token 99999 in document 1 is outside the vocabulary (50257); --vocab sets it" \
    "--cat names the token, document and vocabulary"
cp out catcut.tok
run idx-pack -q -o catcut catcut.tok
is "$(cat err)" "idx-pack: catcut.tok: byte 26: truncated token stream: no trailer after document 1 (the writer did not finish)" \
    "the documents --cat wrote before the fault end without a trailer"

# Several token streams are one concatenation; a merge equals packing it.
printf '7 8 9\n\n1\n' | mktok 50257 50256 >a.tok
awk 'BEGIN { for (d = 0; d < 3000; d++) { s = ""; for (i = 0; i <= d % 700; i++) s = s " " (d * 31 + i * 7) % 50257; print s } }' |
    mktok 50257 50256 >b.tok
cat a.tok b.tok vec.tok >abv.tok
run idx-pack -q -o abv abv.tok
is "$rc" 0 "a stream with repeated headers packs"
run idx-pack -q -o files3 a.tok b.tok vec.tok
same abv.idx files3.idx "three files pack as their concatenation (.idx)"
same abv.bin files3.bin "three files pack as their concatenation (.bin)"
idx-pack -q -o a a.tok && idx-pack -q -o b b.tok
run idx-pack -o merged --merge a.idx b doc
is "$rc" 0 "--merge exits 0"
like err '^idx-pack: merged: 3 datasets, 3005 documents, [0-9]+ tokens \(uint16\), [0-9.]+ MB in [0-9.]+ s$' "--merge summary"
same abv.idx merged.idx "merge equals packing the concatenation (.idx)"
same abv.bin merged.bin "merge equals packing the concatenation (.bin)"
run idx-pack --cat merged

# Empty documents: skipped and counted, or kept with --keep-empty as
# Megatron since 2023 writes them (a repeated document index entry).
run idx-pack -o a2 a.tok
like err '^idx-pack: skipped: 1 empty documents$' "an empty document is skipped and counted"
unhex >want <<'EOF'
4d4d4944 49445800 00 0100000000000000 08 0200000000000000 0300000000000000
03000000 01000000 0000000000000000 0600000000000000
0000000000000000 0100000000000000 0200000000000000
EOF
same want a2.idx "without it, the documents are 0..N"
run idx-pack -q --keep-empty -o a3 a.tok
unhex >want <<'EOF'
4d4d4944 49445800 00 0100000000000000 08 0200000000000000 0400000000000000
03000000 01000000 0000000000000000 0600000000000000
0000000000000000 0100000000000000 0100000000000000 0200000000000000
EOF
same want a3.idx "--keep-empty: a document of no sequence"
run idx-pack --cat a3
same a.tok out "--keep-empty round-trips the empty document"
run idx-pack --info a3
like out '"documents":3,"tokens":4,.*"empty_documents":1,' "--info counts the empty document"

# An existing dataset is not overwritten without -f.
cp doc.idx keep.idx
run idx-pack -o doc a.tok
is "$rc" 2 "an existing dataset without -f exits 2"
is "$(cat err)" "idx-pack: doc.idx: already exists; -f overwrites it" "the message names it"
same keep.idx doc.idx "the existing dataset is untouched"
rm doc.idx
run idx-pack -o doc a.tok
is "$(cat err)" "idx-pack: doc.bin: already exists; -f overwrites it" "a lone .bin is not overwritten either"
run idx-pack -q -f -o doc a.tok
is "$rc" 0 "-f overwrites"
same a2.idx doc.idx "-f wrote the new dataset"
ls doc.* | tr '\n' ' ' >files
is "$(cat files)" "doc.bin doc.idx " "and left no temporary file"
run idx-pack -o merged --merge a
is "$rc" 2 "--merge onto an existing dataset without -f exits 2"
run idx-pack -q -f -o a --merge a b
is "$rc" 0 "-f merges into an input's own prefix"
run idx-pack --check a
is "$(cat out)" "a: ok: 3002 sequences, 3002 documents, $(( $(wc -c <b.bin) / 2 + 4 )) tokens (uint16)" \
    "and the result is the merge"

# The shared GPT-2 sample: 1029 documents that each end in 50256. Its
# .bin must equal the reference ids byte for byte.
u16=$OWT_SHARED/data/corpus-sample.gpt2.u16
if [ -f "$u16" ]; then
	corpus_tok "$u16" >corpus.tok
	run idx-pack -q -o corpus corpus.tok
	same "$u16" corpus.bin "shared sample: .bin equals tiktoken's ids"
	run idx-pack --info corpus
	like out '"sequences":1029,"documents":1029,"tokens":1855188,' "shared sample: 1029 documents, 1855188 tokens"
	run idx-pack --cat corpus
	same corpus.tok out "shared sample: --cat round-trips"
else
	skip "no ../shared test data"
	skip "no ../shared test data"
	skip "no ../shared test data"
fi

# Bad token streams: exit 1, the problem named, no dataset left.
bad_input() {	# what message operands...
	what=$1 msg=$2
	shift 2
	run idx-pack -o bad "$@"
	is "$rc" 1 "$what exits 1"
	is "$(cat err)" "idx-pack: $msg" "$what is named"
	none_left bad "no dataset is left after $what"
}
printf 'NOTATOKENSTREAM!' >notok
bad_input "a wrong header" "notok: byte 0: not an owt token stream (bad magic)" notok
printf '1 2 50257\n' | mktok 50257 50256 >oov.tok
bad_input "a token outside the vocabulary" \
    "oov.tok: byte 24: token 50257 in document 1 is outside the vocabulary (50257)" oov.tok
head -c 110 b.tok >trunc1.tok
bad_input "a stream truncated in a document" \
    "trunc1.tok: byte 100: truncated token stream: document 8 has 3 of 8 tokens" trunc1.tok
head -c 101 b.tok >trunc2.tok
bad_input "a stream truncated in a document's length" \
    "trunc2.tok: byte 100: truncated token stream (1 bytes after document 7)" trunc2.tok
bad_input "streams of different vocabularies" \
    "big.tok: vocabulary 100000, EOD 99999 differ from a.tok's (vocabulary 50257, EOD 50256)" a.tok big.tok
bad_input "empty input" "<stdin>: byte 0: empty input: not an owt token stream" </dev/null
# A stream whose writer died: cut at a document boundary (a.tok's three
# documents end at byte 16 + 10 + 4 + 6 = 36), with or without a whole
# stream after it; a trailer that does not match.
head -c 36 a.tok >cut.tok
bad_input "a stream without its trailer" \
    "cut.tok: byte 36: truncated token stream: no trailer after document 3 (the writer did not finish)" cut.tok
bad_input "a stream without its trailer, on standard input" \
    "<stdin>: byte 36: truncated token stream: no trailer after document 3 (the writer did not finish)" <cut.tok
bad_input "a whole stream, then one without its trailer" \
    "cut.tok: byte 36: truncated token stream: no trailer after document 3 (the writer did not finish)" vec.tok cut.tok
cat cut.tok vec.tok >cutvec.tok
bad_input "a stream without its trailer, then a whole one" \
    "cutvec.tok: byte 36: truncated token stream: no trailer after document 3, before the next header (the writer did not finish)" cutvec.tok
{ head -c 44 a.tok; printf '\004'; tail -c +46 a.tok; } >count.tok
bad_input "a trailer that does not match" \
    "count.tok: byte 36: token stream trailer does not match its member: 4 documents, 4 tokens, id sum 25; the member has 3, 4, 25" count.tok
# Version 1 streams are packed, with a warning: their end cannot be checked.
printf '7 8 9\n\n1\n' | mktok 50257 50256 1 >v1.tok
run idx-pack -q -o v1 v1.tok
is "$rc" 0 "a version 1 stream packs"
is "$(cat err)" "idx-pack: v1.tok: a version 1 token stream: whether it is whole cannot be checked" \
    "with a warning, even under -q"
same a2.idx v1.idx "into the dataset of the same documents in version 2"
# Ids an int32 dataset cannot hold (a vocabulary over 2^31).
printf '5\n1 3000000000 2\n' | mktok 3000000001 0 >huge.tok
bad_input "an id over int32's range" \
    "huge.tok: document 2: token 3000000000 does not fit an int32 dataset (at most 2147483647)" huge.tok
bad_input "a missing input" "cannot open 'nosuch.tok': No such file or directory" nosuch.tok
mkdir adir
bad_input "a directory as input" "cannot read 'adir': a directory" adir
bad_input "a directory as standard input" "cannot read '<stdin>': a directory" <adir
umask_dir_mode() { printf '%o\n' $((0777 & ~$(umask))); }
run idx-pack -o nodir/sub/x a.tok
is "$rc:$(stat -c %a nodir/sub)" 0:$(umask_dir_mode) "an output directory that does not exist is made, as mkdir -p would"
idx-pack -q -o ref a.tok
same nodir/sub/x.bin ref.bin "the dataset is written there"
touch afile
run idx-pack -o afile/x a.tok
is "$rc" 3 "an output 'directory' that is a file exits 3"
is "$(cat err)" "idx-pack: cannot create 'afile': Not a directory" "the file is named"

# Bad datasets: truncated, corrupt and foreign files, for every reader.
# Each is exit 1 with the first violation named.
check_bad() {	# name description expected-message
	run idx-pack --check "$1"
	is "$rc" 1 "--check: $2 exits 1"
	is "$(cat err)" "idx-pack: $3" "--check: $2 is named"
	[ -z "$(cat out)" ] && ok "--check: $2 prints no ok line" || not_ok "--check: $2 prints no ok line"
}
mk() {	# name: a copy of the notes' vector to spoil
	cp vec.idx.want "$1.idx" && cp vec.bin.want "$1.bin"
}
patch() {	# file offset hex: overwrite bytes in place
	printf '%s' "$3" | unhex | dd of="$1" bs=1 seek="$2" conv=notrunc 2>/dev/null
}
mk c1; head -c 60 vec.idx.want >c1.idx
check_bad c1 "a truncated .idx" "c1.idx: truncated: 60 bytes, too few for the header's 3 sequences and 4 document indices"
mk c2; head -c 20 vec.idx.want >c2.idx
check_bad c2 "a truncated header" "c2.idx: truncated header (20 of 34 bytes)"
mk c3; head -c 21 vec.bin.want >c3.bin
check_bad c3 "a truncated .bin" "c3.bin: truncated: 21 bytes, sequence 2 ends at byte 22"
mk c4; printf 'xx' >>c4.bin
check_bad c4 "a .bin too long" "c4.bin: 24 bytes, the index describes 22"
mk c5; patch c5.idx 0 4e
check_bad c5 "a bad magic" "c5.idx: not a Megatron indexed dataset (bad magic)"
mk c6; patch c6.idx 9 02
check_bad c6 "another version" "c6.idx: unsupported version 2"
mk c7; patch c7.idx 17 05
check_bad c7 "dtype int64" "c7.idx: dtype code 5 (int64) is not a token dtype (8 uint16 or 4 int32)"
mk c8; patch c8.idx 38 07000000
check_bad c8 "a wrong length" "c8.idx: sequence 2 starts at byte 18, expected 20 (after the sequence before it)"
mk c9; patch c9.idx 38 ffffffff
check_bad c9 "a negative length" "c9.idx: sequence 1 has negative length -1"
mk c10; patch c10.idx 62 0400000000000000
check_bad c10 "a non-monotonic pointer" "c10.idx: sequence 2 starts at byte 4, expected 18 (after the sequence before it)"
mk c11; patch c11.idx 86 0000000000000000
check_bad c11 "a document index going back" "c11.idx: document index 2 is 0, outside [1, 3]"
mk c12; patch c12.idx 94 0200000000000000
check_bad c12 "a document index not ending at N" "c12.idx: document index ends at 2, not at the 3 sequences"
mk c13; patch c13.idx 70 0100000000000000
check_bad c13 "a document index not starting at 0" "c13.idx: document index starts at 1, not 0"
mk c14; printf '\0' >>c14.idx
check_bad c14 "trailing bytes" "c14.idx: 103 bytes, the header's 3 sequences and 4 document indices need 102"
mk c15; printf '\0\0\0' >>c15.idx
check_bad c15 "a multimodal index" "c15.idx: 105 bytes, the header's 3 sequences and 4 document indices need 102 (a multimodal index? not supported)"
mk c16; printf 'TNTIDX\0\0\1\0\0\0\0\0\0\0' >c16.idx
check_bad c16 "a legacy TNTIDX index" "c16.idx: a legacy lazy/cached (TNTIDX) index, not MMIDIDX"
mk c17; : >c17.idx
check_bad c17 "an empty .idx" "c17.idx: empty file"
mk c18; head -c 100 "$T/vec.tok" >c18.idx
check_bad c18 "a token stream as .idx" "c18.idx: not a Megatron indexed dataset (bad magic)"
mk c19; rm c19.bin
check_bad c19 "a missing .bin" "cannot open 'c19.bin': No such file or directory"
check_bad nosuch "a missing dataset" "cannot open 'nosuch.idx': No such file or directory"
mk c20; rm c20.bin; mkdir c20.bin
check_bad c20 "a directory as .bin" "cannot read 'c20.bin': a directory"
cp big.idx c21.idx && cp big.bin c21.bin && patch c21.bin 4 feffffff
check_bad c21 "a negative int32 token" "c21.bin: token 1 of sequence 0 is negative (-2)"
run idx-pack --check doc c5 big
is "$rc" 1 "--check goes on after a bad dataset and exits 1"
is "$(cat out)" "doc: ok: 2 sequences, 2 documents, 4 tokens (uint16)
big: ok: 2 sequences, 2 documents, 4 tokens (int32)" "and reports the good ones"

run idx-pack --info c3
is "$rc" 1 "--info of a truncated dataset exits 1"
is "$(cat err)" "idx-pack: c3.bin: truncated: 21 bytes, sequence 2 ends at byte 22" "--info names the problem"
run idx-pack --cat c8
is "$rc" 1 "--cat of a corrupt dataset exits 1"
is "$(cat err)" "idx-pack: c8.idx: sequence 2 starts at byte 18, expected 20 (after the sequence before it)" "--cat names the problem"
run idx-pack -o bad --merge doc c11
is "$rc" 1 "--merge of a corrupt dataset exits 1"
is "$(cat err)" "idx-pack: c11.idx: document index 2 is 0, outside [1, 3]" "--merge names the problem"
none_left bad "no dataset is left after a failed merge"
run idx-pack -o bad --merge doc big
is "$rc" 1 "--merge of datasets of different dtypes exits 1"
is "$(cat err)" "idx-pack: big.idx: dtype int32 differs from the output's uint16" "--merge names the dataset"
none_left bad "no dataset is left after a dtype mismatch"

# A failed write (file size limit) and an interrupted run leave nothing.
(ulimit -f 64; trap '' XFSZ; exec idx-pack -o bad b.tok b.tok b.tok b.tok) >out 2>err
is "$?" 3 "a failed write exits 3"
like err "^idx-pack: cannot write 'bad\.bin\.tmp[A-Za-z0-9]{6}': File too large$" "the failed write is named"
none_left bad "no dataset is left after a failed write"
(ulimit -f 64; trap '' XFSZ; exec idx-pack -o bad --merge b b b b) >out 2>err
is "$?" 3 "a failed write in --merge exits 3"
is "$(wc -l <err | tr -d ' ')" 1 "with one message"
like err "^idx-pack: cannot write 'bad\.bin\.tmp[A-Za-z0-9]{6}': File too large$" \
    "naming the output's file, not an input's"
none_left bad "no dataset is left after a failed merge write"
mkfifo fifo
idx-pack -o bad fifo 2>err &
pid=$!
exec 3>fifo
cat a.tok >&3
sleep 1
kill -TERM "$pid"
wait "$pid" 2>/dev/null
is "$?" 143 "SIGTERM stops a run"
exec 3>&-
none_left bad "no dataset is left after SIGTERM"

# Usage errors.
run idx-pack a.tok
is "$rc" 2 "no -o is a usage error"
is "$(cat err)" "idx-pack: -o prefix is missing" "and says so"
run idx-pack --cat -o x doc
is "$rc" 2 "-o with --cat is a usage error"
run idx-pack --cat --merge doc
is "$rc" 2 "two modes are a usage error"
run idx-pack --info
is "$rc" 2 "--info without a dataset is a usage error"
run idx-pack --info --docs 1:2 doc
is "$rc" 2 "--docs without --cat is a usage error"
run idx-pack --cat --docs x:2 doc
is "$rc" 2 "a bad --docs is a usage error"
like err "^idx-pack: --docs: 'x' is not" "a bad --docs is named"
run idx-pack --cat --vocab 10 --eod 10 doc
is "$rc" 2 "--eod not below --vocab is a usage error"
run idx-pack --check -f doc
is "$rc" 2 "-f without -o is a usage error"
if [ -w /dev/full ]; then
	idx-pack --cat doc >/dev/full 2>err
	is "$?" 3 "--cat to a full disk exits 3"
else
	skip "no /dev/full"
fi
done_testing
