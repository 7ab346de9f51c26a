#!/bin/sh
# gpt-train on datasets that idx-pack wrote: the loss falls, blending,
# --split-rounding (the split both ways, kept by a checkpoint), bit-identical
# resumption with the data position, and bad datasets with their exit
# status and message. The sample order itself is checked against Megatron's
# in t/unit-gpt.c (t/data/megatron-order.txt).
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
like out '^gpt-train: data: a \(300 sequences, [0-9]+ tokens: train \[0, 270\), valid \[270, 285\), test \[285, 300\)\); --split-rounding legacy; train 320 samples of 33 tokens, [0-9]+ epochs?; valid 48 samples of 33 tokens, [0-9]+ epochs?; test 16 samples' \
    "the datasets, splits, rounding, samples and epochs are logged"
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
like out '^gpt-train: data: a \(0.5, 300 sequences, [0-9]+ tokens: train \[0, 291\), valid \[291, 300\), test none\), b \(0.5, 40 sequences, 360 tokens: train \[0, 39\), valid \[39, 40\), test none\); --split-rounding legacy; train 160 samples of 33 tokens \(a [0-9]+ epochs?, b [0-9]+ epochs\)$' \
    "both datasets, their weights and epochs are logged"
run gpt-train --data-path a b $tiny --train-iters 2 --eval-iters 0
is "$rc" 0 "prefixes without weights blend"
like out '^gpt-train: data: a \(300 sequences, .*\), b \(40 sequences, .*; train 16 samples of 33 tokens \(a [0-9]+, b 10: one epoch of each\)$' \
    "... one epoch of each, by its samples, as Megatron-core blends them"
fails 1 '^gpt-train: --data-path: one epoch of the unweighted blend holds [0-9]+ train samples, the run needs 16000; give weights$' \
    "an unweighted blend shorter than the run" \
    gpt-train --data-path a b $tiny --train-iters 2000 --eval-iters 0

# --split: Megatron v2.5 rounds each part, then shifts the boundaries;
# Megatron-core rounds the boundaries (1029 sequences at 900,50,50).
awk 'BEGIN { for (d = 0; d < 1029; d++) print d % 290 " " (d + 1) % 290 " 299" }' |
    mktok 300 299 >big.tok
idx-pack -q -o big big.tok || exit 3
for how in "" legacy core; do
	case $how in
	core) want='train \[0, 926\), valid \[926, 978\)' ;;
	*) want='train \[0, 927\), valid \[927, 978\)' ;;
	esac
	run gpt-train --data-path big $tiny --train-iters 1 --eval-iters 1 \
	    --split 900,50,50 ${how:+--split-rounding $how}
	like out "^gpt-train: data: big \\(1029 sequences, 3087 tokens: $want, test \\[978, 1029\\)\\); --split-rounding ${how:-legacy};" \
	    "--split 900,50,50 of 1029 sequences, --split-rounding ${how:-legacy (the default)}"
done
fails 2 "^gpt-train: --split-rounding: 'v2.5' is not legacy or core$" \
    "another rounding" gpt-train --data-path a $tiny --train-iters 1 --split-rounding v2.5
fails 2 "^gpt-train: --split: '90:5:5' is not numbers separated by ',' or '/', not all 0, as Megatron v2.5 reads it$" \
    "a split v2.5 cannot read" gpt-train --data-path a $tiny --train-iters 1 --split 90:5:5
run gpt-train --data-path a $tiny --train-iters 1 --split 90:5:5 --split-rounding core \
    --eval-iters 0
is "$rc" 0 "... which Megatron-core reads"
awk 'BEGIN { for (d = 0; d < 3; d++) print "1 2 3 299" }' | mktok 300 299 >three.tok
idx-pack -q -o three three.tok || exit 3
fails 1 "^gpt-train: three: --split '0,50,50' of 3 sequences puts a range below sequence 0 with v2.5's rounding \\(Megatron v2.5 fails on it\\)$" \
    "a split that v2.5's rounding breaks" \
    gpt-train --data-path three $tiny --train-iters 1 --split 0,50,50 --seq-length 2

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

# A checkpoint keeps the rounding; one saved before it existed has core's.
like r2/iter_0000010/trainer_state.json '^    "split-rounding": "legacy",?$' \
    "the checkpoint records --split-rounding"
ropts="--data-path a $tiny --train-iters 4 --eval-iters 0 --split 90,5,5"
run gpt-train $ropts --save r4 --exit-interval 2 --split-rounding core -q
run gpt-train $ropts --save r4 --load r4
like out '; --split-rounding core;' "a resumed run keeps the checkpoint's rounding"
run gpt-train $ropts --save r5 --exit-interval 2 -q
grep -v '"split-rounding"' r5/iter_0000002/trainer_state.json >r5.json &&
    mv r5.json r5/iter_0000002/trainer_state.json
run gpt-train $ropts --save r5 --load r5
like out '; --split-rounding core;' \
    "a checkpoint saved without it resumes in Megatron-core's order, its own"
run gpt-train $ropts --save r6 --exit-interval 2 -q
run gpt-train $ropts --save r6 --load r6 --split-rounding core
like out '; --split-rounding core;' "--split-rounding given on resuming wins"

# The vectors t/unit-gpt.c checks the order against are what
# contrib/oracle/megatron-order.py (Megatron's Python, in numpy) computes.
if /usr/bin/python3 -c 'import numpy' 2>/dev/null; then
	/usr/bin/python3 "$OWT_SRC/contrib/oracle/megatron-order.py" | sed 1d >vec.txt
	sed 1d "$OWT_SRC/t/data/megatron-order.txt" >vec-want.txt
	same vec.txt vec-want.txt "t/data/megatron-order.txt is contrib/oracle/megatron-order.py's"
else
	skip "no numpy for /usr/bin/python3: t/data/megatron-order.txt against contrib/oracle/megatron-order.py"
fi

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
