# 50-sample: text from the model the train stage saved in $DEMO/ckpt, a
# few prompts continued with top-k sampling and greedily, then the
# perplexity of the first documents of the dataset's first shard, fp32 and int8 (the
# model has seen them: a trained-on score, not a held-out one). The model
# was trained on 64-token sequences, so --seq-length 64 keeps to the
# positions it has learnt.
set -eu
printf 'And it came to pass\nFour score and seven years ago\nThe people of the United States\n' >"$DEMO/prompts.txt"
echo "\$ gpt-sample --load ckpt --seq-length 64 --top-k 40 --out-seq-length 40 < prompts.txt"
gpt-sample --load "$DEMO/ckpt" --seq-length 64 --top-k 40 --out-seq-length 40 \
    <"$DEMO/prompts.txt"
echo "\$ gpt-sample --load ckpt --seq-length 64 --greedy --out-seq-length 20 --genfile greedy.jsonl < prompts.txt"
gpt-sample -q --load "$DEMO/ckpt" --seq-length 64 --greedy --out-seq-length 20 \
    --genfile "$DEMO/greedy.jsonl" <"$DEMO/prompts.txt"
cut -c 1-200 "$DEMO/greedy.jsonl"
head -n 5 "$DEMO/data/7-shuffle/0-of-2.jsonl" >"$DEMO/score-in.jsonl"
echo "\$ head -n 5 data/7-shuffle/0-of-2.jsonl | gpt-sample --load ckpt --seq-length 64 --score > scored.jsonl"
gpt-sample --load "$DEMO/ckpt" --seq-length 64 --score \
    --sample-input-file "$DEMO/score-in.jsonl" \
    >"$DEMO/scored.jsonl"
sed 's/.*\("nll":[^,]*,"ppl":[^,]*,"tokens":[0-9]*\).*/  \1/' "$DEMO/scored.jsonl"
echo "\$ ... gpt-sample --load ckpt --seq-length 64 --score --int8 > /dev/null"
gpt-sample --load "$DEMO/ckpt" --seq-length 64 --score --int8 \
    --sample-input-file "$DEMO/score-in.jsonl" \
    >/dev/null
