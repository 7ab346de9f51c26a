#!/bin/sh
# gpt-train and gpt-sample with --tokenizer-type HuggingFaceTokenizer (a
# directory of tokenizer.json and tokenizer_config.json; GPT-2's, as
# contrib/oracle/hf-tokenizer-json.js writes it, whose ids t/4011 proves
# equal to Hugging Face's tokenizers): the checkpoint keeps both files
# (the same bytes), config.json their sha256s, so that its directory is
# the tokenizer; gpt-sample takes it with no flag, its prompts' ids are
# bpe-encode's, the flags naming the same directory give the same text,
# and another tokenizer.json (one byte more) is refused (exit 2).
. "${OWT_SRC:-.}/t/lib.sh"
. "$OWT_SRC/t/tok.sh"

cd "$T" || exit 3
command -v node >/dev/null 2>&1 || skip_all "no node (contrib/oracle/hf-tokenizer-json.js)"
node "$OWT_SRC/contrib/oracle/hf-tokenizer-json.js" gpt2 g2 \
    "$OWT_SRC/data/gpt2/encoder.json" "$OWT_SRC/data/gpt2/vocab.bpe" ||
    { echo "Bail out! hf-tokenizer-json.js gpt2"; exit 1; }
hf="--tokenizer-type HuggingFaceTokenizer --tokenizer-model g2"
man_jsonl >text.jsonl
bpe-encode -q --append-eod $hf text.jsonl | idx-pack -q -o d
shape=$(tiny_shape d)

run gpt-train $shape $hf --train-iters 2 --save ck
is "$rc" 0 "2 steps on HuggingFaceTokenizer's data"
it=ck/iter_0000002
same g2/tokenizer.json $it/tokenizer.json "the checkpoint keeps tokenizer.json"
same g2/tokenizer_config.json $it/tokenizer_config.json "and tokenizer_config.json"
s1=$(sha256sum g2/tokenizer.json | cut -c1-64)
s2=$(sha256sum g2/tokenizer_config.json | cut -c1-64)
grep -c "\"type\": \"HuggingFaceTokenizer\"\|\"tokenizer.json\": \"$s1\"\|\"tokenizer_config.json\": \"$s2\"\|\"vocab_size\": 50257\$" \
    $it/config.json >n
is "$(cat n)" 4 "config.json has the type, both sha256s and 50257 tokens"

printf 'The man page\nbpe-encode reads\n' >p.txt
run gpt-sample --load ck --sample-input-file p.txt --out-seq-length 6 --greedy \
    --workers 1 --genfile g.jsonl --ids
is "$rc" 0 "gpt-sample samples with the checkpoint's tokenizer"
perl -MJSON::PP -ne '$r = decode_json($_); print join(" ", @{$r->{prompt_ids}}), "\n"' \
    g.jsonl >got
printf '{"text":"The man page"}\n{"text":"bpe-encode reads"}\n' >p.jsonl
bpe-encode -q $hf p.jsonl | perl "$OWT_SRC/t/bpe/tok2ids" >want
same want got "the prompts' ids are bpe-encode's"
run gpt-sample --load ck --sample-input-file p.txt --out-seq-length 6 --greedy \
    --workers 1 $hf
perl -CO -MJSON::PP -ne 'print decode_json($_)->{text}, "\n"' g.jsonl >want
same want out "the flags naming the same directory give the same text"

mkdir g3 && cp g2/tokenizer_config.json g3/ && { cat g2/tokenizer.json; echo; } >g3/tokenizer.json
s3=$(sha256sum g3/tokenizer.json | cut -c1-64)
fails 2 "^gpt-sample: the tokenizer's tokenizer\\.json has sha256 $s3, where the checkpoint $it has $s1\$" \
    "gpt-sample with another tokenizer.json" gpt-sample --load ck --sample-input-file p.txt \
    --tokenizer-type HuggingFaceTokenizer --tokenizer-model g3
fails 2 "^gpt-train: the tokenizer's tokenizer\\.json has sha256 $s3, where the checkpoint $it has $s1\$" \
    "gpt-train --load with another tokenizer.json" gpt-train $shape --train-iters 3 --load ck \
    --tokenizer-type HuggingFaceTokenizer --tokenizer-model g3
done_testing
