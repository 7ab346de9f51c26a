PKGS_bpe-encode = yajl zlib libzstd libpcre2-8
# libunistring: the NFC normalizer of Hugging Face tokenizers (hftok.c).
LIBS_bpe-encode = -lunistring
# PCRE2 (with its JIT) compiles the split patterns of the tiktoken encodings.
DEB_PKGS += libpcre2-dev
DEB_PKGS += libunistring-dev
# libsentencepiece (C++) reads the SentencePiece types' models, in the
# plugin lib/owt/spm.so (Makefile's SPM_PLUGIN, lib/tok/spm_plugin.cc),
# which no program links; spm_train and spm_encode (sentencepiece) are
# the tests' reference.
DEB_PKGS += libsentencepiece-dev sentencepiece
