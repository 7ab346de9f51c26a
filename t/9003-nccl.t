#!/bin/sh
# NCCL under gpt-train on one GPU: OWT_COMM=nccl makes a process a world
# of one NCCL rank (the one layout a single GPU can run), whose training
# must be the run without collectives, bit for bit: the same logged
# numbers and checkpoint bytes, with dropout, and with recomputation.
# A missing libnccl exits 3 naming it. Skips without a CUDA build or a
# device, and without libnccl.so.2 after the message test.
. "${OWT_SRC:-.}/t/lib.sh"

cd "$T" || exit 3
need_cuda_train

common="--mock-data --num-layers 2 --hidden-size 64 --num-attention-heads 4
    --seq-length 32 --max-position-embeddings 64 --vocab-size 256
    --micro-batch-size 4 --global-batch-size 8 --lr 3e-3 --train-iters 6
    --eval-interval 3 --eval-iters 1 --log-interval 1 --save-interval 6
    --hidden-dropout 0.1 --attention-dropout 0.1 --device cuda --fp32"

OWT_COMM=nccl OWT_NCCL=/nonexistent/libnccl.so.2
export OWT_COMM OWT_NCCL
fails 3 "^gpt-train: collectives on GPUs need NCCL: /nonexistent/libnccl.so.2: " \
    "OWT_COMM=nccl with a missing NCCL" gpt-train $common
unset OWT_NCCL
run gpt-train $common --train-iters 1
if [ "$rc" -ne 0 ]; then
	grep -q 'need NCCL' "$T/err" && skip_all "$(cat "$T/err")"
	echo "Bail out! OWT_COMM=nccl gpt-train: $(cat "$T/err")"
	exit 1
fi
unset OWT_COMM

# numbers FILE: the --log-json lines less the timing
numbers() {
	sed 's/, "tokens_per_s": .*//' "$1"
}

gpt-train $common --log-json a.json --save a >a.out 2>a.err ||
    { echo "Bail out! gpt-train without NCCL: $(cat a.err)"; exit 1; }
numbers a.json >a.num
unlike a.out 'collectives on' "without OWT_COMM one process has no collectives"

for mode in "" --checkpoint-activations; do
	rm -rf b
	run env OWT_COMM=nccl gpt-train $common $mode --log-json b.json --save b
	is "$rc" 0 "one NCCL rank${mode:+ with $mode} exits 0"
	like "$T/out" '^gpt-train: 1 rank, collectives on nccl \(\$OWT_COMM\)$' \
	    "... and says that its collectives are on NCCL"
	numbers b.json >b.num
	same b.num a.num "... logs the numbers of the run without collectives"
	for f in model optimizer; do
		same b/iter_0000006/$f.safetensors a/iter_0000006/$f.safetensors \
		    "... and saves the same $f.safetensors, bit for bit"
	done
done

done_testing
