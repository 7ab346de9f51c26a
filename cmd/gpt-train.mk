# gpt-train: the model library (lib/gpt*.c, lib/blas.c) uses OpenMP and
# loads OpenBLAS at run time (dlopen), preferring the OpenMP build so that
# OpenBLAS and the model's own loops share one thread pool. The
# checkpoints' JSON (config.json, trainer state, safetensors headers) is
# read through yajl (lib/json.c); --vocab-file and --merge-file through
# lib/bpe.c, whose input layer reads gzip and zstd.
PKGS_gpt-train = yajl zlib libzstd
LIBS_gpt-train = -fopenmp
OMP_OBJS = $(B)/lib/gpt.o $(B)/lib/gpt_cpu.o $(B)/lib/blas.o \
    $(B)/lib/sgemm512.o
$(OMP_OBJS): OWT_CFLAGS += -fopenmp -fno-math-errno
DEB_PKGS += libopenblas0-openmp
# With CUDA the model also runs on the GPU (--device cuda): kernels/ in
# the plugin lib/owt/gpt-cuda.so, which lib/gpt_device.c opens; the
# program links no CUDA library.
