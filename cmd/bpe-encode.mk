PKGS_bpe-encode = yajl zlib libzstd libpcre2-8
# libunistring: the NFC normalizer of Hugging Face tokenizers (hftok.c).
LIBS_bpe-encode = -lunistring
# PCRE2 (with its JIT) compiles the split patterns of the tiktoken encodings.
DEB_PKGS += libpcre2-dev
DEB_PKGS += libunistring-dev
