#!/bin/sh
# gpt-train on datasets that idx-pack wrote: the loss falls, blending,
# bit-identical resumption with the data position, and bad datasets with
# their exit status and message.
. "${OWT_SRC:-.}/t/lib.sh"
. "$OWT_SRC/t/tok.sh"

cd "$T" || exit 3
# Documents that count up from a random start, then EOD 299: learnable.
awk 'BEGIN { srand(7); for (d = 0; d < 300; d++) { s = int(rand() * 299);
    n = 5 + int(rand() * 60); line = "";
    for (i = 0; i < n; i++) line = line (s + i) % 299 " "; print line "299" } }' |
    mktok 300 299 >a.tok
idx-pack -q -o a a.tok || exit 3
awk 'BEGIN { for (d = 0; d < 40; d++) print "7 7 7 7 7 7 7 7 299" }' | mktok 300 299 >b.tok
idx-pack -q -o b b.tok || exit 3
tiny="--num-layers 2 --hidden-size 64 --num-attention-heads 4 --seq-length 32
    --max-position-embeddings 64 --vocab-size 300 --micro-batch-size 4
    --global-batch-size 8 --workers 1"

run gpt-train --data-path a $tiny --train-iters 40 --lr 1e-2 --lr-warmup-iters 4 \
    --log-interval 10 --eval-interval 20 --eval-iters 2 --split 90,5,5 \
    --log-json log.jsonl
is "$rc" 0 "training on an idx-pack dataset exits 0"
like err '^gpt-train: data: a \(1, 300 sequences, [0-9]+ tokens\); train 320 samples of 33 tokens, [0-9]+ epochs?; valid 48 samples of 33 tokens, [0-9]+ epochs?; test 16 samples' \
    "the datasets, splits, samples and epochs are logged"
first=$(sed -n '1s/.*"loss": \([^,]*\).*/\1/p' log.jsonl)
last=$(grep '"loss"' log.jsonl | tail -n 1 | sed 's/.*"loss": \([^,]*\).*/\1/')
awk -v a="$first" -v b="$last" 'BEGIN { exit !(b < a - 1) }' &&
    ok "the loss falls from $first to $last" || not_ok "the loss falls from $first to $last"
is "$(grep -c valid_loss log.jsonl) $(grep -c test_loss log.jsonl)" "3 1" \
    "validation and test losses on the dataset's own ranges"

# Blending: b is all 7s, so more of it lowers the loss the model ends with.
run gpt-train --data-path 0.5 a 0.5 b $tiny --train-iters 20 --lr 1e-2 \
    --eval-iters 0 --log-interval 20
is "$rc" 0 "blending two datasets by weight exits 0"
like err '^gpt-train: data: a \(0.5, 300 sequences, [0-9]+ tokens\), b \(0.5, 40 sequences, 360 tokens\); train 160 samples' \
    "both datasets and their weights are logged"
run gpt-train --data-path a b $tiny --train-iters 2 --eval-iters 0
like err '^gpt-train: data: a \(0\.9[0-9]*, .*\), b \(0\.0[0-9]*, ' \
    "prefixes without weights blend by their tokens"

# Resumption on a dataset continues at the same sample.
opts="--data-path a $tiny --train-iters 10 --lr 1e-2 --log-interval 1
    --eval-interval 4 --eval-iters 1 --split 90,5,5 -q"
run gpt-train $opts --save r1 --log-json r1.jsonl
run gpt-train $opts --save r2 --log-json r2.jsonl --exit-interval 3
run gpt-train $opts --save r2 --log-json r2.jsonl --load r2
sed 's/, "tokens_per_s.*//' r1.jsonl >r1.txt
sed 's/, "tokens_per_s.*//' r2.jsonl >r2.txt
same r1.txt r2.txt "a run resumed on a dataset logs the same numbers, bit for bit"
run gpt-train $opts --save r3 --log-json r3.jsonl --seed 99
cmp -s r1.jsonl r3.jsonl && not_ok "another --seed gives another order" ||
    ok "another --seed gives another order"

# Bad datasets.
fails 1 "^gpt-train: cannot open 'nosuch.idx': No such file or directory$" \
    "a missing dataset" gpt-train --data-path nosuch $tiny --train-iters 1
head -c 40 a.idx >c.idx
cp a.bin c.bin
fails 1 '^gpt-train: c.idx: ' "a truncated index" \
    gpt-train --data-path c $tiny --train-iters 1
fails 1 '^gpt-train: a.bin: token id 299 is not below the vocabulary size 299 \(--vocab-size\)$' \
    "token ids beyond the vocabulary" \
    gpt-train --data-path a $tiny --train-iters 2 --vocab-size 299
fails 1 "^gpt-train: a: the train split of --split '0, 1, 0' is empty$" \
    "an empty training range" gpt-train --data-path a $tiny --train-iters 1 --split '0, 1, 0'
fails 2 "^gpt-train: --data-path: weights and prefixes must pair up \\('b' has no prefix\\)$" \
    "a weight without a prefix" gpt-train --data-path 0.5 a b $tiny --train-iters 1
fails 2 "^gpt-train: --data-path: '0' is not a positive weight$" \
    "a zero weight" gpt-train --data-path 1 a 0 b $tiny --train-iters 1
fails 2 "^gpt-train: --mock-data and --data-path exclude each other$" \
    "both data sources" gpt-train --data-path a --mock-data $tiny --train-iters 1
done_testing
