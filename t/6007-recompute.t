#!/bin/sh
# Activation recomputation in gpt-train: Megatron's --checkpoint-activations
# (v2.5), --recompute-activations and --recompute-granularity/-method/
# -num-layers train to the same bits as keeping every activation (dropout
# 0.1 on, two micro-batches an iteration): the same --log-json losses,
# learning rates and gradient norms, byte-identical checkpoints, also
# across a resumption; the bytes each mode allocates, logged; and the
# option errors with their messages.
. "${OWT_SRC:-.}/t/lib.sh"

cd "$T" || exit 3
tiny="--mock-data --num-layers 3 --hidden-size 64 --num-attention-heads 4
    --seq-length 32 --max-position-embeddings 64 --vocab-size 300
    --micro-batch-size 4 --global-batch-size 8 --workers 1 --eval-iters 0
    --log-interval 1 --hidden-dropout 0.1 --attention-dropout 0.1
    --train-iters 6 --lr 1e-3 --lr-warmup-iters 1"

# The --log-json rows without the timing fields.
numbers() {
	sed 's/, "tokens_per_s": .*//' "$1"
}

run gpt-train $tiny --save plain --log-json plain.json
is "$rc" 0 "the run without recomputation exits 0"
numbers plain.json >plain.num
is "$(wc -l <plain.num | tr -d ' ')" 6 "it logs 6 iterations"
# B=4, T=32, C=64, NH=4, 3 layers, V=300, in floats: a layer keeps
# 16 BTC + 4 BT + B NH T^2 = 147968; besides the layers 2 BTC + 3 BT +
# BT V + 11 BTC + B NH T^2 = 161664; and 2 BT int32 token ids.
like out '^gpt-train: activations: 2423296 bytes for micro-batches of 4 x 32 tokens; recomputation: none$' \
    "the activation bytes are logged: 3 x 147968 + 161664 floats"

check() {	# name, expected log line (ERE), options
	name=$1 want=$2
	shift 2
	run gpt-train $tiny --save "$name" --log-json "$name.json" "$@"
	is "$rc" 0 "$*: exits 0"
	like out "^gpt-train: activations: $want\$" "$*: its memory is logged"
	numbers "$name.json" >"$name.num"
	same "$name.num" plain.num "$*: the same losses, learning rates and gradient norms"
	for f in model.safetensors optimizer.safetensors trainer_state.json; do
		same "$name/iter_0000006/$f" "plain/iter_0000006/$f" \
		    "$*: the same $f"
	done
}

# Full, one layer a chunk: 3 inputs kept (3 BTC) and one layer's working
# set, 147968 - BTC: (3 x 8192 + 139776 + 161664) x 4 + 1024.
check ckpt1 '1305088 bytes for micro-batches of 4 x 32 tokens; recomputation: full, uniform, 1 layer per chunk' \
    --checkpoint-activations
# Chunks of 2 (layers 0-1, then 2): 2 chunk outputs, 1 output inside a
# chunk, 2 working sets: (3 x 8192 + 2 x 139776 + 161664) x 4 + 1024.
check ckpt2 '1864192 bytes for micro-batches of 4 x 32 tokens; recomputation: full, uniform, 2 layers per chunk' \
    --checkpoint-activations --checkpoint-num-layers 2
# All but the probabilities, which one layer's slice holds:
# (3 x (147968 - 16384) + 16384 + 161664) x 4 + 1024.
check selective '2292224 bytes for micro-batches of 4 x 32 tokens; recomputation: selective \(attention probabilities\)' \
    --recompute-activations
# One working set for layers 0 and 1, layer 2's own, 3 outputs: as ckpt2.
check block '1864192 bytes for micro-batches of 4 x 32 tokens; recomputation: full, block, the first 2 of 3 layers' \
    --recompute-granularity full --recompute-method block --recompute-num-layers 2
check uniform '1305088 bytes for micro-batches of 4 x 32 tokens; recomputation: full, uniform, 1 layer per chunk' \
    --recompute-granularity full --recompute-method uniform

# A resumed run recomputes too, and still matches.
run gpt-train $tiny --exit-interval 3 --save half --checkpoint-activations -q
run gpt-train $tiny --load half --save half --checkpoint-activations -q
is "$rc" 0 "a run saved and resumed with --checkpoint-activations exits 0"
same half/iter_0000006/model.safetensors plain/iter_0000006/model.safetensors \
    "... and ends with the weights of the uninterrupted run without it"

fails 2 '^gpt-train: --recompute-granularity full needs --recompute-method uniform or block$' \
    "full granularity without a method" \
    gpt-train $tiny --recompute-granularity full
fails 2 "^gpt-train: --recompute-granularity: 'partial' is not full or selective\$" \
    "an unknown granularity" \
    gpt-train $tiny --recompute-granularity partial
fails 2 "^gpt-train: --recompute-method: 'random' is not uniform or block\$" \
    "an unknown method" \
    gpt-train $tiny --recompute-granularity full --recompute-method random
fails 2 '^gpt-train: --checkpoint-activations and --recompute-activations exclude each other$' \
    "--checkpoint-activations with --recompute-activations" \
    gpt-train $tiny --checkpoint-activations --recompute-activations
fails 2 '^gpt-train: --recompute-activations and --recompute-granularity full exclude each other$' \
    "--recompute-activations with full granularity" \
    gpt-train $tiny --recompute-activations --recompute-granularity full
fails 2 '^gpt-train: --checkpoint-activations and --recompute-granularity selective exclude each other$' \
    "--checkpoint-activations with selective granularity" \
    gpt-train $tiny --checkpoint-activations --recompute-granularity selective
fails 2 '^gpt-train: --recompute-method needs --recompute-granularity full$' \
    "a method with selective recomputation" \
    gpt-train $tiny --recompute-activations --recompute-method block
fails 2 "^gpt-train: --recompute-num-layers: '0' is out of range 1..4096\$" \
    "no layers to recompute" \
    gpt-train $tiny --checkpoint-activations --recompute-num-layers 0

done_testing
