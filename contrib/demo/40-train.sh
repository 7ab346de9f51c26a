# 40-train: a small GPT-2 (4 layers, 128 channels) trained for about a
# minute on the sample corpus ($DEMO/data/owt_text_document, the
# recipe's dataset from stage 20);
# the log shows the loss falling, contrib/install/plot-loss.sh draws it.
set -eu
data="--data-path $DEMO/data/owt_text_document"
if [ ! -f "$DEMO/data/owt_text_document.idx" ]; then
	echo "no $DEMO/data/owt_text_document.idx (stage 20 did not run): using --mock-data"
	data=--mock-data
fi
set -- $data --num-layers 4 --hidden-size 128 --num-attention-heads 4 \
    --seq-length 64 --micro-batch-size 8 --train-iters 300 --lr 2e-3 \
    --lr-warmup-iters 10 --log-interval 10 --eval-interval 50 \
    --eval-iters 4 --split 98,2,0 --exit-duration-in-mins 1 \
    --save "$DEMO/ckpt" --log-json "$DEMO/train.jsonl"
echo "\$ gpt-train $*"
gpt-train "$@"
first=$(sed -n '1s/.*"loss": \([^,]*\).*/\1/p' "$DEMO/train.jsonl")
last=$(grep '"loss"' "$DEMO/train.jsonl" | tail -n 1 | sed 's/.*"loss": \([^,]*\).*/\1/')
echo "training loss: $first at the first log line, $last at the last"
awk -v a="$first" -v b="$last" 'BEGIN { exit !(b < a) }' ||
    { echo "60-train: the loss did not fall" >&2; exit 1; }
if command -v gnuplot >/dev/null; then
	sh "$OWT_SRC/contrib/install/plot-loss.sh" "$DEMO/train.jsonl" "$DEMO/train-loss.png" >/dev/null &&
	    echo "loss curve: $DEMO/train-loss.png"
fi
echo "checkpoint: $DEMO/ckpt/iter_$(printf %07d "$(cat "$DEMO/ckpt/latest_checkpointed_iteration.txt")") (Hugging Face safetensors + config.json)"
