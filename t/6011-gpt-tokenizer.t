#!/bin/sh
# gpt-train and gpt-sample with bpe-encode's tokenizer flags, on a small
# SentencePiece model (spm_train on the man pages, a fixed seed):
# Llama2Tokenizer's data trains 2 steps; the checkpoint keeps the model
# file (the same bytes) and config.json its sha256 (sha256sum's), type,
# BOS and EOS; --vocab-size is checked against the tokenizer and the
# padding follows --make-vocab-size-divisible-by (gpt-sample's too, a
# model's vocabulary checked against it); gpt-sample samples and
# scores with it (the ids are spm_encode's after BOS, the text
# spm_decode's), taking the checkpoint's copy when no flag names one;
# gpt-sample --listen serves with it (/v1/completions, /tokenize);
# another tokenizer is refused by both (exit 2, both sha256s), a copy
# that is not what config.json says too (exit 1).
. "${OWT_SRC:-.}/t/lib.sh"
. "$OWT_SRC/t/tok.sh"

cd "$T" || exit 3
if ! command -v spm_train >/dev/null || ! command -v spm_encode >/dev/null; then
	skip_all "no spm_train or spm_encode (Debian's sentencepiece)"
fi
man_jsonl >text.jsonl
perl -CO -MJSON::PP -ne 'print decode_json($_)->{text}, "\n"' text.jsonl >text.txt
spm_train --input=text.txt --model_prefix=a --vocab_size=300 --model_type=bpe \
    --random_seed=1 --num_threads=1 --minloglevel=2 >/dev/null 2>&1
is "$?" 0 "spm_train makes a model"
spm_train --input=text.txt --model_prefix=b --vocab_size=280 --model_type=bpe \
    --random_seed=1 --num_threads=1 --minloglevel=2 >/dev/null 2>&1
llama="--tokenizer-type Llama2Tokenizer --tokenizer-model a.model"
bpe-encode -q --append-eod $llama text.jsonl | idx-pack -q -o d
shape=$(tiny_shape d)

run gpt-train $shape $llama --train-iters 2 --save ck
is "$rc" 0 "2 steps on Llama2Tokenizer's data"
like "$T/out" 'vocabulary 300 \(padded to 384\)' "the vocabulary is the model's 300, padded to 128s"
same a.model ck/iter_0000002/tokenizer.model "the checkpoint keeps the model file"
sum=$(sha256sum a.model | cut -c1-64)
bsum=$(sha256sum b.model | cut -c1-64)
grep -q "\"tokenizer.model\": \"$sum\"" ck/iter_0000002/config.json
is "$?" 0 "config.json has its sha256"
grep -c '"type": "Llama2Tokenizer"\|"bos_token_id": 1,\|"eos_token_id": 2,\|"vocab_size": 300$' \
    ck/iter_0000002/config.json >n
is "$(cat n)" 4 "config.json has the type, BOS <s> 1, EOS </s> 2 and 300 tokens"
perl -MJSON::PP -0777 -ne 'decode_json($_)' ck/iter_0000002/config.json
is "$?" 0 "config.json is JSON"
fails 1 '^gpt-train: a\.model: 300 tokens, but --vocab-size is 512$' \
    "a --vocab-size that is not the tokenizer's" \
    gpt-train $shape $llama --train-iters 2 --vocab-size 512
run gpt-train $shape $llama --train-iters 1 --make-vocab-size-divisible-by 64
like "$T/out" 'vocabulary 300 \(padded to 320\)' "--make-vocab-size-divisible-by 64: 320"

printf 'The man page\nbpe-encode reads\n' >p.txt
run gpt-sample --load ck --sample-input-file p.txt --out-seq-length 6 --greedy \
    --workers 1 --genfile g.jsonl --ids
is "$rc" 0 "gpt-sample samples with the checkpoint's tokenizer"
perl -MJSON::PP -ne '$r = decode_json($_); print join(" ", @{$r->{prompt_ids}}), "\n"' \
    g.jsonl >got
spm_encode --model=a.model --output_format=id <p.txt | sed 's/^/1 /' >want
same want got "the prompts' ids are BOS and spm_encode's"
perl -MJSON::PP -ne '$r = decode_json($_); print join(" ", @{$r->{ids}}), "\n"' g.jsonl |
    spm_decode --model=a.model --input_format=id >want
perl -CO -MJSON::PP -ne 'print decode_json($_)->{text}, "\n"' g.jsonl >got
same want got "the samples' text is spm_decode's"
run gpt-sample --load ck --sample-input-file p.txt --out-seq-length 6 --greedy \
    --workers 1 $llama
cp out t1.txt
perl -CO -MJSON::PP -ne 'print decode_json($_)->{text}, "\n"' g.jsonl >want
same want t1.txt "the flags naming the same tokenizer give the same text, streamed"
run gpt-sample --load ck --sample-input-file p.txt --out-seq-length 6 --greedy \
    --workers 1 --make-vocab-size-divisible-by 64
same t1.txt out "--make-vocab-size-divisible-by pads the output layer only: the same text"
run gpt-train --mock-data --num-layers 1 --hidden-size 16 --num-attention-heads 2 \
    --seq-length 16 --max-position-embeddings 16 --micro-batch-size 2 --workers 1 \
    --vocab-size 384 --train-iters 1 --eval-iters 0 --save mock -q
is "$rc" 0 "a model of 384 ids on mock data"
run gpt-sample --load mock --sample-input-file p.txt --out-seq-length 2 --greedy \
    --workers 1 $llama --make-vocab-size-divisible-by 128
is "$rc" 0 "a model of 384 ids: the tokenizer's 300 padded to 128s"
fails 1 '^gpt-sample: mock/iter_0000001/config.json: vocab_size 384 is neither the tokenizer.s 300 tokens nor them padded to a multiple of 64 \(320\)$' \
    "a model of 384 ids is not 300 padded to 64s" gpt-sample --load mock \
    --sample-input-file p.txt --workers 1 $llama --make-vocab-size-divisible-by 64
printf '{"text":"The man page"}\n' >s.jsonl
run gpt-sample --load ck --score --sample-input-file s.jsonl --workers 1
perl -MJSON::PP -ne 'print decode_json($_)->{tokens}, "\n"' out >got
echo "$(($(printf 'The man page\n' | spm_encode --model=a.model --output_format=id | wc -w) + 1))" >want
same want got "--score scores the ids and EOD, after BOS"

# --listen takes the checkpoint's tokenizer as the command line does: the
# greedy completion of a prompt is the greedy sample's, its text the tail
# of spm_decode's decoding of prompt and sample after the prompt's.
if command -v curl >/dev/null; then
	. "$OWT_SRC/t/serve.sh"
	serve_start llama --parallel 2
	run curl -s -X POST "$url/v1/completions" -H 'Content-Type: application/json' \
	    -d '{"prompt": "The man page", "max_tokens": 6, "temperature": 0}'
	perl -CO -MJSON::PP -0777 -ne 'print decode_json($_)->{choices}[0]{text}' out >got
	perl -MJSON::PP -ne '$r = decode_json($_); print join(" ", @{$r->{prompt_ids}},
	    @{$r->{ids}}), "\n"; exit' g.jsonl | spm_decode --model=a.model --input_format=id |
	    perl -pe 'chomp; s/^The man page//' >want
	if [ -s want ]; then ok "--listen: a completion of 6 tokens"; else not_ok "--listen: an empty completion"; fi
	same want got "--listen: the completion is the sample, decoded as spm_decode does"
	run curl -s -X POST "$url/tokenize" -d '{"prompt": "The man page"}'
	perl -MJSON::PP -0777 -ne 'print join(" ", @{decode_json($_)->{tokens}}), "\n"' out >got
	printf 'The man page\n' | spm_encode --model=a.model --output_format=id | sed 's/^/1 /' >want
	same want got "--listen: /tokenize gives BOS and spm_encode's ids"
	serve_stop
	is "$serve_rc" 0 "the server stops"
else
	skip "--listen: no curl"
fi

fails 2 "^gpt-sample: the tokenizer's tokenizer\\.model has sha256 $bsum, where the checkpoint ck/iter_0000002 has $sum$" \
    "gpt-sample with another model" gpt-sample --load ck --sample-input-file p.txt \
    --tokenizer-type Llama2Tokenizer --tokenizer-model b.model
fails 2 '^gpt-sample: the tokenizer is GPTSentencePieceTokenizer, where the checkpoint ck/iter_0000002 has Llama2Tokenizer$' \
    "gpt-sample with another type" gpt-sample --load ck --sample-input-file p.txt \
    --tokenizer-type GPTSentencePieceTokenizer --tokenizer-model a.model
fails 2 '^gpt-sample: the tokenizer is GPT2BPETokenizer, where the checkpoint ck/iter_0000002 has Llama2Tokenizer$' \
    "gpt-sample with GPT-2's files" gpt-sample --load ck --sample-input-file p.txt \
    --vocab-file "$OWT_SRC/data/gpt2/encoder.json" --merge-file "$OWT_SRC/data/gpt2/vocab.bpe"
fails 2 "^gpt-train: the tokenizer's tokenizer\\.model has sha256 $bsum, where the checkpoint ck/iter_0000002 has $sum$" \
    "gpt-train --load with another model" gpt-train $shape --train-iters 3 --load ck \
    --tokenizer-type Llama2Tokenizer --tokenizer-model b.model
fails 2 '^gpt-sample: the tokenizer is GPT2BPETokenizer, where the checkpoint ck/iter_0000002 has Llama2Tokenizer$' \
    "--listen with GPT-2's files on a checkpoint of another tokenizer" \
    gpt-sample --load ck --listen 127.0.0.1:0 --workers 1 \
    --vocab-file "$OWT_SRC/data/gpt2/encoder.json" --merge-file "$OWT_SRC/data/gpt2/vocab.bpe"

run gpt-train $shape --train-iters 3 --load ck --save ck2
is "$rc" 0 "--load without tokenizer flags goes on"
same a.model ck2/iter_0000003/tokenizer.model "and its checkpoints keep the tokenizer"
printf 'x' >>ck2/iter_0000003/tokenizer.model
fails 1 "^gpt-sample: ck2/iter_0000003/tokenizer\\.model: sha256 [0-9a-f]*, where config\\.json has $sum$" \
    "a kept copy that is not what config.json says" gpt-sample --load ck2 --sample-input-file p.txt
done_testing
