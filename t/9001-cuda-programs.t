#!/bin/sh
# gpt-train and gpt-sample on the GPU against the CPU, on the small model
# of t/7001 (the demo's King James text): 20 iterations with the same data
# in fp32 (losses within 1e-4 of each other); with dropout, a GPU run
# repeated and runs with activation recomputation bit-identical to it
# (logs and checkpoints); bf16 tracking fp32 (within 3%), fp16 from
# Megatron's loss scale 2^32 skipping overflows and then training;
# checkpoints interchangeable both ways; greedy text identical in fp32,
# whatever the batch; --score within 1e-5; int8 and bf16 sampling. Skips
# without a CUDA build or a device.
. "${OWT_SRC:-.}/t/lib.sh"

cd "$T" || exit 3
need_cuda_train

bpe-encode --append-eod -q "$OWT_SRC/contrib/demo/data/kjv.jsonl.gz" >kjv.tok &&
    idx-pack -q -o kjv kjv.tok ||
    { echo "Bail out! could not make the dataset"; exit 1; }
common="--data-path kjv --num-layers 2 --hidden-size 64
    --num-attention-heads 4 --seq-length 32 --max-position-embeddings 64
    --micro-batch-size 8 --workers 4 --lr 3e-3 --lr-warmup-iters 5
    --eval-iters 0 --split 100,0,0 --log-interval 1 -q
    --hidden-dropout 0 --attention-dropout 0 --adam-beta2 0.95
    --weight-decay 0.1 --lr-decay-style cosine --min-lr 6e-5"

# losses FILE: "iteration loss" per line of a --log-json file
losses() {
	sed -n 's/.*"iteration": \([0-9]*\), "loss": \([^,]*\),.*/\1 \2/p' "$1"
}

# within A B TOL: the largest |a - b| / |b| over the iterations both logged
within() {
	losses "$2" >b.l
	losses "$1" | awk -v tol="$3" '
	    FNR == NR { want[$1] = $2; next }
	    ($1 in want) && $2 != "null" { d = $2 - want[$1]; if (d < 0) d = -d
	    d /= want[$1]; if (d > max) max = d; n++ }
	    END { printf "%d iterations, largest difference %.3g\n", n, max
	    exit !(n > 0 && max <= tol) }' b.l -
}

gpt-train $common --train-iters 20 --device cpu --log-json cpu.json --save ck ||
    { echo "Bail out! CPU training failed"; exit 1; }
run gpt-train $common --train-iters 20 --device cuda --fp32 --log-json gpu.json --save gck
is "$rc" 0 "fp32 training on the GPU exits 0"
if within gpu.json cpu.json 1e-4 >w.out; then
	ok "fp32: the GPU's losses equal the CPU's within 1e-4 ($(cat w.out))"
else
	not_ok "fp32: the GPU's losses equal the CPU's within 1e-4 ($(cat w.out))"
fi

# Recomputation on the GPU: with dropout, the same numbers and the same
# checkpoint bytes as keeping every activation (deterministic reductions,
# the same masks); a second plain run repeats the first.
numbers() {
	sed 's/, "tokens_per_s": .*//' "$1"
}
drop="--hidden-dropout 0.1 --attention-dropout 0.1 --train-iters 10 --device cuda --fp32"
gpt-train $common $drop --log-json r0.json --save r0 &&
    gpt-train $common $drop --log-json r1.json --save r1 ||
    { echo "Bail out! GPU training with dropout failed"; exit 1; }
numbers r0.json >r0.num
numbers r1.json >r1.num
same r1.num r0.num "fp32 with dropout: a second GPU run logs the same numbers"
same r1/iter_0000010/model.safetensors r0/iter_0000010/model.safetensors \
    "... and saves the same weights, bit for bit"
for mode in --checkpoint-activations --recompute-activations; do
	rm -rf rc
	run gpt-train $common $drop $mode --log-json rc.json --save rc
	is "$rc" 0 "$mode on the GPU exits 0"
	numbers rc.json >rc.num
	same rc.num r0.num "$mode on the GPU: the same losses, learning rates and gradient norms"
	same rc/iter_0000010/model.safetensors r0/iter_0000010/model.safetensors \
	    "$mode on the GPU: the same weights"
	same rc/iter_0000010/optimizer.safetensors r0/iter_0000010/optimizer.safetensors \
	    "$mode on the GPU: the same optimizer state"
done

run gpt-train $common --train-iters 20 --device cuda --bf16 --log-json bf16.json
if grep -q 'no bf16 tensor cores' "$T/err"; then
	skip "no bf16 on this device (before sm_80)"
elif within bf16.json cpu.json 0.03 >w.out; then
	ok "bf16 tracks fp32 within 3% ($(cat w.out))"
else
	not_ok "bf16 tracks fp32 within 3% ($(cat w.out); status $rc)"
fi

run gpt-train $common --train-iters 40 --device cuda --fp16 --log-json fp16.json
is "$rc" 0 "fp16 training exits 0"
skipped=$(sed -n 's/.*"skipped": \([0-9]*\).*/\1/p' fp16.json | awk '{ s += $1 } END { print s + 0 }')
last=$(losses fp16.json | tail -n 1 | cut -d' ' -f2)
first=$(losses cpu.json | head -n 1 | cut -d' ' -f2)
# Whether fp16 operands overflow is cuBLAS's kernel choice: skips are reported, not required.
if [ "$skipped" -lt 40 ] &&
    awk -v a="$last" -v b="$first" 'BEGIN { exit !(a != "null" && a < b) }'; then
	ok "fp16 from loss scale 2^32: the loss falls ($first to $last; $skipped overflowing iterations skipped)"
else
	not_ok "fp16 from loss scale 2^32: skipped $skipped, last loss $last (first $first)"
fi
like fp16.json '"loss_scale": ' "fp16: the loss scale is logged"
# A skipped iteration's norm is inf: null, not %g's "inf", which JSON lacks.
json_lines fp16.json "fp16: every --log-json line is JSON ($skipped iterations skipped)"

# Checkpoints: GPU to CPU and back.
run gpt-train $common --train-iters 20 --device cuda --fp32 --exit-interval 10 --save half
run gpt-train $common --train-iters 20 --device cpu --load half --save half --log-json resumed.json
is "$rc" 0 "a GPU checkpoint resumes on the CPU"
if within resumed.json cpu.json 1e-4 >w.out; then
	ok "GPU then CPU: iterations 11-20 match the CPU run within 1e-4 ($(cat w.out))"
else
	not_ok "GPU then CPU: iterations 11-20 match the CPU run within 1e-4 ($(cat w.out))"
fi

# Sampling.
printf 'And the LORD said unto\nIn the beginning\n\nAnd David went\nThe\n' >p.txt
g="gpt-sample --load ck --workers 4 -q --greedy --ids --out-seq-length 32 --sample-input-file p.txt"
$g --device cpu --genfile cpu.jsonl
run $g --device cuda --genfile gpu.jsonl
is "$rc" 0 "gpt-sample --device cuda exits 0"
same gpu.jsonl cpu.jsonl "fp32 greedy samples on the GPU are the CPU's, token for token"
run $g --device cuda --micro-batch-size 1 --genfile gpu1.jsonl
same gpu1.jsonl cpu.jsonl "... and one prompt at a time gives the same text"
run gpt-sample --load gck --device cpu --workers 4 -q --greedy --ids --out-seq-length 32 --sample-input-file p.txt --genfile gck.jsonl
is "$rc" 0 "a GPU-trained checkpoint samples on the CPU"

gzip -dc "$OWT_SRC/contrib/demo/data/kjv.jsonl.gz" | head -n 20 >s.jsonl
nll() {
	gpt-sample --load ck --score -q --workers 4 --sample-input-file s.jsonl "$@" |
	    sed -n 's/.*"nll": *\([^,}]*\).*/\1/p'
}
nll --device cpu >nll.cpu
for mode in --fp32 --int8 --bf16; do
	nll --device cuda $mode >nll.gpu
	tol=1e-5
	[ $mode = --fp32 ] || tol=2e-2
	if [ -s nll.gpu ] && paste nll.gpu nll.cpu | awk -v tol=$tol '
	    { d = $1 - $2; if (d < 0) d = -d; if (d / $2 > max) max = d / $2; n++ }
	    END { printf "%d texts, largest relative difference %.3g\n", n, max
	    exit !(n == 20 && max <= tol) }' >w.out; then
		ok "--score $mode on the GPU: mean NLL within $tol of the CPU's fp32 ($(cat w.out))"
	else
		not_ok "--score $mode on the GPU: mean NLL within $tol of the CPU's fp32 ($(cat w.out))"
	fi
done

run gpt-sample --load ck --device cpu --bf16 --sample-input-file p.txt
is "$rc:$(grep -c '^gpt-sample: --bf16: the cpu backend computes in fp32: generating in fp32$' "$T/err")" 0:1 \
    "--bf16 on the CPU: fp32, with a warning"

done_testing
