#!/bin/sh
# gpt-train --dry-run (lib/dist/gpt_plan.c): its figures in full for one
# layout, its errors, the world from the launcher; t/unit-plan.c's
# checks against what the model allocates and the published formulas;
# and the memory it predicts, byte for byte, against the line each
# data-parallel rank 0 prints after its first iteration: one process,
# then (with mpirun) DP2, DP2 + ZeRO-1, TP2, PP2 and TP2 x PP2.
. "${OWT_SRC:-.}/t/lib.sh"

cd "$T" || exit 3
ga="--mock-data --num-layers 4 --hidden-size 32 --num-attention-heads 4
    --seq-length 8 --max-position-embeddings 16 --vocab-size 300
    --make-vocab-size-divisible-by 8 --micro-batch-size 1
    --global-batch-size 4 --train-iters 2 --eval-interval 100
    --eval-iters 1 --workers 1"

run "$OWT_BUILD/t/unit-plan"
is "$rc" 0 "t/unit-plan.c: the plan is what the model allocates, and the formulas"
sed -n 's/^not ok/# not ok/p' out

# shellcheck disable=SC2086
run gpt-train $ga --dry-run --tensor-model-parallel-size 2 \
    --pipeline-model-parallel-size 4 --world-size 16 --ranks-per-node 4 \
    --recompute-activations
is "$rc" 0 "--dry-run exits 0"
cat >want <<'END'
model: 4 layers, hidden size 32, 4 heads, 16 positions, vocabulary 300 (padded to 304): 60992 parameters; Narayanan's 12lh^2(1 + 13/(12h) + (V+s)/(12lh)): 60800
layout: 16 ranks = 2 tensor-parallel x 4 pipeline stages x 2 data-parallel, 4 ranks a node; micro-batches of 1 x 8 tokens, 2 a replica an iteration; recomputation: selective (attention probabilities)
first stage (stage 0, layers [0, 1)):
  parameters: 11824 a rank (padding included)
  owt memory a rank: parameters 47296, gradients 47296, optimizer 94592, accumulation 47296, activations 33408 (2 of 2 micro-batches held); total 269888 bytes (0.00 GiB)
  Megatron a rank (Korthikanti 2022): activations 11264 bytes (0.00 GiB), static 212832 bytes (0.00 GiB, 18 B/param)
  sent a rank an iteration: tensor-parallel 8192 bytes (intra-node), pipeline 2048 bytes (inter-node), data-parallel 47296 bytes (intra-node), embedding 19456 bytes
middle stage (stage 1, layers [1, 2)):
  parameters: 6448 a rank (padding included)
  owt memory a rank: parameters 25792, gradients 25792, optimizer 51584, accumulation 25792, activations 33408 (2 of 2 micro-batches held); total 162368 bytes (0.00 GiB)
  Megatron a rank (Korthikanti 2022): activations 11264 bytes (0.00 GiB), static 116064 bytes (0.00 GiB, 18 B/param)
  sent a rank an iteration: tensor-parallel 8192 bytes (intra-node), pipeline 4096 bytes (inter-node), data-parallel 25792 bytes (intra-node), embedding 0 bytes
last stage (stage 3, layers [3, 4)):
  parameters: 11376 a rank (padding included)
  owt memory a rank: parameters 45504, gradients 64960, optimizer 91008, accumulation 64960, activations 26688 (1 of 2 micro-batches held); total 293120 bytes (0.00 GiB)
  owt memory, tensor-parallel rank 1 (fewer real vocabulary rows): activations 26560; total 292992 bytes (0.00 GiB)
  Megatron a rank (Korthikanti 2022): activations 11008 bytes (0.00 GiB) with the last stage's 4sbh/t(1 + v/h) (check eq. (5)-(6) in the paper), static 204768 bytes (0.00 GiB, 18 B/param)
  sent a rank an iteration: tensor-parallel 8192 bytes (intra-node), pipeline 2048 bytes (inter-node), data-parallel 64960 bytes (intra-node), embedding 19456 bytes
bubble: (p-1)/m = 1.500000; idle share (p-1)/(m+p-1) = 0.600000
FLOPs an iteration: 72Bslh^2(1 + s/(6h) + V/(16lh)) = 1.1231e+07; 7.0195e+05 a rank
END
same out want "TP2 x PP4 x DP2 on nodes of 4: every figure"
is "$(wc -c <err | tr -d ' ')" 0 "nothing on stderr"

# No data is read: --dry-run needs neither --data-path nor --mock-data.
run gpt-train --dry-run --num-layers 2 --hidden-size 64 \
    --num-attention-heads 4 --seq-length 16 --max-position-embeddings 16
is "$rc" 0 "--dry-run without data"
like out '^layout: 1 ranks = 1 tensor-parallel x 1 pipeline stages x 1 data-parallel, 8 ranks a node; micro-batches of 4 x 16 tokens, 1 a replica an iteration; recomputation: none$' \
    "the default world is TP x PP, 8 ranks a node"
like out '^every rank \(stage 0, layers \[0, 2\)\):$' "one rank class without a pipeline"

# The launcher's world, from its variables alone (no MPI is started).
OMPI_COMM_WORLD_SIZE=4 OMPI_COMM_WORLD_RANK=0 run gpt-train --dry-run \
    --num-layers 2 --hidden-size 64 --num-attention-heads 4 \
    --seq-length 16 --max-position-embeddings 16 --global-batch-size 16 \
    --tensor-model-parallel-size 2
is "$rc" 0 "--dry-run under a launcher's variables"
like out '^layout: 4 ranks = 2 tensor-parallel x 1 pipeline stages x 2 data-parallel, ' \
    "the world is the launcher's"

# shellcheck disable=SC2086
# --load: the checkpoint's shape and options, checked as a run checks them.
# shellcheck disable=SC2086
run gpt-train $ga --train-iters 1 --save c1
is "$rc" 0 "a checkpoint to plan from"
run gpt-train --dry-run --load c1
is "$rc" 0 "--dry-run --load"
like out '^model: 4 layers, hidden size 32, 4 heads, 16 positions, vocabulary 300 \(padded to 384\): 60992 parameters; ' \
    "--load: the checkpoint's shape"
like out '^layout: 1 ranks = 1 tensor-parallel x 1 pipeline stages x 1 data-parallel, 8 ranks a node; micro-batches of 1 x 8 tokens, 4 a replica an iteration; ' \
    "--load: the run's kept options (sequence, batches)"
fails 1 '^gpt-train: c1/iter_0000001/config.json: n_layer is 4, but --num-layers is 2$' \
    "--load with another shape" gpt-train --dry-run --load c1 --num-layers 2

# shellcheck disable=SC2086
fails 2 '^gpt-train: world size 3 is not a multiple of --tensor-model-parallel-size 2 x --pipeline-model-parallel-size 1$' \
    "a world that is not a multiple of TP x PP" \
    gpt-train $ga --dry-run --tensor-model-parallel-size 2 --world-size 3
# shellcheck disable=SC2086
fails 2 '^gpt-train: --seq-length 32 is beyond the 16 positions of the model \(--max-position-embeddings\)$' \
    "a sequence beyond the positions" gpt-train $ga --dry-run --seq-length 32
# shellcheck disable=SC2086
fails 2 "^gpt-train: --world-size: '0' is out of range" "a world of 0" \
    gpt-train $ga --dry-run --world-size 0

# The prediction against the allocation. $1: dry-run's output, $2: the
# rank class (first/middle/last stage, every rank; "last stage+": its
# last tensor-parallel rank, with fewer real vocabulary rows); $3: 1 to
# leave the optimizer out (ZeRO).
predicted() {
	awk -v c="${2%+}" -v tl="${2##*[!+]}" -v z="${3:-0}" '
	    index($0, c " (") == 1 { in_c = 1; next }
	    /^[a-z]/ { in_c = 0 }
	    in_c && /^  owt memory a rank:/ {
		for (i = 1; i <= NF; i++) {
			if ($i == "optimizer") o = $(i + 1)
			if ($i == "total") t = $(i + 1)
		}
		sub(/,/, "", o)
	    }
	    in_c && tl != "" && /^  owt memory, tensor-parallel rank/ {
		for (i = 1; i <= NF; i++)
			if ($i == "total") t = $(i + 1)
	    }
	    END { print z ? t - o : t }' "$1"
}
# The byte count of the memory line of rank $2 ("" alone) in $1.
allocated() {
	sed -n "s/^gpt-train: ${2:+rank $2: }memory: \([0-9]*\) bytes of cpu memory allocated after the first iteration.*/\1/p" "$1"
}

# shellcheck disable=SC2086
run gpt-train $ga --dry-run
mv out plan1
# shellcheck disable=SC2086
run gpt-train $ga
is "$rc" 0 "one process trains"
is "$(allocated out)" "$(predicted plan1 'every rank')" \
    "one process allocates what --dry-run says, byte for byte"
# shellcheck disable=SC2086
run gpt-train $ga --quiet
unlike out 'memory:' "--quiet: no memory line"

need_mpi "the ranks' allocations"

# $1: name, $2: ranks, then the layout options; "rank:class" pairs after --.
check_layout() {
	_name=$1 _np=$2 _zero=0
	shift 2
	_opts=
	while [ "$1" != -- ]; do
		[ "$1" = --use-distributed-optimizer ] && _zero=1
		_opts="$_opts $1"
		shift
	done
	shift
	# shellcheck disable=SC2086
	run gpt-train $ga $_opts --dry-run --world-size "$_np"
	mv out "plan-$_name"
	# shellcheck disable=SC2086
	mpi_run "$_np" gpt-train $ga $_opts
	is "$rc" 0 "$_name trains"
	for _rc in "$@"; do
		_r=${_rc%%:*}
		is "$(allocated out "$_r")" \
		    "$(predicted "plan-$_name" "${_rc#*:}" "$_zero")" \
		    "$_name: rank $_r allocates what --dry-run says for the ${_rc#*:}"
	done
}

check_layout DP2 2 -- "0:every rank"
unlike out '^gpt-train: rank 1: memory:' "DP2: data-parallel rank 1 prints no memory line"
check_layout "DP2 + ZeRO-1" 2 --use-distributed-optimizer -- "0:every rank"
check_layout TP2 2 --tensor-model-parallel-size 2 -- "0:every rank" \
    "1:every rank+"
check_layout PP2 2 --pipeline-model-parallel-size 2 -- "0:first stage" \
    "1:last stage"
check_layout "TP2 x PP2" 4 --tensor-model-parallel-size 2 \
    --pipeline-model-parallel-size 2 -- "0:first stage" "1:first stage" \
    "2:last stage" "3:last stage+"

done_testing
