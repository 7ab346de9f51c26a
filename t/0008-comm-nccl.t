#!/bin/sh
# lib/comm/comm.c's NCCL path without a GPU: t/mpi/fake-nccl.c (NCCL's entry points
# over MPI, host memory for device memory), built here with mpicc, is
# $OWT_NCCL for t/comm-test.c under mpirun at 2 and 3 ranks. NCCL is put
# under the world after a group was made (gpt-train's order): that group
# and the later ones join, and every collective gives the local sums bit
# for bit, with send/receive on "device" buffers over NCCL and, with
# host buffers, over MPI. A real NCCL on GPUs: t/9003 (make check-gpu).
. "${OWT_SRC:-.}/t/lib.sh"

need_mpi
command -v mpicc >/dev/null 2>&1 || skip_all "no mpicc (libopenmpi-dev)"
ct=$OWT_BUILD/t/comm-test
cd "$T" || exit 3
mpicc -std=gnu11 -Wall -Wextra -Werror -shared -fPIC -o fake-nccl.so \
    "$OWT_SRC/t/mpi/fake-nccl.c" 2>cc.err ||
    { echo "Bail out! t/mpi/fake-nccl.c: $(cat cc.err)"; exit 1; }

# comm-test check's lines after NCCL's two.
printf '%s\n' "ok collectives on nccl" "ok group made before nccl" |
    cat - "$OWT_SRC/t/data/comm-check.txt" >want
for np in 2 3; do
	mpi_run $np -x OWT_NCCL="$T/fake-nccl.so" "$ct" nccl-check
	is "$rc" 0 "$np ranks on NCCL: the collectives exit 0"
	same out want "$np ranks on NCCL: every collective gives the local result, bit for bit"
	mpi_run $np -x OWT_NCCL="$T/fake-nccl.so" -x COMM_TEST_HOST=1 "$ct" \
	    nccl-check
	is "$rc" 0 "$np ranks on NCCL, host buffers: the collectives exit 0"
	same out want "$np ranks on NCCL, host buffers: the same results"
done

fails 3 "^comm-test: rank [01]: collectives on GPUs need NCCL: /nonexistent/libnccl.so.2: cannot open shared object file: No such file or directory$" \
    "two ranks without NCCL" mpi_launch 2 \
    -x OWT_NCCL=/nonexistent/libnccl.so.2 "$ct" nccl-check

done_testing
