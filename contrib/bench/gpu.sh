#!/bin/sh
# gpu.sh - the GPU run in one script: build and test (make check-gpu, the
# t/9*.t tests in build-gpu/), then measure on the first GPU, side by side
# with PyTorch on the same GPU where python3 has torch:
#
#   gpt-train, GPT-2 124M, T=1024, micro-batch $MB (16): tokens/s in bf16
#     and fp32, model FLOPs utilisation (llm.c's 6N + 6LCT FLOPs per token
#     against $PEAK_TFLOPS, default 989: the H200 SXM's published dense
#     BF16 tensor-core figure, NVIDIA's H200 datasheet (1,979 TFLOPS "with
#     sparsity", half of that dense); another GPU: set PEAK_TFLOPS from its
#     datasheet, and the line printed names the figure used),
#     peak GPU memory, and the profile of where the time goes
#     (OWT_CUDA_PROFILE); PyTorch: the same model and step, bf16 autocast,
#     fused attention (contrib/oracle/gpt2-torch.py bench --cuda 1 --bf16 1);
#   gpt-sample, the same shape, 256 new tokens at batch 1 and 8: tokens/s
#     in fp32, bf16 and int8; PyTorch: a key/value cache, fp32;
# and t/6004: Hugging Face transformers (in that machine's image) loads a
# gpt-train checkpoint and computes gpt-sample's losses.
#
# Run from the repository root on the GPU machine:
#   sh contrib/build/gpu-kit.sh    (here, once: yajl, zlib, zstd,
#                                   libmicrohttpd, SentencePiece to carry)
#   device run: sh contrib/bench/gpu.sh, carrying .gpu-kit
# With OUT set, $OUT gets gpu.txt (what it prints) and check-gpu.log as
# they are written (a run stopped from outside leaves what it reached),
# and logs.tar.gz (every run's log and --log-json) at the end. Each
# measured run is stopped after $STEP_SECS seconds (120), make check-gpu
# after $CHECK_SECS (400). NCCL: where no libnccl.so.2 is on the loader's
# path, the one in python3's nvidia-nccl package (PyTorch's) is named in
# OWT_NCCL. Without a GPU (make bench on a CPU machine) it says so and
# exits 0.
set -u
: "${OWT_SRC:=$(cd "$(dirname "$0")/../.." && pwd)}"
cd "$OWT_SRC" || exit 3
MB=${MB:-16}
# the model: GPT-2 124M unless a dry run on a CPU machine asks for less
LAYERS=${LAYERS:-12} HIDDEN=${HIDDEN:-768} HEADS=${HEADS:-12} SEQ=${SEQ:-1024}
SHAPE="--num-layers $LAYERS --hidden-size $HIDDEN --num-attention-heads $HEADS"
PEAK_TFLOPS=${PEAK_TFLOPS:-989}
PEAK_SOURCE=${PEAK_SOURCE:-"H200 SXM datasheet, dense BF16"}
ITERS=${ITERS:-30}
STEP_SECS=${STEP_SECS:-120}
CHECK_SECS=${CHECK_SECS:-400}
LOG=$(mktemp -d) || exit 3
# where gpu.txt and check-gpu.log are written
if [ -n "${OUT:-}" ]; then mkdir -p "$OUT" || exit 3; TXT=$OUT; else TXT=$LOG; fi

main() {
if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L >/dev/null 2>&1; then
	echo "gpu.sh: no NVIDIA GPU here (nvidia-smi); nothing measured"
	echo 0 >"$LOG/status"
	return
fi
echo "== machine"
nvidia-smi -L
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv,noheader
command -v nvcc >/dev/null && nvcc --version | tail -n 2
echo "cpus $(nproc), $(uname -r)"
if [ -z "${OWT_NCCL:-}" ] && ! ldconfig -p 2>/dev/null | grep -q 'libnccl\.so\.2'; then
	n=$(python3 -c 'import nvidia.nccl, os; print(os.path.join(list(nvidia.nccl.__path__)[0], "lib", "libnccl.so.2"))' 2>/dev/null)
	[ -n "$n" ] && [ -f "$n" ] && OWT_NCCL=$n && export OWT_NCCL
fi
echo "nccl: ${OWT_NCCL:-libnccl.so.2 from the loader's path}"

# The toolkit's own nvcc when there is one: CUDA_HOME (lib64: cudart,
# cuBLAS) is taken from its path.
[ -x /usr/local/cuda/bin/nvcc ] && NVCC=/usr/local/cuda/bin/nvcc && export NVCC
echo "nvcc: ${NVCC:-$(command -v nvcc)}"
echo "== make check-gpu"
t0=$(date +%s)
timeout "$CHECK_SECS" make -j"$(nproc)" check-gpu >"$TXT/check-gpu.log" 2>&1
rc=$?
grep -E '^(ok|not ok)|^t/|Result|Bail|error' "$TXT/check-gpu.log" | grep -v '^ok' | tail -n 60
echo "make check-gpu: status $rc ($(($(date +%s) - t0)) s); full log in check-gpu.log"
B=${GPU_BUILD:-$OWT_SRC/build-gpu}
[ -x "$B/bin/gpt-train" ] || { echo "gpu.sh: no build-gpu/bin/gpt-train; stopping"; return; }
PATH=$B/bin:$PATH
export PATH

py=$(command -v python3)
torch=no
[ -n "$py" ] && "$py" -c 'import torch; assert torch.cuda.is_available()' 2>/dev/null && torch=yes

# median of column 1 of stdin
median() {
	sort -n | awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)]; else print 0 }'
}

# train PREC: 124M at T=1024 on mock data; prints "tokens/s peak_GB"
train() {
	prec=$1
	shift
	f=$LOG/train-${TAG:-}$prec
	timeout "$STEP_SECS" gpt-train --device cuda --"$prec" --mock-data $SHAPE --seq-length "$SEQ" \
	    --micro-batch-size "$MB" --train-iters "$ITERS" --log-interval 1 \
	    --eval-iters 0 --lr-warmup-iters 1 --log-json "$f.json" \
	    "$@" >"$f.log" 2>&1 || {
		echo "gpt-train --$prec failed:"; tail -n 5 "$f.log"; return 1; }
	tps=$(sed -n 's/.*"iteration": \([0-9]*\),.*"tokens_per_s": \([0-9.]*\).*/\1 \2/p' \
	    "$f.json" | awk '$1 > 3 { print $2 }' | median)
	mem=$(sed -n 's/.*peak GPU memory \([0-9.]*\) GB.*/\1/p' "$f.log")
	echo "$tps ${mem:-?}"
}

# 124M: N parameters (the padded vocabulary as trained), L C T
N=$(gpt-train --mock-data --train-iters 1 $SHAPE --eval-iters 0 \
    --device cpu --seq-length 8 2>&1 | sed -n 's/.*: \([0-9]*\) parameters.*/\1/p')
flops_tok=$(awk -v n="$N" -v l="$LAYERS" -v c="$HIDDEN" -v t="$SEQ" \
    'BEGIN { printf "%.0f", 6 * n + 6 * l * c * t }')

echo "== gpt-train, $LAYERS layers, $HIDDEN channels ($N parameters), T=$SEQ, micro-batch $MB, median of iterations 4-$ITERS"
for prec in bf16 fp32; do
	r=$(train $prec) || continue
	tps=${r% *}
	mfu=$(awk -v t="$tps" -v f="$flops_tok" -v p="$PEAK_TFLOPS" 'BEGIN { printf "%.1f", 100 * t * f / (p * 1e12) }')
	echo "  $prec: $tps tokens/s, MFU $mfu% of $PEAK_TFLOPS TFLOP/s ($PEAK_SOURCE), peak GPU memory ${r#* } GB"
	eval "tps_$prec=$tps"
done
if [ $torch = yes ]; then
	timeout "$STEP_SECS" "$py" contrib/oracle/gpt2-torch.py bench --cuda 1 --bf16 1 --layers "$LAYERS" \
	    --hidden "$HIDDEN" --heads "$HEADS" --seq "$SEQ" --batch "$MB" --steps 20 \
	    >"$LOG/torch-train.log" 2>&1
	t=$(sed -n 's/^tokens_per_s //p' "$LOG/torch-train.log")
	echo "  pytorch bf16 autocast, fused attention: ${t:-failed} tokens/s"
	[ -n "$t" ] && [ -n "${tps_bf16:-}" ] &&
	    echo "  ratio gpt-train bf16 / pytorch: $(awk -v a="$tps_bf16" -v b="$t" 'BEGIN { printf "%.2f", a / b }')x"
else
	echo "  pytorch: not available on this machine"
fi

echo "== where the time goes (bf16, OWT_CUDA_PROFILE: each launcher waited for)"
OWT_CUDA_PROFILE=1 ITERS=6 TAG=profile- train bf16 >/dev/null
sed -n 's/^gpt-train: cuda profile/cuda profile/p; s/^gpt-train:   /  /p' "$LOG/train-profile-bf16.log"

echo "== gpt-sample, the same model (random weights), 256 new tokens"
timeout "$STEP_SECS" gpt-train --device cuda --fp32 --mock-data $SHAPE --train-iters 1 --eval-iters 0 \
    --seq-length 64 --save "$LOG/ck" -q >/dev/null 2>&1 ||
    echo "could not save the 124M checkpoint"
for i in 1 2 3 4 5 6 7 8; do echo "The meaning of life is number $i"; done >"$LOG/p8.txt"
head -n 1 "$LOG/p8.txt" >"$LOG/p1.txt"
for batch in 1 8; do
	for mode in fp32 bf16 int8; do
		flag=--$mode
		[ $mode = int8 ] && flag=--int8
		timeout "$STEP_SECS" gpt-sample --load "$LOG/ck" --device cuda $flag --greedy \
		    --micro-batch-size $batch --out-seq-length 256 \
		    --sample-input-file "$LOG/p$batch.txt" >/dev/null \
		    2>"$LOG/sample-$mode-$batch.log"
		r=$(sed -n 's/.* tokens in .* s, \([0-9.]*\) tokens\/s.*/\1/p' "$LOG/sample-$mode-$batch.log")
		echo "  batch $batch, $mode: ${r:-failed} tokens/s"
	done
	if [ $torch = yes ]; then
		t=$(timeout "$STEP_SECS" "$py" contrib/oracle/gpt2-torch.py bench-sample --cuda 1 --batch $batch \
		    --layers "$LAYERS" --hidden "$HIDDEN" --heads "$HEADS" \
		    --tokens 256 2>&1 | sed -n 's/^tokens_per_s //p')
		echo "  batch $batch, pytorch fp32 with a key/value cache: ${t:-failed} tokens/s"
	fi
done
echo "== Hugging Face transformers reads the checkpoints (t/6004)"
OWT_BUILD=$B OWT_SRC=$OWT_SRC OWT_DEVICE=cpu timeout "$STEP_SECS" sh t/6004-gpt-hf.t 2>&1 | tail -n 8
echo "== done; make check-gpu status $rc"
echo $rc >"$LOG/status"
}

echo 1 >"$LOG/status"
main 2>&1 | tee "$TXT/gpu.txt"
# What comes back from the device run: at most 8 files under $OUT.
[ -n "${OUT:-}" ] &&
    (cd "$LOG" && tar czf "$OUT/logs.tar.gz" --exclude ck ./*.log ./*.json 2>/dev/null)
status=$(cat "$LOG/status")
rm -rf "$LOG"
exit "$status"
