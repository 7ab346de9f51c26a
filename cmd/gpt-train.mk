# gpt-train: the model library (lib/model/gpt*.c, lib/model/blas.c) uses OpenMP and
# loads OpenBLAS at run time (dlopen), preferring the OpenMP build so that
# OpenBLAS and the model's own loops share one thread pool. The
# checkpoints' JSON (config.json, trainer state, safetensors headers) is
# read through yajl (lib/core/json.c); --vocab-file and --merge-file through
# lib/tok/bpe.c, whose input layer reads gzip and zstd.
PKGS_gpt-train = yajl zlib libzstd libpcre2-8
# The tokenizers of bpe-encode (lib/tok/tokenizer.c): PCRE2's split
# patterns, libunistring's NFC (hftok.c), libsentencepiece's models (in
# the plugin lib/owt/spm.so, loaded when a model is).
LIBS_gpt-train = -fopenmp -lunistring
OMP_OBJS = $(B)/lib/model/gpt.o $(B)/lib/model/gpt_cpu.o $(B)/lib/model/blas.o \
    $(B)/lib/model/sgemm512.o
$(OMP_OBJS): OWT_CFLAGS += -fopenmp -fno-math-errno
DEB_PKGS += libopenblas0-openmp
# With CUDA the model also runs on the GPU (--device cuda): kernels/ in
# the plugin lib/owt/gpt-cuda.so, which lib/model/gpt_device.c opens; the
# program links no CUDA library.
