PKGS_bpe-encode = yajl zlib libzstd libpcre2-8
# PCRE2 (with its JIT) compiles the split patterns of the tiktoken encodings.
DEB_PKGS += libpcre2-dev
