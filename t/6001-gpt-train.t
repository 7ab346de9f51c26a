#!/bin/sh
# gpt-train on mock data with a tiny model: the loss falls, the log and
# checkpoint formats, bit-identical resumption, SIGTERM and SIGHUP, a NaN
# stop, and every bad-input path with its exit status and message.
. "${OWT_SRC:-.}/t/lib.sh"

cd "$T" || exit 3
# One thread: tiny models run faster on one, and the tests stay quick on
# a busy machine.
tiny="--mock-data --num-layers 2 --hidden-size 64 --num-attention-heads 4
    --seq-length 32 --max-position-embeddings 64 --vocab-size 300
    --micro-batch-size 4 --workers 1"

# The value of KEY in line N of a JSON-lines log.
val() {
	sed -n "$3p" "$1" | sed -n "s/.*\"$2\": \\([^,}]*\\).*/\\1/p"
}

run gpt-train $tiny --global-batch-size 8 --train-iters 40 --lr 1e-2 \
    --lr-warmup-iters 4 --log-interval 10 --eval-interval 20 --eval-iters 2 \
    --save ck --save-interval 20 --log-json log.jsonl \
    --lr-decay-style cosine --min-lr 6e-5
is "$rc" 0 "training on mock data exits 0"
first=$(val log.jsonl loss 1)
last=$(grep '"loss"' log.jsonl | tail -n 1 | sed 's/.*"loss": \([^,]*\).*/\1/')
awk -v a="$first" -v b="$last" 'BEGIN { exit !(a > 4.5 && b < a / 2) }' &&
    ok "the loss falls from $first to $last" ||
    not_ok "the loss falls from $first to $last"
like out '^gpt-train: GPT-2: 2 layers, 64 hidden, 4 heads, 64 positions, vocabulary 300 \(padded to 384\): 123392 parameters$' \
    "the model and its parameter count are logged"
like out '^gpt-train: cpu backend, 1 threads, ' "the backend and BLAS are logged"
like out '^ iteration       10/      40 \| consumed samples:           80 \| elapsed time per iteration \(ms\): [0-9]+\.[0-9] \| learning rate: [0-9]\.[0-9]{3}E-0[0-9] \| global batch size:     8 \| lm loss: [0-9]\.[0-9]{6}E\+00 \| loss scale: 1\.0 \| grad norm: [0-9]+\.[0-9]{3} \| number of skipped iterations:   0 \| number of nan iterations:   0 \|$' \
    "a log line on stdout in Megatron's format"
like out '^ validation loss at the end of training for test data \| lm loss value: [0-9]\.[0-9]{6}E\+00 \| lm loss PPL: [0-9]\.[0-9]{6}E\+[0-9]{2} \| $' \
    "the test loss is logged at the end"
is "$(cat err)" "" "nothing on stderr"
is "$(sed -n 1p log.jsonl | sed 's/: [-0-9.e+]*/: N/g')" \
    '{"iteration": N, "loss": N, "lr": N, "grad_norm": N, "tokens_per_s": N, "elapsed_s": N}' \
    "--log-json training rows have the six keys"
json_lines log.jsonl "every --log-json line is JSON"
is "$(grep -c '"valid_loss"' log.jsonl) $(grep -c '"test_loss"' log.jsonl)" "3 1" \
    "validation at 20 and 40 and at the end, test at the end"
# Iteration 10 runs at sample 72: 32 samples of warmup, decay to 320, so
# lr = 6e-5 + (1e-2 - 6e-5) * (1 + cos(pi * 40 / 288)) / 2.
is "$(val log.jsonl lr 1)" "0.0095343497" \
    "lr at iteration 10: cosine after a 32-sample warmup, Megatron's formula"
is "$(cat ck/latest_checkpointed_iteration.txt)" "40" \
    "latest_checkpointed_iteration.txt holds the last iteration, no newline"
ls ck/iter_0000020 | tr '\n' ' ' >files
is "$(cat files)" "config.json model.safetensors optimizer.safetensors trainer_state.json " \
    "a checkpoint has the weights, config, optimizer and trainer state"
like ck/iter_0000040/config.json '"n_layer": 2,' "config.json has HF's n_layer"
like ck/iter_0000040/config.json '"vocab_size": 300$' "config.json has the real vocabulary"
like ck/iter_0000040/config.json '"activation_function": "gelu_new",' "config.json names the tanh GELU"
head -c 4000 ck/iter_0000040/model.safetensors | tr -d '\000' >hdr
like hdr '"transformer.h.1.attn.c_attn.weight":\{"dtype":"F32","shape":\[64,192\]' \
    "c_attn.weight is Conv1D (in, out) with its HF name"
like hdr '"transformer.wte.weight":\{"dtype":"F32","shape":\[300,64\]' \
    "the embedding is saved with the real vocabulary rows"
unlike hdr 'lm_head' "the tied output layer is not saved twice"
like ck/iter_0000040/trainer_state.json '"consumed_train_samples": 320,' \
    "trainer state counts the samples consumed"
ls -a ck | grep -q '^\.' | grep -v '^\.\.\?$' && not_ok "no temporary files left" ||
    ok "no temporary files left in the save directory"

# Resumption: stop at 5 of 12, go on from the checkpoint, and compare every
# logged number with an uninterrupted run, dropout on.
opts="$tiny --global-batch-size 8 --train-iters 12 --lr 1e-2 --lr-warmup-iters 2
    --log-interval 1 --eval-interval 4 --eval-iters 2 --hidden-dropout 0.1
    --attention-dropout 0.1 -q"
run gpt-train $opts --save a --log-json a.jsonl
run gpt-train $opts --save b --log-json b.jsonl --exit-interval 5
is "$rc" 0 "--exit-interval exits 0"
is "$(cat b/latest_checkpointed_iteration.txt)" "5" "--exit-interval saves first"
run gpt-train $opts --save b --log-json b.jsonl --load b
is "$rc" 0 "resuming exits 0"
sed 's/, "tokens_per_s.*//' a.jsonl >a.txt
sed 's/, "tokens_per_s.*//' b.jsonl >b.txt
same a.txt b.txt "a resumed run logs the same losses, lr and norms, bit for bit"
cmp -s a/iter_0000012/model.safetensors b/iter_0000012/model.safetensors &&
    cmp -s a/iter_0000012/optimizer.safetensors b/iter_0000012/optimizer.safetensors &&
    ok "and ends with the same weights and moments" ||
    not_ok "and ends with the same weights and moments"

run gpt-train $tiny --train-iters 1000 --exit-duration-in-mins 0.000001 \
    --save dur --log-interval 100 --log-json dur.jsonl
like out '^gpt-train: exit duration reached at iteration 1; exiting$' \
    "--exit-duration-in-mins stops after the iteration that passes it"
is "$(cat dur/latest_checkpointed_iteration.txt) $(grep -c '"loss"' dur.jsonl)" "1 1" \
    "and saves, logging the last iteration"

# Resuming with only --load takes the options from the checkpoint.
run gpt-train --load b --mock-data --workers 1 --train-iters 13 -q --eval-iters 0
is "$rc" 0 "resuming with few options exits 0"
is "$(cat b/latest_checkpointed_iteration.txt)" "12" "without --save nothing is saved"
run gpt-train --load b --mock-data --workers 1 --train-samples 112 --eval-iters 0 \
    --log-interval 1
like out '^ iteration       14/      14 ' \
    "--train-samples on resuming replaces the checkpoint's --train-iters"

# A Hugging Face directory: model.safetensors and config.json only.
mkdir hf && cp a/iter_0000012/model.safetensors a/iter_0000012/config.json hf/
run gpt-train --load hf $tiny --train-iters 2 --log-interval 1 --eval-iters 0
is "$rc" 0 "starting from a Hugging Face directory exits 0"
like out '^ iteration        1/       2 ' "it starts at iteration 0"
run gpt-train --load a --finetune $tiny --train-iters 1 --log-interval 1 --eval-iters 0
like out '^ iteration        1/       1 ' "--finetune starts at iteration 0"

# SIGTERM and SIGHUP: finish the iteration, save, exit 0.
for sig in TERM HUP; do
	[ $sig = TERM ] && said=terminated || said="hung up"
	gpt-train $tiny --train-iters 100000 --log-interval 1 --eval-iters 0 \
	    --save $sig >$sig.out &
	pid=$!
	await $sig.out 'iteration  *3/' 30
	kill -$sig $pid
	wait $pid
	is "$?" 0 "SIG$sig exits 0"
	like $sig.out "^gpt-train: $said at iteration [0-9]+; exiting\$" \
	    "SIG$sig is reported"
	n=$(sed -n "s/.*$said at iteration \([0-9]*\).*/\1/p" $sig.out)
	is "$(cat $sig/latest_checkpointed_iteration.txt)" "$n" \
	    "SIG$sig saves the iteration it stopped at"
done

# A NaN stops before the update and saves nothing.
cp -R a nan
f=nan/iter_0000012/model.safetensors
size=$(wc -c <"$f")
printf '\000\000\300\177' | dd of="$f" bs=1 seek=$((size - 4)) conv=notrunc 2>/dev/null
run gpt-train $opts --load nan --save nan --train-iters 14
is "$rc" 1 "a NaN loss exits 1"
like err '^gpt-train: iteration 13: the loss is nan; stopping without saving \(the last checkpoint is intact\)$' \
    "a NaN loss is reported with the iteration"
is "$(cat nan/latest_checkpointed_iteration.txt)" "12" "the last checkpoint stays the latest"

# Bad input and usage.
fails 2 '^gpt-train: no data: give --data-path or --mock-data$' "no data" \
    gpt-train --train-iters 1
fails 2 '^gpt-train: one of --train-iters and --train-samples is required$' \
    "no training length" gpt-train --mock-data
run gpt-train $tiny --train-iters 1 --device cpu --fp16 --eval-iters 0
is "$rc:$(cat err)" "0:gpt-train: --fp16: the cpu backend computes in fp32 only: training in fp32" \
    "--fp16 on the cpu backend trains in fp32 with one warning"
fails 2 '^gpt-train: --fp16, --bf16 and --fp32 exclude each other$' "two precisions" \
    gpt-train $tiny --train-iters 1 --bf16 --fp32
fails 2 "^gpt-train: --device: 'gpu' is not auto, cpu or cuda$" "an unknown device" \
    gpt-train $tiny --train-iters 1 --device gpu
run gpt-train $tiny --train-iters 1 --device cuda -q
if [ "$rc" -eq 0 ]; then
	skip "--device cuda without a GPU: this machine has one"
else
	is "$rc:$(grep -Ec '^gpt-train: --device cuda: no CUDA (device|backend)' "$T/err")" 2:1 \
	    "--device cuda without a GPU or a CUDA build: exit 2, reported"
fi
fails 2 '^gpt-train: world size 1 is not a multiple of --tensor-model-parallel-size 2 x --pipeline-model-parallel-size 1$' \
    "tensor parallelism in one process" gpt-train $tiny --train-iters 1 --tensor-model-parallel-size 2
fails 2 '^gpt-train: --global-batch-size 6 is not a multiple of --micro-batch-size 4$' \
    "a global batch that is not a multiple" gpt-train $tiny --train-iters 1 --global-batch-size 6
fails 2 '^gpt-train: --seq-length 128 is beyond the 64 positions of the model \(--max-position-embeddings\)$' \
    "a sequence longer than the position table" gpt-train $tiny --train-iters 1 --seq-length 128
fails 2 '^gpt-train: --seq-length 100 is beyond the 64 positions of the model \(--max-position-embeddings, n_positions in the checkpoint\)$' \
    "a sequence longer than the checkpoint's positions" \
    gpt-train --load a --mock-data --workers 1 --train-iters 13 --seq-length 100
fails 2 '^gpt-train: hidden size 100 is not a multiple of the 3 attention heads$' \
    "heads that do not divide the channels" \
    gpt-train $tiny --train-iters 1 --hidden-size 100 --num-attention-heads 3
fails 2 "^gpt-train: --lr-decay-style: 'steep' is not constant, linear, cosine or inverse-square-root$" \
    "a bad decay style" gpt-train $tiny --train-iters 1 --lr-decay-style steep
fails 2 "^gpt-train: --lr: 'x' is not a number$" "a bad number" \
    gpt-train $tiny --train-iters 1 --lr x
fails 2 "^gpt-train: --seed: '4294967296' is out of range" "a seed beyond 32 bits" \
    gpt-train $tiny --train-iters 1 --seed 4294967296
fails 2 "^gpt-train: unexpected operand 'x'$" "an operand" \
    gpt-train $tiny --train-iters 1 x
fails 2 '^gpt-train: the warmup \(80 samples\) must be shorter than the decay \(40 samples\)$' \
    "a warmup longer than the decay" gpt-train $tiny --train-iters 10 --lr-warmup-iters 20
fails 1 '^gpt-train: a/iter_0000012/config.json: n_layer is 2, but --num-layers is 3$' \
    "a model option that differs from the checkpoint" \
    gpt-train $tiny --train-iters 13 --load a --num-layers 3
fails 1 '^gpt-train: a/iter_0000012/trainer_state.json: lr is 0.01, but the options make it differ \(use --override-opt_param-scheduler\)$' \
    "a learning rate that differs from the checkpoint" \
    gpt-train $tiny --train-iters 13 --load a --lr 0.02
run gpt-train $tiny --train-iters 13 --load a --lr 0.02 --override-opt_param-scheduler -q --eval-iters 0
is "$rc" 0 "--override-opt_param-scheduler accepts the options' schedule"
cp -R a bad
printf 'x' >bad/latest_checkpointed_iteration.txt
fails 1 '^gpt-train: bad/latest_checkpointed_iteration.txt: not an iteration number$' \
    "a corrupt latest file" gpt-train $tiny --train-iters 13 --load bad
printf '12' >bad/latest_checkpointed_iteration.txt
head -c 1000 a/iter_0000012/model.safetensors >bad/iter_0000012/model.safetensors
fails 1 "^gpt-train: bad/iter_0000012/model.safetensors: truncated: the header needs [0-9]+ bytes, the file has 1000$" \
    "a model truncated in its header" gpt-train $tiny --train-iters 13 --load bad
head -c 100000 a/iter_0000012/model.safetensors >bad/iter_0000012/model.safetensors
fails 1 "^gpt-train: bad/iter_0000012/model.safetensors: data of '[a-z_.0-9]+' is outside the file \\(truncated\\?\\)$" \
    "a model truncated in its data" gpt-train $tiny --train-iters 13 --load bad
printf '{"n_layer": 2' >bad/iter_0000012/config.json
fails 1 '^gpt-train: bad/iter_0000012/config.json: byte 14: expected' \
    "a corrupt config.json" gpt-train $tiny --train-iters 13 --load bad
sed 's/"n_embd": 64/"n_embd": 32/' a/iter_0000012/config.json >bad/iter_0000012/config.json
cp a/iter_0000012/model.safetensors bad/iter_0000012/
fails 1 "^gpt-train: bad/iter_0000012/model.safetensors: tensor 'transformer.wte.weight' has shape \\[300, 64\\], expected \\[300, 32\\]$" \
    "a tensor whose shape does not match config.json" \
    gpt-train --mock-data --workers 1 --train-iters 13 --load bad
sed 's/"gelu_new"/"relu"/' a/iter_0000012/config.json >bad/iter_0000012/config.json
fails 1 "^gpt-train: bad/iter_0000012/config.json: activation_function 'relu' is not supported" \
    "another activation" gpt-train --mock-data --workers 1 --train-iters 13 --load bad
: >file
fails 3 "^gpt-train: cannot create 'file': Not a directory$" \
    "an unwritable save directory" gpt-train $tiny --train-iters 1 --eval-iters 0 --save file/ck -q
fails 3 "^gpt-train: cannot create 'nodir/log.jsonl': No such file or directory$" \
    "an unwritable log" gpt-train $tiny --train-iters 1 --log-json nodir/log.jsonl
# Threads that cannot start: exit 3 with gpt-train's message, not 1 with
# libgomp's, also where OMP_STACKSIZE sets OpenMP's stack.
t8="--mock-data --num-layers 2 --hidden-size 64 --num-attention-heads 4
    --seq-length 32 --max-position-embeddings 64 --vocab-size 300
    --micro-batch-size 4 --workers 8 --train-iters 1 -q"
no_threads 8 "no room for 8 threads (a 1 GB stack each in 3 GB)" gpt-train $t8
if grep -q __asan_init "$OWT_BUILD/bin/gpt-train"; then
	skip "OMP_STACKSIZE=1G: a sanitizer build"
	skip "OMP_STACKSIZE=1G: a sanitizer build"
else
	fails 3 '^gpt-train: cannot start 8 threads: Resource temporarily unavailable$' \
	    "OMP_STACKSIZE=1G, no room for 8 threads in 3 GB," sh -c \
	    'ulimit -v 3000000 && OMP_STACKSIZE=1G exec "$@"' sh gpt-train $t8
fi
done_testing
