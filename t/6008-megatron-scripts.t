#!/bin/sh
# Megatron-LM users' command lines run with gpt-train in place of
# pretrain_gpt.py: the seed's single-GPU and distributed scripts (in one
# process with TP = PP = 1, and on 8 ranks under mpirun with the script's
# TP = 2 x PP = 4) with only the sizes shrunk through shell variables
# and every flag as written; the log in Megatron's format on stdout, the
# notes and warnings on stderr; Megatron's defaults; the fractional
# warmup; --load of a .pt file; the tokenizer's files checked; and a run
# cut in three by --exit-interval equal to one run, bit for bit.
. "${OWT_SRC:-.}/t/lib.sh"

cd "$T" || exit 3
mkdir -p model/checkpoints data
cp "$OWT_SRC/data/gpt2/encoder.json" model/gpt2-vocab.json
cp "$OWT_SRC/data/gpt2/vocab.bpe" model/gpt2-merges.txt
awk 'BEGIN { for (i = 1; i <= 120; i++)
	printf "{\"text\": \"Document %d says that %d plus %d makes %d.\"}\n",
	    i, i, i + 1, 2 * i + 1 }' >train_data.jsonl
bpe-encode -q --vocab-file ./model/gpt2-vocab.json \
    --merge-file ./model/gpt2-merges.txt --append-eod train_data.jsonl |
    idx-pack -q -o ./data/my-gpt2_text_document

# Timings vary; everything else in a log line is asserted.
mask() {
	sed -E 's/(elapsed time per iteration \(ms\)): [0-9]+\.[0-9]/\1: T/;
	    s/(lm loss|grad norm|lm loss value|lm loss PPL): [0-9]\.[0-9]+(E[-+][0-9]+)?/\1: V/g' "$1"
}

# The seed's single-GPU sanity run, GPT-2 small shrunk.
NUM_LAYERS=2 HIDDEN_SIZE=64 NUM_HEADS=4 SEQ_LENGTH=32 TRAIN_ITERS=6 INTERVAL=3
run gpt-train \
    --num-layers $NUM_LAYERS --hidden-size $HIDDEN_SIZE --num-attention-heads $NUM_HEADS \
    --seq-length $SEQ_LENGTH --max-position-embeddings $SEQ_LENGTH \
    --micro-batch-size 4 --global-batch-size 8 \
    --lr 6.0e-5 --train-iters $TRAIN_ITERS --lr-decay-style cosine --min-lr 6.0e-6 \
    --weight-decay 0.1 --lr-warmup-fraction 0.01 --clip-grad 1.0 --fp16 \
    --vocab-file ./model/gpt2-vocab.json --merge-file ./model/gpt2-merges.txt \
    --log-interval 1 --save-interval $INTERVAL --eval-interval $INTERVAL --eval-iters 5 \
    --save ./model/gpt2_small_output --load ./model/checkpoints/gpt2_small_init.pt \
    --data-path ./data/my-gpt2_text_document --data-impl mmap --split 900,50,50
is "$rc" 0 "the single-GPU script exits 0"
cat >want.err <<'EOF'
gpt-train: --data-impl: accepted; no effect
gpt-train: ./model/checkpoints/gpt2_small_init.pt: no such file; starting from scratch
gpt-train: --fp16: the cpu backend computes in fp32 only: training in fp32
EOF
same err want.err "stderr: the note, the missing .pt file, fp16 on the cpu backend"
grep -v '^gpt-train: \(cpu backend\|activations\|data\|memory\)' out | mask /dev/stdin >got.out
d=$(printf '%093d' 0 | tr 0 -)
dd=$(printf '%0113d' 0 | tr 0 -)
cat >want.out <<EOF
gpt-train: GPT-2: 2 layers, 64 hidden, 4 heads, 32 positions, vocabulary 50257 (padded to 50304): 3318592 parameters
 iteration        1/       6 | consumed samples:            8 | elapsed time per iteration (ms): T | learning rate: 5.673E-05 | global batch size:     8 | lm loss: V | loss scale: 1.0 | grad norm: V | number of skipped iterations:   0 | number of nan iterations:   0 |
 iteration        2/       6 | consumed samples:           16 | elapsed time per iteration (ms): T | learning rate: 4.699E-05 | global batch size:     8 | lm loss: V | loss scale: 1.0 | grad norm: V | number of skipped iterations:   0 | number of nan iterations:   0 |
 iteration        3/       6 | consumed samples:           24 | elapsed time per iteration (ms): T | learning rate: 3.343E-05 | global batch size:     8 | lm loss: V | loss scale: 1.0 | grad norm: V | number of skipped iterations:   0 | number of nan iterations:   0 |
$d
 validation loss at iteration 3 | lm loss value: V | lm loss PPL: V | 
$d
gpt-train: saved ./model/gpt2_small_output/iter_0000003
 iteration        4/       6 | consumed samples:           32 | elapsed time per iteration (ms): T | learning rate: 1.975E-05 | global batch size:     8 | lm loss: V | loss scale: 1.0 | grad norm: V | number of skipped iterations:   0 | number of nan iterations:   0 |
 iteration        5/       6 | consumed samples:           40 | elapsed time per iteration (ms): T | learning rate: 9.689E-06 | global batch size:     8 | lm loss: V | loss scale: 1.0 | grad norm: V | number of skipped iterations:   0 | number of nan iterations:   0 |
 iteration        6/       6 | consumed samples:           48 | elapsed time per iteration (ms): T | learning rate: 6.000E-06 | global batch size:     8 | lm loss: V | loss scale: 1.0 | grad norm: V | number of skipped iterations:   0 | number of nan iterations:   0 |
$d
 validation loss at iteration 6 | lm loss value: V | lm loss PPL: V | 
$d
gpt-train: saved ./model/gpt2_small_output/iter_0000006
-$dd
 validation loss at the end of training for val data | lm loss value: V | lm loss PPL: V | 
-$dd
--$dd
 validation loss at the end of training for test data | lm loss value: V | lm loss PPL: V | 
--$dd
EOF
same got.out want.out "stdout: Megatron's log, cosine after a warmup of 0.48 samples, and the saves"
like out '^gpt-train: data: ./data/my-gpt2_text_document \(120 sequences, [0-9]+ tokens: train \[0, 108\), valid \[108, 114\), test \[114, 120\)\); --split-rounding legacy; ' \
    "--split 900,50,50 of the 120 documents"
like out '^ iteration        1/       6 .* lm loss: 1\.08[0-9]{4}E\+01 \|' \
    "the first loss is about ln 50257"
like model/gpt2_small_output/iter_0000006/trainer_state.json '"lr-warmup-samples": 0.47999999999999998,' \
    "the checkpoint keeps the fractional warmup"
like model/gpt2_small_output/iter_0000006/config.json '"vocab_size": 50257$' \
    "the vocabulary of --vocab-file"

# The seed's distributed script, the sizes, the log interval and the
# checkpoint directory in variables: here in one process with TP = PP = 1
# and the global batch shrunk, below on 8 ranks.
cat >seed-dist.sh <<'SH'
gpt-train \
    --num-layers $NUM_LAYERS --hidden-size $HIDDEN_SIZE --num-attention-heads $NUM_HEADS \
    --seq-length $SEQ_LENGTH --max-position-embeddings $SEQ_LENGTH \
    --micro-batch-size 1 --global-batch-size $GLOBAL_BATCH \
    --lr 1.5e-4 --train-iters $TRAIN_ITERS --lr-decay-iters $TRAIN_ITERS \
    --lr-decay-style cosine --min-lr 1.0e-5 --weight-decay 0.1 \
    --lr-warmup-fraction 0.01 --clip-grad 1.0 --fp16 \
    --vocab-file ./model/gpt2-vocab.json --merge-file ./model/gpt2-merges.txt \
    --tensor-model-parallel-size $TP --pipeline-model-parallel-size $PP \
    --DDP-impl local --no-gradient-accumulation-fusion \
    --log-interval $LOG_INTERVAL --save-interval 1000 --eval-interval 500 --eval-iters 10 \
    --save $SAVE --load ./model/checkpoints/gpt2_1.3B_init.pt \
    --data-path ./data/my-gpt2_text_document --data-impl mmap --split 900,50,50
SH
NUM_LAYERS=2 HIDDEN_SIZE=64 NUM_HEADS=4 SEQ_LENGTH=32 GLOBAL_BATCH=4
TRAIN_ITERS=2 TP=1 PP=1 LOG_INTERVAL=10 SAVE=./model/gpt2_1.3B_output
export NUM_LAYERS HIDDEN_SIZE NUM_HEADS SEQ_LENGTH GLOBAL_BATCH TRAIN_ITERS \
    TP PP LOG_INTERVAL SAVE
run sh seed-dist.sh
is "$rc" 0 "the distributed script exits 0"
cat >want.err <<'EOF'
gpt-train: --DDP-impl: accepted; no effect
gpt-train: --data-impl: accepted; no effect
gpt-train: --no-gradient-accumulation-fusion: accepted; no effect
gpt-train: ./model/checkpoints/gpt2_1.3B_init.pt: no such file; starting from scratch
gpt-train: --fp16: the cpu backend computes in fp32 only: training in fp32
EOF
same err want.err "stderr: a note for each Python-detail flag, the .pt file, fp16"
grep '^ iteration' out | mask /dev/stdin >got.out
cat >want.out <<'EOF'
 iteration        2/       2 | consumed samples:            8 | elapsed time per iteration (ms): T | learning rate: 1.000E-05 | global batch size:     4 | lm loss: V | loss scale: 1.0 | grad norm: V | number of skipped iterations:   0 | number of nan iterations:   0 |
EOF
same got.out want.out "the last iteration logged, the decay at its end"
is "$(ls model/gpt2_1.3B_output)" "iter_0000002
latest_checkpointed_iteration.txt" "saved at the end"

# Megatron v2.5's examples/pretrain_gpt.sh, shrunk the same way.
CHECKPOINT_PATH=checkpoints/gpt2_345m
DATA_PATH=./data/my-gpt2_text_document
cp model/gpt2-vocab.json model/gpt2-merges.txt .
NUM_LAYERS=2 HIDDEN_SIZE=64 NUM_HEADS=4 SEQ_LENGTH=32 TRAIN_ITERS=2
run gpt-train \
       --num-layers $NUM_LAYERS \
       --hidden-size $HIDDEN_SIZE \
       --num-attention-heads $NUM_HEADS \
       --micro-batch-size 4 \
       --global-batch-size 8 \
       --seq-length $SEQ_LENGTH \
       --max-position-embeddings $SEQ_LENGTH \
       --train-iters $TRAIN_ITERS \
       --lr-decay-iters 320000 \
       --save $CHECKPOINT_PATH \
       --load $CHECKPOINT_PATH \
       --data-path $DATA_PATH \
       --vocab-file gpt2-vocab.json \
       --merge-file gpt2-merges.txt \
       --data-impl mmap \
       --split 949,50,1 \
       --distributed-backend nccl \
       --lr 0.00015 \
       --min-lr 1.0e-5 \
       --lr-decay-style cosine \
       --weight-decay 1e-2 \
       --clip-grad 1.0 \
       --lr-warmup-fraction .01 \
       --checkpoint-activations \
       --log-interval 100 \
       --save-interval 10000 \
       --eval-interval 1000 \
       --eval-iters 10 \
       --fp16
is "$rc" 0 "v2.5's examples/pretrain_gpt.sh exits 0"
cat >want.err <<'EOF'
gpt-train: --data-impl: accepted; no effect
gpt-train: --distributed-backend: accepted; no effect
gpt-train: checkpoints/gpt2_345m: no such checkpoint directory; starting from scratch
gpt-train: --fp16: the cpu backend computes in fp32 only: training in fp32
EOF
same err want.err "stderr: the notes, the fresh start, fp16"
like out '; recomputation: full, uniform, 1 layer per chunk$' \
    "--checkpoint-activations recomputes every layer"
# The warmup is 0.01 of 320000 x 8 samples: after 16, 1.5e-4 x 16 / 25600.
like out '^ iteration        2/       2 \| consumed samples:           16 \| .* \| learning rate: 9\.375E-08 \| global batch size:     8 \|' \
    "the last iteration logged, deep in the warmup"
is "$(cat $CHECKPOINT_PATH/latest_checkpointed_iteration.txt)" 2 "saved at the end"

# The seed's distributed script as it is meant to run: TP = 2 x PP = 4
# on 8 ranks (mpirun in place of torchrun), the sizes shrunk; its losses
# are those of the same script in one process, to the tolerance that
# tensor parallelism allows (sums split over ranks: gpt-train(1)).
if mpi_env; then
	NUM_LAYERS=4 HIDDEN_SIZE=64 NUM_HEADS=4 SEQ_LENGTH=32 GLOBAL_BATCH=4
	TRAIN_ITERS=3 LOG_INTERVAL=1
	TP=1 PP=1 SAVE=./model/dist_11
	sh seed-dist.sh >one.out 2>one.err
	is "$?" 0 "the distributed script in one process, 4 layers, exits 0"
	TP=2 PP=4 SAVE=./model/dist_24
	mpi_secs=300
	mpi_run 8 sh seed-dist.sh
	is "$rc" 0 "the distributed script on 8 ranks, TP = 2 x PP = 4, exits 0"
	sed -n 's/^ iteration .* lm loss: \([^ ]*\) .*/\1/p' one.out >l1
	sed -n 's/^ iteration .* lm loss: \([^ ]*\) .*/\1/p' "$T/out" >l8
	is "$(wc -l <l8 | tr -d ' ')" "$TRAIN_ITERS" "8 ranks: one log line an iteration, from one rank"
	is "$(paste l1 l8 | awk 'NF == 2 { n++; d = $1 - $2; if (d < 0) d = -d;
	    if (d > 2e-5 * $1) bad++ } END { print n + 0, bad + 0 }')" "$TRAIN_ITERS 0" \
	    "8 ranks: each loss that of one process within 2e-5 of it"
	is "$(cat model/dist_24/latest_checkpointed_iteration.txt)" "$TRAIN_ITERS" \
	    "8 ranks: one checkpoint, saved at the end"
else
	for i in 1 2 3 4 5; do
		skip "$mpi_why: the 8-rank run"
	done
fi

fails 2 '^gpt-train: world size 1 is not a multiple of --tensor-model-parallel-size 2 x --pipeline-model-parallel-size 4$' \
    "the script's TP=2 x PP=4 needs 8 ranks" gpt-train --mock-data --train-iters 1 \
    --tensor-model-parallel-size 2 --pipeline-model-parallel-size 4

# --load of Megatron's own checkpoint file.
: >model/checkpoints/init.pt
fails 1 '^gpt-train: model/checkpoints/init.pt: a Megatron-LM torch checkpoint, which gpt-train does not read: convert it with contrib/install/megatron-to-owt$' \
    "an existing .pt file" gpt-train --mock-data --train-iters 1 --load model/checkpoints/init.pt
fails 1 '^gpt-train: nosuch.pt: no such file; nothing to fine-tune from$' \
    "--finetune from a missing .pt file" gpt-train --mock-data --train-iters 1 \
    --load nosuch.pt --finetune

# The tokenizer's files and Python-detail flags with other values.
voc="--vocab-file ./model/gpt2-vocab.json --merge-file ./model/gpt2-merges.txt"
fails 1 '^gpt-train: ./model/gpt2-vocab.json: 50257 tokens, but --vocab-size is 300$' \
    "--vocab-size against --vocab-file" gpt-train --mock-data --train-iters 1 $voc --vocab-size 300
fails 2 '^gpt-train: --vocab-file and --merge-file go together$' "--vocab-file alone" \
    gpt-train --mock-data --train-iters 1 --vocab-file ./model/gpt2-vocab.json
fails 1 "^gpt-train: cannot open 'nosuch.json': No such file or directory$" "a missing --vocab-file" \
    gpt-train --mock-data --train-iters 1 --vocab-file nosuch.json --merge-file ./model/gpt2-merges.txt
fails 2 "^gpt-train: --tokenizer-type: 'BertWordPieceLowerCase' is not GPT2BPETokenizer, TikTokenizer, HuggingFaceTokenizer, SentencePieceTokenizer, GPTSentencePieceTokenizer or Llama2Tokenizer$" \
    "another tokenizer" gpt-train --mock-data --train-iters 1 --tokenizer-type BertWordPieceLowerCase
fails 2 "^gpt-train: --data-impl: 'lazy' is not mmap or infer \\(owt reads Megatron's mmap datasets only\\)$" \
    "--data-impl lazy" gpt-train --mock-data --train-iters 1 --data-impl lazy
fails 2 "^gpt-train: --DDP-impl: 'apex' is not local or torch$" "--DDP-impl apex" \
    gpt-train --mock-data --train-iters 1 --DDP-impl apex
fails 2 "^gpt-train: --distributed-backend: 'mpi' is not nccl or gloo$" \
    "--distributed-backend mpi" gpt-train --mock-data --train-iters 1 --distributed-backend mpi
small="--mock-data --train-iters 1 --num-layers 1 --hidden-size 32
    --num-attention-heads 2 --seq-length 8 --vocab-size 100 --eval-iters 0"
run gpt-train $small --num-workers 2 --no-load-rng --no-bias-dropout-fusion \
    --no-masked-softmax-fusion --distribute-checkpointed-activations \
    --tensorboard-dir tb --local_rank 0
cat >want.err <<'EOF'
gpt-train: --distribute-checkpointed-activations: accepted; no effect
gpt-train: --local_rank: accepted; no effect
gpt-train: --no-bias-dropout-fusion: accepted; no effect
gpt-train: --no-load-rng: accepted; no effect
gpt-train: --no-masked-softmax-fusion: accepted; no effect
gpt-train: --num-workers: accepted; no effect
gpt-train: --tensorboard-dir: accepted; no effect
EOF
same err want.err "the neighbours' Python-detail flags: one note each"
is "$rc:$(ls -d tb 2>/dev/null)" "0:" "and nothing done with them"
run gpt-train --mock-data --train-iters 1 --distributed-backend nccl -q --num-layers 1 \
    --hidden-size 32 --num-attention-heads 2 --seq-length 8 --vocab-size 100 --eval-iters 0
is "$rc:$(cat err)" "0:" "-q: no notes either"

tiny="--mock-data --num-layers 2 --hidden-size 64 --num-attention-heads 4
    --seq-length 32 --max-position-embeddings 64 --vocab-size 300
    --micro-batch-size 4 --workers 1 --eval-iters 0"

# Megatron's defaults, kept in the checkpoint.
run gpt-train $tiny --train-iters 2 --save def -q
tr -d ' \n' <def/iter_0000002/trainer_state.json >state
for kv in '"adam-beta2":0.999' '"attention-dropout":0.10000000000000001' \
    '"hidden-dropout":0.10000000000000001' '"weight-decay":0.01' \
    '"lr-decay-style":"linear"' '"min-lr":0' '"lr-warmup-samples":0' \
    '"clip-grad":1' '"lr":0.00059999999999999995'; do
	grep -qF "$kv" state && ok "default $kv" || not_ok "default $kv"
done

# A fractional warmup: 0.25 of 10 samples, 2.5; the lr after 2 samples is
# 8e-4 (a warmup cut to 2 samples would give 1e-3), shown as iteration
# 2's and used by iteration 3.
run gpt-train $tiny --micro-batch-size 1 --global-batch-size 1 --seq-length 8 \
    --train-iters 10 --lr-warmup-fraction 0.25 --lr 1e-3 --log-interval 1 \
    --log-json w.jsonl
like out '^ iteration        2/      10 \| consumed samples:            2 \| .* \| learning rate: 8\.000E-04 \|' \
    "the fractional warmup: the lr after iteration 2"
is "$(sed -n 3p w.jsonl | sed 's/.*"lr": \([^,]*\),.*/\1/')" "0.0008" \
    "and the lr iteration 3 used"

# --use-checkpoint-lr-scheduler takes the checkpoint's schedule.
run gpt-train $tiny --train-iters 3 --load def --lr 0.02 --use-checkpoint-lr-scheduler -q
is "$rc" 0 "--use-checkpoint-lr-scheduler: a differing --lr is no error"
fails 1 '^gpt-train: def/iter_0000002/trainer_state.json: lr is 0.0006, but the options make it differ \(use --override-opt_param-scheduler\)$' \
    "without it, it is" gpt-train $tiny --train-iters 3 --load def --lr 0.02
fails 2 '^gpt-train: --override-lr-scheduler and --use-checkpoint-lr-scheduler exclude each other$' \
    "the two schedulers' options" gpt-train $tiny --train-iters 3 --override-lr-scheduler \
    --use-checkpoint-lr-scheduler
run gpt-train $tiny --train-iters 3 --load def --lr 0.02 --override-lr-scheduler -q
is "$rc" 0 "--override-lr-scheduler, v2.5's spelling, takes the options'"

# The restart test: the same command three times equals one run.
K=2
run gpt-train $tiny --global-batch-size 8 --train-iters $((3 * K)) --save one -q
for i in 1 2 3; do
	run gpt-train $tiny --global-batch-size 8 --train-iters $((3 * K)) \
	    --save three --load three --exit-interval $K -q
	is "$rc:$(cat three/latest_checkpointed_iteration.txt)" "0:$((i * K))" \
	    "run $i of the cut run stops at iteration $((i * K))"
done
for f in model.safetensors optimizer.safetensors; do
	cmp -s one/iter_0000006/$f three/iter_0000006/$f &&
	    ok "three runs of $K iterations end with one run's $f" ||
	    not_ok "three runs of $K iterations end with one run's $f"
done
done_testing
