#!/bin/sh
# bpe-encode's SentencePiece types (GPTSentencePieceTokenizer,
# Llama2Tokenizer, SentencePieceTokenizer): the ids equal Debian's
# spm_encode --output_format=id on models that spm_train makes here
# (BPE with byte fallback, unigram with unknown characters; small
# vocabularies, a fixed seed) from ../shared's sample, on the sample's
# lines and on the edge cases of t/bpe/spm-edge.txt; Llama2Tokenizer's
# BOS first; SentencePieceTokenizer's added tokens cut the text as
# Megatron's do; -d gives spm_decode's text; --output-prefix writes what
# bpe-encode | idx-pack writes; the options and models refused.
. "${OWT_SRC:-.}/t/lib.sh"
. "$OWT_SRC/t/tok.sh"

cd "$T" || exit 3
E=$OWT_SRC/t/bpe

fails 2 '^bpe-encode: --tokenizer-type Llama2Tokenizer needs --tokenizer-model FILE \(a SentencePiece model\)$' \
    "Llama2Tokenizer without a model" bpe-encode --tokenizer-type Llama2Tokenizer
fails 2 '^bpe-encode: --vocab-file: not with GPTSentencePieceTokenizer \(its --tokenizer-model is the SentencePiece model\)$' \
    "--vocab-file with a SentencePiece type" bpe-encode --tokenizer-type \
    GPTSentencePieceTokenizer --tokenizer-model m --vocab-file v --merge-file m
fails 2 '^bpe-encode: --tiktoken-pattern: not with SentencePieceTokenizer \(its --tokenizer-model is the SentencePiece model\)$' \
    "--tiktoken-pattern with a SentencePiece type" bpe-encode --tokenizer-type \
    SentencePieceTokenizer --tokenizer-model m --tiktoken-pattern gpt2
fails 1 "^bpe-encode: cannot open 'nosuch.model': No such file or directory$" \
    "a missing model" bpe-encode --tokenizer-type Llama2Tokenizer --tokenizer-model nosuch.model
printf 'not a model\n' >bad.model
fails 1 '^bpe-encode: bad.model: not a SentencePiece model$' "a file that is no model" \
    bpe-encode --tokenizer-type GPTSentencePieceTokenizer --tokenizer-model bad.model
# libsentencepiece is the plugin lib/owt/spm.so's, loaded with a model.
fails 2 "^bpe-encode: bad.model: SentencePiece models need owt's plugin lib/owt/spm.so, built where Debian's libsentencepiece-dev is installed: $T/nosuch.so: cannot open shared object file: No such file or directory\$" \
    "without the plugin a SentencePiece model is refused, naming it" \
    env OWT_SPM_PLUGIN="$T/nosuch.so" bpe-encode --tokenizer-type \
    GPTSentencePieceTokenizer --tokenizer-model bad.model
z=$(ls /lib/x86_64-linux-gnu/libz.so.1 /usr/lib/*/libz.so.1 2>/dev/null | head -n 1)
fails 2 "^bpe-encode: bad.model: SentencePiece models need .*: '$z' is not this build's SentencePiece plugin \(rebuild owt\)\$" \
    "another library as the plugin is refused" \
    env OWT_SPM_PLUGIN="$z" bpe-encode --tokenizer-type \
    GPTSentencePieceTokenizer --tokenizer-model bad.model
if command -v readelf >/dev/null; then
	for p in bpe-encode gpt-train gpt-sample; do
		readelf -d "$OWT_BUILD/bin/$p" | grep NEEDED >needed
		grep -q 'sentencepiece\|stdc++' needed; is "$?" 1 \
		    "$p links neither libsentencepiece nor libstdc++ (the plugin does)"
	done
else
	skip "no readelf"
fi

if ! command -v spm_train >/dev/null || ! command -v spm_encode >/dev/null; then
	skip "no spm_train or spm_encode (Debian's sentencepiece)"
	done_testing
fi
need_shared
S=$OWT_SHARED/data/corpus-sample.jsonl

# Text lines (spm_encode reads lines) and the same texts as JSONL.
tojsonl() {
	perl -CSD -MJSON::PP -ne 'BEGIN { $j = JSON::PP->new->canonical }
	    chomp; print $j->encode({ text => $_ }), "\n"' "$@"
}
perl -CO -MJSON::PP -ne 'for (split /\n/, JSON::PP->new->utf8->decode($_)->{text}) {
	print "$_\n" if /\S/ }' "$S" >lines.txt
head -c 200000 lines.txt | sed '$d' >train.txt
spm_train --input=train.txt --model_prefix=bpe --vocab_size=2000 \
    --model_type=bpe --byte_fallback=true --character_coverage=0.995 \
    --random_seed=1 --num_threads=1 --minloglevel=2 >/dev/null 2>&1
is "$?" 0 "spm_train makes a BPE model"
spm_train --input=train.txt --model_prefix=uni --vocab_size=2000 \
    --model_type=unigram --character_coverage=0.995 --random_seed=1 \
    --num_threads=1 --minloglevel=2 >/dev/null 2>&1
is "$?" 0 "spm_train makes a unigram model"
awk 'BEGIN { for (i = 0; i < 4000; i++) s = s "abc"; print s;
    for (i = 0; i < 3000; i++) t = t "0123456789"; print t }' >long.txt
cat "$E/spm-edge.txt" long.txt lines.txt >all.txt
tojsonl all.txt >all.jsonl
head -n 3000 all.jsonl >some.jsonl
head -n 3000 all.txt >some.txt
n=$(wc -l <all.txt)

gpt="--tokenizer-type GPTSentencePieceTokenizer"
for m in bpe uni; do
	spm_encode --model=$m.model --output_format=id <all.txt >want
	run bpe-encode --workers 2 $gpt --tokenizer-model $m.model all.jsonl
	is "$rc" 0 "$m: the edge cases and the sample's lines encode"
	cp out $m.tok
	perl "$E/tok2ids" <out >got
	same want got "$m: the ids of $n texts are spm_encode's"
	head -n 13 got >got.edge
	head -n 13 want >want.edge
	same want.edge got.edge "$m: the edge cases' ids are spm_encode's"
	spm_decode --model=$m.model --input_format=id <want >want.text
	run bpe-encode -dq $gpt --tokenizer-model $m.model $m.tok
	perl -CO -MJSON::PP -ne 'print JSON::PP->new->utf8->decode($_)->{text}, "\n"' \
	    out >got.text
	same want.text got.text "$m: -d gives spm_decode's text"
done
awk '{ for (i = 1; i <= NF; i++) if ($i == 0) n++ } END { print (n > 0) }' want >unk
is "$(cat unk)" 1 "uni: the texts hold characters outside the model (unk, id 0)"
grep -c '^<0x' bpe.vocab >nbyte
is "$(cat nbyte)" 256 "bpe: the model falls back to bytes"

# Llama2Tokenizer: the model's BOS (<s>, 1) first, EOD its </s> (2).
spm_encode --model=bpe.model --output_format=id <some.txt | sed 's/^/1 /; s/$/ 2/' >want
run bpe-encode --append-eod --workers 2 --tokenizer-type Llama2Tokenizer \
    --tokenizer-model bpe.model some.jsonl
cp out llama.tok
perl "$E/tok2ids" <out >got
same want got "Llama2Tokenizer: BOS, spm_encode's ids, EOD </s>"
od -An -tu4 -j8 -N8 llama.tok | awk '{ print $1, $2 }' >hdr
is "$(cat hdr)" "2000 2" "Llama2Tokenizer: the stream's vocabulary and EOD are the model's"
bpe-encode -q --append-eod --tokenizer-type Llama2Tokenizer \
    --tokenizer-model bpe.model some.jsonl | idx-pack -q -o rl
run bpe-encode -q --append-eod --workers 2 --tokenizer-type Llama2Tokenizer \
    --tokenizer-model bpe.model --output-prefix p some.jsonl
is "$rc" 0 "Llama2Tokenizer --output-prefix"
same rl.idx p_text_document.idx "Llama2Tokenizer: the .idx of bpe-encode | idx-pack"
same rl.bin p_text_document.bin "Llama2Tokenizer: the .bin of bpe-encode | idx-pack"
spm_decode --model=bpe.model --input_format=id <want >want.text
run bpe-encode -dq --tokenizer-type Llama2Tokenizer --tokenizer-model bpe.model llama.tok
perl -CO -MJSON::PP -ne 'print JSON::PP->new->utf8->decode($_)->{text}, "\n"' out >got.text
same want.text got.text "Llama2Tokenizer: -d drops BOS, as spm_decode does"
printf '{"text":""}\n' >empty.jsonl
run bpe-encode --tokenizer-type Llama2Tokenizer --tokenizer-model bpe.model empty.jsonl
perl "$E/tok2ids" <out >got
is "$(cat got)" 1 "Llama2Tokenizer: an empty text is a document of its BOS, as Megatron's"

# SentencePieceTokenizer: <CLS> <SEP> <EOD> <MASK> <PAD> added after the
# 2000 pieces (the model has no pad), <s> and </s> its own; each of them
# as text cuts the text, the parts encoded apart.
sp="--tokenizer-type SentencePieceTokenizer --tokenizer-model bpe.model"
ids() { printf '%s\n' "$1" | spm_encode --model=bpe.model --output_format=id; }
printf '%s\n' "$(ids 'one') 2002 $(ids 'two') 1 $(ids ' three') 2 2003 2000 2001 2004 $(ids 'four')" \
    "$(ids 'no tokens here')" "1 2 $(ids 'x<EO')" | tr -s ' ' >want
printf '%s\n' '{"text":"one<EOD>two<s> three</s><MASK><CLS><SEP><PAD>four"}' \
    '{"text":"no tokens here"}' '{"text":"<s></s>x<EO"}' >sp.jsonl
run bpe-encode $sp sp.jsonl
cp out sp.tok
perl "$E/tok2ids" <out >got
same want got "SentencePieceTokenizer: the added tokens cut the text"
od -An -tu4 -j8 -N8 sp.tok | awk '{ print $1, $2 }' >hdr
is "$(cat hdr)" "2005 2002" "SentencePieceTokenizer: 2005 ids, EOD <EOD>"
run bpe-encode -dq $sp sp.tok
printf '%s\n' '{"text":"one <EOD> two <s> three </s>  <MASK>  <CLS>  <SEP>  <PAD> four"}' \
    '{"text":"no tokens here"}' '{"text":" <s>  </s> x<EO"}' >want
same want out "SentencePieceTokenizer: -d writes each added token as ' TOKEN '"
bpe-encode -q --append-eod $sp some.jsonl | idx-pack -q -o rs
run bpe-encode -q --append-eod --workers 2 $sp --output-prefix s some.jsonl
same rs.idx s_text_document.idx "SentencePieceTokenizer: the .idx of bpe-encode | idx-pack"
same rs.bin s_text_document.bin "SentencePieceTokenizer: the .bin of bpe-encode | idx-pack"
bpe-encode -q $gpt --tokenizer-model uni.model all.jsonl | idx-pack -q -o rg
run bpe-encode -q --workers 2 $gpt --tokenizer-model uni.model --output-prefix g all.jsonl
same rg.idx g_text_document.idx "GPTSentencePieceTokenizer: the .idx of bpe-encode | idx-pack"
same rg.bin g_text_document.bin "GPTSentencePieceTokenizer: the .bin of bpe-encode | idx-pack"

# A model without BOS: Llama2Tokenizer cannot put it first.
spm_train --input="$E/spm-edge.txt" --model_prefix=nobos --model_type=char \
    --bos_id=-1 --use_all_vocab=true --vocab_size=100 --minloglevel=2 >/dev/null 2>&1
fails 1 '^bpe-encode: nobos.model: the model has no BOS piece, which Llama2Tokenizer puts first$' \
    "Llama2Tokenizer on a model without BOS" \
    bpe-encode --tokenizer-type Llama2Tokenizer --tokenizer-model nobos.model empty.jsonl
done_testing
