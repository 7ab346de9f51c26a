# ompi.sh - OpenMPI's environment for runs on this kind of machine, shared
# by t/lib.sh (mpi_env) and contrib/bench: . "$OWT_SRC/t/ompi.sh"
#
# CI runs as root in a container: OpenMPI refuses root unless told, and
# its shared-memory single copy needs ptrace, which containers forbid.
# Oversubscribed ranks yield the processor while they wait.
OMPI_ALLOW_RUN_AS_ROOT=1
OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
OMPI_MCA_btl_vader_single_copy_mechanism=none
OMPI_MCA_rmaps_base_oversubscribe=1
OMPI_MCA_mpi_yield_when_idle=1
export OMPI_ALLOW_RUN_AS_ROOT OMPI_ALLOW_RUN_AS_ROOT_CONFIRM \
    OMPI_MCA_btl_vader_single_copy_mechanism \
    OMPI_MCA_rmaps_base_oversubscribe OMPI_MCA_mpi_yield_when_idle
