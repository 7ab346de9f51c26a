#!/bin/sh
# The model split over ranks (lib/gpt.h's struct gpt_part and pipeline
# stages) against the whole model, under mpirun (t/unit-gpt.c's layout):
# initial weights bit for bit; pipelines of 2 and 4 stages give the whole
# model's losses, norms and weights bit for bit, and so do two
# data-parallel replicas of one micro-batch each; tensor parallelism (2,
# 4, 2 x 2 stages, 2 x 2 replicas) within plan-16 B7's tolerance; the
# parts recomputing activations (full, selective) against the whole model
# keeping them: the same.
. "${OWT_SRC:-.}/t/lib.sh"

ug=$OWT_BUILD/t/unit-gpt
plugin=$OWT_BUILD/lib/owt/comm-mpi.so
cd "$T" || exit 3

command -v mpirun >/dev/null 2>&1 || {
	skip "no mpirun (openmpi-bin): the launched tests"
	done_testing
}
[ -f "$plugin" ] || {
	skip "no $plugin (libopenmpi-dev): the launched tests"
	done_testing
}

# As t/0006-comm.t: root in CI containers, no ptrace for the single copy.
OMPI_ALLOW_RUN_AS_ROOT=1
OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
OMPI_MCA_btl_vader_single_copy_mechanism=none
OMPI_MCA_rmaps_base_oversubscribe=1
OMP_NUM_THREADS=1
export OMPI_ALLOW_RUN_AS_ROOT OMPI_ALLOW_RUN_AS_ROOT_CONFIRM \
    OMPI_MCA_btl_vader_single_copy_mechanism \
    OMPI_MCA_rmaps_base_oversubscribe OMP_NUM_THREADS
ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0
export ASAN_OPTIONS

# tensor-parallel size, pipeline size, data-parallel size[, recomputation]
for layout in "2 1 1" "1 2 1" "2 2 1" "1 4 1" "4 1 1" "1 1 2" "2 1 2" \
    "1 2 1 full" "2 2 1 selective"; do
	set -- $layout
	np=$(($1 * $2 * $3))
	l="tp $1 x pp $2 x dp $3${4:+, recompute $4}"
	run timeout 120 mpirun -np "$np" --bind-to none "$ug" layout "$@"
	is "$rc" 0 "$l: every rank exits 0"
	is "$(grep -c '^ok ' out)" 5 "$l: the 5 checks pass"
	unlike out '^not ok' "$l: none fails"
	grep '^\(not \)\{0,1\}ok ' out | sed 's/^/# /'
done
done_testing
