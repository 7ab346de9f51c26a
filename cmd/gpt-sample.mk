# gpt-sample: the model library as gpt-train links it, plus the inference
# kernels (lib/gemv.c, lib/gpt_infer.c), which use OpenMP too; JSONL
# through yajl for prompts and records; libmicrohttpd for --listen (the
# HTTP server: suspended connections hold streams without a thread each).
PKGS_gpt-sample = yajl zlib libzstd libmicrohttpd
LIBS_gpt-sample = -fopenmp
$(B)/lib/gemv.o $(B)/lib/gpt_infer.o: OWT_CFLAGS += -fopenmp -fno-math-errno
CUDA_gpt-sample = 1
DEB_PKGS += libmicrohttpd-dev
