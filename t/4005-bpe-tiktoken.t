#!/bin/sh
# bpe-encode --tokenizer-type TikTokenizer: the ids equal npm tiktoken's
# encode_ordinary (installed from t/tiktoken/'s lock; the script skips
# without npm or its registry) for r50k_base, p50k_base, cl100k_base and
# o200k_base, whose rank files contrib/oracle/tiktoken-ranks.js makes from
# the package's (the same bytes as OpenAI's); on the edge cases of
# t/bpe/tiktoken-edge.jsonl (contrib/oracle/make-tiktoken-edge.js), on long
# runs without white space, and on ../shared's 5 MB multilingual sample;
# --append-eod, ids above 65,535 in the stream (width 4) and in the
# dataset (int32) through --output-prefix as through idx-pack; -d; the
# types, options and rank files that are refused.
. "${OWT_SRC:-.}/t/lib.sh"
. "$OWT_SRC/t/tiktoken.sh"
. "$OWT_SRC/t/tok.sh"

cd "$T" || exit 3
E=$OWT_SRC/t/bpe
tt="--tokenizer-type TikTokenizer"

# Refusals need no reference.
fails 2 "^bpe-encode: --tokenizer-type: 'BertWordPieceCase' is not GPT2BPETokenizer, TikTokenizer, HuggingFaceTokenizer, SentencePieceTokenizer, GPTSentencePieceTokenizer or Llama2Tokenizer$" \
    "another type" bpe-encode --tokenizer-type BertWordPieceCase
fails 2 '^bpe-encode: --tokenizer-type TikTokenizer needs --tokenizer-model FILE \(a \.tiktoken rank file\)$' \
    "TikTokenizer without a model" bpe-encode $tt
fails 2 '^bpe-encode: --tokenizer-model: not with GPT2BPETokenizer \(--vocab-file and --merge-file\)$' \
    "--tokenizer-model with GPT-2" bpe-encode --tokenizer-model x.tiktoken
fails 2 '^bpe-encode: --tiktoken-pattern: only with --tokenizer-type TikTokenizer$' \
    "--tiktoken-pattern with GPT-2" bpe-encode --tiktoken-pattern cl100k_base
fails 2 "^bpe-encode: --tiktoken-pattern: 'cl200k' is not gpt2, r50k_base, p50k_base, cl100k_base, o200k_base or llama3$" \
    "an unknown encoding" bpe-encode $tt --tokenizer-model x --tiktoken-pattern cl200k
fails 1 "^bpe-encode: cannot open 'nosuch.tiktoken': No such file or directory$" \
    "a missing rank file" bpe-encode $tt --tokenizer-model nosuch.tiktoken
printf 'IQ== 0\nIg== x\n' >bad.tiktoken
fails 1 '^bpe-encode: bad.tiktoken:2: not "BASE64 RANK"$' "a line without a rank" \
    bpe-encode $tt --tokenizer-model bad.tiktoken
printf 'IQ== 0\nI!== 1\n' >bad.tiktoken
fails 1 "^bpe-encode: bad.tiktoken:2: 'I!==' is not base64$" "a token not in base64" \
    bpe-encode $tt --tokenizer-model bad.tiktoken
printf 'IQ== 0\r\n' >bad.tiktoken
fails 1 '^bpe-encode: bad.tiktoken:1: not "BASE64 RANK"$' "a line ended by CR LF" \
    bpe-encode $tt --tokenizer-model bad.tiktoken
printf 'IQ== 0\nIg== 1 \n' >bad.tiktoken
fails 1 '^bpe-encode: bad.tiktoken:2: not "BASE64 RANK"$' "a blank after the rank" \
    bpe-encode $tt --tokenizer-model bad.tiktoken
printf ' 0\n' >bad.tiktoken
fails 1 '^bpe-encode: bad.tiktoken:1: not "BASE64 RANK"$' "a rank without a token" \
    bpe-encode $tt --tokenizer-model bad.tiktoken
printf 'IQ== 0\n\nI!== 2\n' | gzip >bad.tiktoken.gz
fails 1 "^bpe-encode: bad.tiktoken.gz:3: 'I!==' is not base64$" \
    "a gzipped rank file: lines counted past an empty one" \
    bpe-encode $tt --tokenizer-model bad.tiktoken.gz
printf 'IQ== 0\n\nIg== 1' | gzip >small.tiktoken.gz
fails 2 '^bpe-encode: small.tiktoken.gz: 2 ranks: no encoding has that many \(--tiktoken-pattern names one\)$' \
    "an empty line passed over, a last line without its newline read" \
    bpe-encode $tt --tokenizer-model small.tiktoken.gz
printf 'IQ== 0\nIg== 1\n' >small.tiktoken
fails 2 '^bpe-encode: small.tiktoken: 2 ranks: no encoding has that many \(--tiktoken-pattern names one\)$' \
    "a rank file of no encoding's size" bpe-encode $tt --tokenizer-model small.tiktoken
fails 1 '^bpe-encode: small.tiktoken: 2 ranks, where cl100k_base has 100256$' \
    "a rank file of another size than the encoding's" \
    bpe-encode $tt --tokenizer-model small.tiktoken --tiktoken-pattern cl100k_base

if ! tiktoken_npm; then
	skip "$tiktoken_why"
	done_testing
fi

# The rank files, from npm tiktoken's: OpenAI's published files (the
# sha256 that tiktoken checks when it downloads them).
for e in r50k_base p50k_base cl100k_base o200k_base; do
	tiktoken_ranks $e
done
sha256sum r50k_base.tiktoken p50k_base.tiktoken cl100k_base.tiktoken o200k_base.tiktoken >got
cat >want <<'X'
306cd27f03c1a714eca7108e03d66b7dc042abe8c258b44c199a7ed9838dd930  r50k_base.tiktoken
94b5ca7dff4d00767bc256fdd1b27e5b17361d7b8a5f968547f9f23eb70d2069  p50k_base.tiktoken
223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7  cl100k_base.tiktoken
446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d  o200k_base.tiktoken
X
same want got "the rank files are OpenAI's"

# Edge cases and long runs without white space, for each encoding.
cp "$E/tiktoken-edge.jsonl" edge.jsonl
cat "$E/edge.jsonl" >>edge.jsonl
awk 'BEGIN { srand(7); a = d = r = "";
	for (i = 0; i < 10000; i++) { a = a "a"; d = d int(rand() * 10); r = r sprintf("%c", 97 + int(rand() * 26)) }
	printf "{\"text\":\"%s\"}\n{\"text\":\"%s\"}\n{\"text\":\"%s\"}\n", a, d, r }' >>edge.jsonl
for e in r50k_base p50k_base cl100k_base o200k_base; do
	tiktoken_ref $e edge.jsonl >want
	run bpe-encode $tt --tokenizer-model $e.tiktoken edge.jsonl
	is "$rc" 0 "$e: the edge cases encode"
	perl "$E/tok2ids" <out >got
	same want got "$e: the ids of the edge cases are tiktoken's"
done
# The encoding is named by the size of the rank file, or by the option.
run bpe-encode -q $tt --tokenizer-model cl100k_base.tiktoken --tiktoken-pattern cl100k_base edge.jsonl
perl "$E/tok2ids" <out >named
tiktoken_ref cl100k_base edge.jsonl >want
same want named "--tiktoken-pattern cl100k_base: the same ids"
run bpe-encode -q $tt --tokenizer-model r50k_base.tiktoken --tiktoken-pattern gpt2 edge.jsonl
perl "$E/tok2ids" <out >got
tiktoken_ref gpt2 edge.jsonl >want
same want got "gpt2 on r50k_base's ranks: tiktoken's gpt2"
run bpe-encode -q edge.jsonl
perl "$E/tok2ids" <out >gpt2
same gpt2 got "and GPT2BPETokenizer's"

# The stream: n_vocab, the EOD of --append-eod, and the width of the ids.
printf '{"text":"Hello world"}\n{"text":""}\n{"text":"\344\275\240\345\245\275"}\n' >h.jsonl
run bpe-encode -q --append-eod $tt --tokenizer-model cl100k_base.tiktoken h.jsonl
od -An -tx1 -N16 out | tr -d ' \n' >got
is "$(cat got)" "4f5754544f4b0204b5870100a1870100" "cl100k_base: width 4, n_vocab 100277, EOD 100257"
perl "$E/tok2ids" <out >got
printf '9906 1917 100257\n57668 53901 100257\n' >want
same want got "--append-eod ends each document with <|endoftext|>, 100257"
run bpe-encode -q --append-eod $tt --tokenizer-model o200k_base.tiktoken h.jsonl
od -An -tx1 -N16 out | tr -d ' \n' >got
is "$(cat got)" "4f5754544f4b0204530d03003f0d0300" "o200k_base: n_vocab 200019, EOD 199999"
perl "$E/tok2ids" <out >got
printf '13225 2375 199999\n177519 199999\n' >want
same want got "an id above 65,535 (177519) in the stream"

# llama3 by its 128000 ranks (o200k_base's first, for want of Meta's
# file: the specials and the sizes are what is checked here, not ids).
head -n 128000 o200k_base.tiktoken >l3.tiktoken
run bpe-encode -q --append-eod $tt --tokenizer-model l3.tiktoken h.jsonl
od -An -tx1 -N16 out | tr -d ' \n' >got
is "$(cat got)" "4f5754544f4b020400f5010001f40100" "llama3: n_vocab 128256, EOD <|end_of_text|> 128001"
echo '13225 128009 2375 128255 128000' | mktok 128256 128001 >l3.tok
run bpe-encode -dq $tt --tokenizer-model l3.tiktoken l3.tok
is "$(cat out)" '{"text":"Hello<|eot_id|> world<|reserved_special_token_246|><|begin_of_text|>"}' \
    "llama3: -d names its special tokens as Llama 3.1 does"

# Invalid text is refused as for GPT-2 (tiktoken takes only Unicode text;
# JavaScript's would have U+FFFD where JSON has a lone surrogate).
printf '{"text":"a\377b"}\n' >inv.jsonl
fails 1 '^bpe-encode: inv.jsonl:1: invalid UTF-8 at byte 11$' "invalid UTF-8" \
    bpe-encode $tt --tokenizer-model cl100k_base.tiktoken inv.jsonl
printf '{"text":"a\\ud800b"}\n' >sur.jsonl
fails 1 '^bpe-encode: sur.jsonl:1: invalid JSON: unpaired UTF-16 surrogate escape at byte 11$' \
    "a lone surrogate" bpe-encode $tt --tokenizer-model cl100k_base.tiktoken sur.jsonl

# -d: the text back, special tokens as their text; not with another model.
grep -v '"text":""' edge.jsonl >full.jsonl
for e in cl100k_base o200k_base; do
	bpe-encode -q --append-eod $tt --tokenizer-model $e.tiktoken full.jsonl >$e.tok
	run bpe-encode -d $tt --tokenizer-model $e.tiktoken $e.tok
	is "$rc" 0 "$e: -d"
	cp out back.jsonl
	if tiktoken_same_text full.jsonl back.jsonl 2>err; then
		ok "$e: every edge case decodes back to its text"
	else
		not_ok "$e: every edge case decodes back to its text"
		sed 's/^/# /' err
	fi
done
echo '9906 100257 1917' | mktok 100277 100257 >sp.tok
run bpe-encode -d $tt --tokenizer-model cl100k_base.tiktoken sp.tok
is "$(cat out)" '{"text":"Hello<|endoftext|> world"}' "-d: a special token inside a document is its text"
echo '9906 100256' | mktok 100277 100257 >gap.tok
fails 1 '^bpe-encode: gap.tok: document 1: id 100256 is no token$' \
    "-d: an id between cl100k's ranks and its specials" \
    bpe-encode -d $tt --tokenizer-model cl100k_base.tiktoken gap.tok
fails 1 "^bpe-encode: cl100k_base.tok: the stream's vocabulary has 100277 tokens, the loaded one 200019$" \
    "-d: a stream of another encoding" \
    bpe-encode -d $tt --tokenizer-model o200k_base.tiktoken cl100k_base.tok

# --output-prefix writes what bpe-encode | idx-pack writes: int32 for o200k.
bpe-encode -q --append-eod $tt --tokenizer-model o200k_base.tiktoken edge.jsonl | idx-pack -q -o ref_e
run bpe-encode -q --append-eod $tt --tokenizer-model o200k_base.tiktoken --output-prefix p edge.jsonl
is "$rc" 0 "o200k_base --output-prefix"
same ref_e.idx p_text_document.idx "the .idx of bpe-encode | idx-pack"
same ref_e.bin p_text_document.bin "the .bin of bpe-encode | idx-pack"
od -An -tu1 -j17 -N1 p_text_document.idx | tr -d ' ' >got
is "$(cat got)" 4 "the dtype is int32 (4), Megatron's best_fitting_dtype from 65,500"
od -An -tu4 -v p_text_document.bin | tr -s ' ' '\n' | sort -n | tail -n 1 >got
is "$(cat got)" 199999 "the .bin holds the ids as int32, up to the EOD 199999"
run bpe-encode -q --append-eod $tt --tokenizer-model r50k_base.tiktoken --output-prefix r edge.jsonl
od -An -tu1 -j17 -N1 r_text_document.idx | tr -d ' ' >got
is "$(cat got)" 8 "r50k_base: uint16 (8)"

# ../shared's 5 MB multilingual sample.
if [ ! -f "$OWT_SHARED/data/corpus-sample.jsonl" ]; then
	skip "no ../shared test data"
	done_testing
fi
S=$OWT_SHARED/data/corpus-sample.jsonl
for e in cl100k_base o200k_base; do
	tiktoken_ref $e "$S" >want
	run bpe-encode --workers 2 $tt --tokenizer-model $e.tiktoken "$S"
	is "$rc" 0 "$e: the sample encodes"
	cp out $e.tok
	perl "$E/tok2ids" <out >got
	same want got "$e: the ids of the sample's 1029 documents are tiktoken's"
	run bpe-encode -dq $tt --tokenizer-model $e.tiktoken $e.tok
	cp out back.jsonl
	run bpe-encode -q $tt --tokenizer-model $e.tiktoken back.jsonl
	same $e.tok out "$e: decode then encode gives the same ids"
done
awk '{ for (i = 1; i <= NF; i++) if ($i > 65535) n++ } END { print (n > 0) }' got >big
is "$(cat big)" 1 "o200k_base: the sample has ids above 65,535"
bpe-encode -q --append-eod $tt --tokenizer-model o200k_base.tiktoken "$S" | idx-pack -q -o ref_s
run bpe-encode -q --append-eod --workers 2 $tt --tokenizer-model o200k_base.tiktoken \
    --input "$S" --output-prefix s
same ref_s.idx s_text_document.idx "the sample, o200k_base: the .idx of bpe-encode | idx-pack"
same ref_s.bin s_text_document.bin "the sample, o200k_base: the .bin of bpe-encode | idx-pack"
done_testing
