# gpt-sample: the model library as gpt-train links it, plus the inference
# kernels (lib/model/gemv.c, lib/model/gpt_infer.c), which use OpenMP too; JSONL
# through yajl for prompts and records; libmicrohttpd for --listen (the
# HTTP server: suspended connections hold streams without a thread each).
PKGS_gpt-sample = yajl zlib libzstd libpcre2-8 libmicrohttpd
# The tokenizers of bpe-encode (lib/tok/tokenizer.c): PCRE2's split
# patterns, libunistring's NFC (hftok.c), libsentencepiece's models (in
# the plugin lib/owt/spm.so, loaded when a model is).
LIBS_gpt-sample = -fopenmp -lunistring
$(B)/lib/model/gemv.o $(B)/lib/model/gpt_infer.o: OWT_CFLAGS += -fopenmp -fno-math-errno
DEB_PKGS += libmicrohttpd-dev
