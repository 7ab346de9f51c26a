# gpt-sample: the model library as gpt-train links it, plus the inference
# kernels (lib/gemv.c, lib/gpt_infer.c), which use OpenMP too; JSONL
# through yajl for prompts and records.
PKGS_gpt-sample = yajl zlib libzstd
LIBS_gpt-sample = -fopenmp
$(B)/lib/gemv.o $(B)/lib/gpt_infer.o: OWT_CFLAGS += -fopenmp -fno-math-errno
