#!/bin/sh
# lib/comm/comm.c through t/comm-test.c: the launcher's environment, a single
# process that never loads MPI, every collective under mpirun at 2, 3 and
# 4 ranks against sums made locally (bit for bit, in rank order), a rank
# that stops answering (the others exit 3 naming it), a rank killed by
# SIGKILL (the job ends), and a launch without the MPI plugin.
. "${OWT_SRC:-.}/t/lib.sh"

ct=$OWT_BUILD/t/comm-test
# What comm-test check prints: each collective against the local sums.
checks=$OWT_SRC/t/data/comm-check.txt
cd "$T" || exit 3

run alone "$ct" env
is "$(cat out)" "alone" "no launcher: alone"
run alone OMPI_COMM_WORLD_SIZE=4 OMPI_COMM_WORLD_RANK=3 PMIX_RANK=3 "$ct" env
is "$(cat out)" "mpirun rank 3 of 4" "mpirun's variables"
run alone PMI_SIZE=2 PMI_RANK=1 "$ct" env
is "$(cat out)" "pmi rank 1 of 2" "a PMI launcher's variables"
run alone SLURM_STEP_NUM_TASKS=8 SLURM_PROCID=5 "$ct" env
is "$(cat out)" "srun rank 5 of 8" "srun's variables"
run alone SLURM_STEP_NUM_TASKS=8 SLURM_PROCID=5 PMIX_RANK=5 "$ct" env
is "$(cat out)" "pmix rank 5 of 8" "srun --mpi=pmix's variables"
run alone PMIX_RANK=2 "$ct" env
is "$(cat out)" "pmix rank 2 of an unknown size" "PMIx alone: MPI says the size"
fails 3 "^comm-test: OMPI_COMM_WORLD_SIZE=2 and OMPI_COMM_WORLD_RANK=2: not a rank of a world$" \
    "a rank outside its world" alone OMPI_COMM_WORLD_SIZE=2 \
    OMPI_COMM_WORLD_RANK=2 "$ct" env
fails 3 "^comm-test: PMI_SIZE=x and PMI_RANK=0: not a rank of a world$" \
    "a size that is not a number" alone PMI_SIZE=x PMI_RANK=0 "$ct" env

# One process: the world "self", and no MPI library in the process
# (/proc/self/maps, and the dynamic loader's own account).
run alone LD_DEBUG=libs "$ct" init
is "$rc" 0 "a single process starts"
is "$(cat out)" "self rank 0 of 1, alone, local 0 of 1, mpi not mapped" \
    "a single process is the world self, without MPI"
unlike err 'libmpi|comm-mpi|libopen-' "the loader loads no MPI library"
run alone "$ct" check
is "$rc" 0 "every collective in a world of one"
same out "$checks" "the 17 checks pass in a world of one"

# NCCL: nothing in a world of one unless $OWT_COMM asks for it; a
# library that is not there is named. (With a GPU, OWT_COMM=nccl
# comm-test nccl starts a one-rank NCCL communicator: make check-gpu.)
run alone "$ct" nccl
is "$(cat out)" "self rank 0 of 1" "a world of one does not load NCCL"
fails 3 "^comm-test: rank 0: collectives on GPUs need NCCL: /nonexistent: cannot open shared object file: No such file or directory$" \
    "NCCL asked for but missing" alone OWT_COMM=nccl OWT_NCCL=/nonexistent \
    "$ct" nccl

need_mpi "the launched tests"

mpi_run 1 "$ct" init
is "$(cat out)" "self rank 0 of 1, mpirun, local 0 of 1, mpi not mapped" \
    "mpirun -np 1: the world self, without MPI"
mpi_run 2 "$ct" init
sort out >got
printf '%s\n' "mpi rank 0 of 2, mpirun, local 0 of 2, mpi mapped" \
    "mpi rank 1 of 2, mpirun, local 1 of 2, mpi mapped" >want
same got want "mpirun -np 2: two MPI ranks on one node (the map check sees MPI)"

for np in 2 3 4; do
	mpi_run $np "$ct" check
	is "$rc" 0 "$np ranks: the collectives exit 0"
	same out "$checks" "$np ranks: every collective gives the local result, bit for bit"
done
# 16 elements a round: the sums cross many rounds of messages.
mpi_run 3 "$ct" check 16
is "$rc" 0 "3 ranks in rounds of 16 elements exit 0"
same out "$checks" "3 ranks in rounds of 16 elements: the same results"

# Rank 1 sleeps through a 0.05-minute timeout: ranks 0 and 2 name it and
# exit 3, and mpirun ends the job with the status of the first (which may
# end the other before it speaks).
mpi_run 3 "$ct" hang 1 0.05
is "$rc" 3 "a rank that does not answer: the job exits 3"
like err "^comm-test: rank [02]: ordered sum of 'test': no answer from rank 1 in 3 s \(dead or hung\)$" \
    "the rank that does not answer is named"

# Rank 2 dies by SIGKILL; the others wait with the default 10 minutes:
# mpirun ends the job at once.
mpi_run 3 "$ct" kill 2
is "$rc" 137 "a rank killed by SIGKILL ends the job (128 + 9)"
like err "rank 2 .* exited on signal 9" "mpirun names the killed rank"

fails 3 "^comm-test: rank [01] of 2 under mpirun, but this build has no MPI \(/nonexistent: cannot open shared object file: No such file or directory; install libopenmpi-dev and rebuild\)$" \
    "a launch without the plugin" mpi_launch 2 \
    -x OWT_COMM_PLUGIN=/nonexistent "$ct" init

# srun without --mpi=pmix starts each rank as a world of one.
fails 3 "^comm-test: srun started 2 ranks but MPI sees a world of 1 \(srun needs --mpi=pmix\)$" \
    "a launcher that MPI does not see" alone ASAN_OPTIONS="$mpi_asan" \
    SLURM_STEP_NUM_TASKS=2 SLURM_PROCID=0 timeout 120 "$ct" init

done_testing
