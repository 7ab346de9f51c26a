#!/bin/sh
# The model split over ranks (lib/model/gpt.h's struct gpt_part and pipeline
# stages) against the whole model, under mpirun (t/unit-gpt.c's layout):
# initial weights bit for bit; pipelines of 2 and 4 stages give the whole
# model's losses, norms and weights bit for bit, and so do two
# data-parallel replicas of one micro-batch each; tensor parallelism (2,
# 4, 2 x 2 stages, 2 x 2 replicas) within plan-16 B7's tolerance; the
# parts recomputing activations (full, selective) against the whole model
# keeping them: the same.
. "${OWT_SRC:-.}/t/lib.sh"

ug=$OWT_BUILD/t/unit-gpt
cd "$T" || exit 3
need_mpi
OMP_NUM_THREADS=1
export OMP_NUM_THREADS

# tensor-parallel size, pipeline size, data-parallel size[, recomputation]
for layout in "2 1 1" "1 2 1" "2 2 1" "1 4 1" "4 1 1" "1 1 2" "2 1 2" \
    "1 2 1 full" "2 2 1 selective"; do
	set -- $layout
	np=$(($1 * $2 * $3))
	l="tp $1 x pp $2 x dp $3${4:+, recompute $4}"
	mpi_run "$np" "$ug" layout "$@"
	is "$rc" 0 "$l: every rank exits 0"
	is "$(grep -c '^ok ' out)" 5 "$l: the 5 checks pass"
	unlike out '^not ok' "$l: none fails"
	grep '^\(not \)\{0,1\}ok ' out | sed 's/^/# /'
done
done_testing
