#!/bin/sh
# One build on machines with and without CUDA: gpt-train and gpt-sample
# link no CUDA library (ldd), a --device cpu run loads none (the dynamic
# loader's own log), and with the CUDA libraries out of reach (hidden
# under an empty tmpfs in a mount namespace, where unshare -m works; an
# address-space limit of 400 MB, which the CUDA libraries do not fit,
# everywhere) a CPU training run and a CPU generation give the same bytes
# as with them, --device auto runs on the cpu, and --device cuda exits 3
# naming the library that could not be loaded (the plugin
# lib/owt/gpt-cuda.so, or $OWT_CUDA_PLUGIN, first). A build without CUDA
# says so (exit 2). Needs no GPU.
. "${OWT_SRC:-.}/t/lib.sh"

cd "$T" || exit 3
plugin=$OWT_BUILD/lib/owt/gpt-cuda.so
tiny="--mock-data --num-layers 1 --hidden-size 32 --num-attention-heads 2
    --seq-length 16 --max-position-embeddings 32 --vocab-size 50257
    --micro-batch-size 2 --workers 1 --eval-iters 0"
printf '1 2 3\n7\n' >p.txt

# The bytes of a CPU run: 3 iterations saved, their losses, and samples
# of the result. DIR is where they go; the command runs as "$@" (a
# wrapper that hides the libraries, or nothing).
cpu_run() {
	_d=$1
	shift
	mkdir -p "$_d" &&
	    "$@" gpt-train $tiny -q --train-iters 3 --device cpu --save "$_d/ck" \
	    --log-json "$_d/log.json" >"$_d/train.out" 2>&1 &&
	    sed 's/, "tokens_per_s": .*//' "$_d/log.json" >"$_d/losses" &&
	    "$@" gpt-sample --load "$_d/ck" --device cpu --workers 1 -q \
	    --top-k 20 --seed 7 --ids --out-seq-length 8 \
	    --sample-input-file p.txt --genfile "$_d/gen.jsonl" \
	    >"$_d/sample.out" 2>&1
}

cpu_run ref || { echo "Bail out! the CPU run failed: $(cat ref/*.out)"; exit 1; }

for p in gpt-train gpt-sample; do
	ldd "$(command -v $p)" >ldd.out 2>&1
	like ldd.out 'libc\.so' "ldd $p lists its libraries"
	unlike ldd.out 'libcuda|libcudart|libcublas|gpt-cuda' \
	    "$p links no CUDA library"
done

# LD_DEBUG=files: every object the loader maps, dlopen's included.
LD_DEBUG=files gpt-train $tiny --train-iters 1 --device cpu 2>ld.err >/dev/null
like ld.err 'file=libgomp' "the loader's log of gpt-train --device cpu names its libraries"
unlike ld.err 'file=.*(libcuda|libcublas|gpt-cuda)' \
    "gpt-train --device cpu loads no CUDA library"
LD_DEBUG=files gpt-sample --load ref/ck --device cpu --workers 1 -q \
    --greedy --out-seq-length 2 --sample-input-file p.txt 2>ld.err >/dev/null
unlike ld.err 'file=.*(libcuda|libcublas|gpt-cuda)' \
    "gpt-sample --device cpu loads no CUDA library"

# The libraries out of reach, each way this machine allows: "hide CMD"
# runs CMD so; $why says what is missing after it.
vm_hide() {
	(ulimit -v 400000 && "$@")
}
ns_hide() {
	unshare -m sh -c 'for d in $HIDE; do
	    mount -t tmpfs owt-hidden "$d" || exit 125; done; exec "$@"' sh "$@"
}
# the directories of the plugin's CUDA libraries
HIDE=
[ -f "$plugin" ] && HIDE=$(ldd "$plugin" |
    sed -n 's/^[[:space:]]*lib\(cudart\|cublas\)[^ ]* => \(\/.*\)\/[^/]* (.*/\2/p' |
    while read -r d; do readlink -f "$d"; done | sort -u)
export HIDE
ways=
if vm_hide gpt-train -h >/dev/null 2>&1; then
	ways=vm
else
	skip "gpt-train does not start in 400 MB of address space (ASan?): the libraries not put out of it"
fi
if [ -z "$HIDE" ]; then
	ns_why="no CUDA libraries to hide (a build without CUDA)"
elif ! unshare -m true 2>/dev/null; then
	ns_why="no mount namespace (unshare -m)"
elif ns_hide ldd "$plugin" 2>&1 | grep -q 'libcudart.* => /'; then
	ns_why="libcudart is found elsewhere too: $(ns_hide ldd "$plugin" | grep libcudart)"
else
	ways="ns $ways"
	ns_why=
fi
[ -n "$ns_why" ] && skip "$ns_why: the libraries not hidden by a mount namespace"

for w in $ways; do
	case $w in
	ns) what="hidden by a mount namespace" ;;
	vm) what="out of a 400 MB address space" ;;
	esac
	cpu_run "$w" ${w}_hide
	is "$?" 0 "CUDA libraries $what: a CPU training run and generation exit 0"
	same "$w/losses" ref/losses "... with the same losses"
	same "$w/ck/iter_0000003/model.safetensors" ref/ck/iter_0000003/model.safetensors \
	    "... the same weights"
	same "$w/gen.jsonl" ref/gen.jsonl "... and the same samples"
	run ${w}_hide gpt-train $tiny --train-iters 1 --device auto
	is "$rc" 0 "CUDA libraries $what: --device auto exits 0"
	like out '^gpt-train: cpu backend' "... and runs on the cpu"
	run ${w}_hide gpt-sample --load ref/ck --device auto --workers 1 \
	    --greedy --out-seq-length 2 --sample-input-file p.txt
	is "$rc" 0 "... gpt-sample --device auto exits 0 too"
	if [ -f "$plugin" ]; then
		case $w in
		ns) lib='libcu(dart|blas|blasLt)\.so[.0-9]*: cannot open shared object file' ;;
		vm) lib='libcu(dart|blas|blasLt)\.so[.0-9]*: failed to map segment' ;;
		esac
		fails 3 "^gpt-train: --device cuda: $lib" \
		    "gpt-train --device cuda, CUDA libraries $what," \
		    ${w}_hide gpt-train $tiny --train-iters 1 --device cuda
		fails 3 "^gpt-sample: --device cuda: $lib" \
		    "gpt-sample --device cuda, CUDA libraries $what," \
		    ${w}_hide gpt-sample --load ref/ck --device cuda --workers 1 \
		    --greedy --out-seq-length 2 --sample-input-file p.txt
	else
		fails 2 '^gpt-train: --device cuda: no CUDA backend in this build \(rebuild with nvcc: make CUDA=1\)$' \
		    "gpt-train --device cuda in a build without CUDA" \
		    ${w}_hide gpt-train $tiny --train-iters 1 --device cuda
	fi
done

if [ -f "$plugin" ]; then
	fails 3 "^gpt-train: --device cuda: $T/none/gpt-cuda\\.so: cannot open shared object file" \
	    "gpt-train --device cuda, OWT_CUDA_PLUGIN a missing file," \
	    env OWT_CUDA_PLUGIN="$T/none/gpt-cuda.so" gpt-train $tiny \
	    --train-iters 1 --device cuda
	printf 'not an object\n' >bad.so
	fails 3 "^gpt-train: --device cuda: $T/bad\\.so: " \
	    "gpt-train --device cuda, OWT_CUDA_PLUGIN not a shared object," \
	    env OWT_CUDA_PLUGIN="$T/bad.so" gpt-train $tiny --train-iters 1 \
	    --device cuda
	run env OWT_CUDA_PLUGIN="$T/none/gpt-cuda.so" gpt-train $tiny \
	    --train-iters 1 --device auto
	is "$rc" 0 "OWT_CUDA_PLUGIN a missing file: --device auto exits 0"
	like out '^gpt-train: cpu backend' "... and runs on the cpu"
fi

done_testing
