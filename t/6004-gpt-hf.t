#!/bin/sh
# Hugging Face transformers loads a gpt-train checkpoint and computes the
# same losses as gpt-sample --score (contrib/oracle/hf-check.py): the tensor names,
# shapes, tied output layer, config.json and padded vocabulary read as
# owt means them. Skips where no python3 has transformers (Debian has no
# package; the GPU machine's image has it, contrib/bench/gpu.sh runs this).
. "${OWT_SRC:-.}/t/lib.sh"

py=
for p in python3 /usr/bin/python3; do
	if "$p" -c 'import transformers, torch' 2>/dev/null; then
		py=$p
		break
	fi
done
[ -n "$py" ] || skip_all "no python3 with transformers and torch"

cd "$T" || exit 3
gpt-train --device cpu --mock-data --train-iters 20 --num-layers 2 \
    --hidden-size 64 --num-attention-heads 4 --seq-length 32 \
    --max-position-embeddings 64 --micro-batch-size 4 --lr 1e-3 \
    --eval-iters 0 --save ck -q ||
    { echo "Bail out! could not train the test model"; exit 1; }
printf '%s\n' '{"text": "The quick brown fox jumps over the lazy dog."}' \
    '{"text": "In the beginning was the Word."}' \
    '{"text": "caf\303\251, na\303\257ve, \342\202\254 20, <|endoftext|> in text"}' >t.jsonl
gpt-sample --device cpu --load ck --score --ids -q --sample-input-file t.jsonl >scored.jsonl ||
    { echo "Bail out! gpt-sample --score failed"; exit 1; }
exec "$py" "$OWT_SRC/contrib/oracle/hf-check.py" ck/iter_0000020 scored.jsonl
