PKGS_bpe-encode = yajl zlib libzstd libpcre2-8
# libunistring: the NFC normalizer of Hugging Face tokenizers (hftok.c).
LIBS_bpe-encode = -lunistring
# PCRE2 (with its JIT) compiles the split patterns of the tiktoken encodings.
DEB_PKGS += libpcre2-dev
DEB_PKGS += libunistring-dev
# libsentencepiece (C++, through the shim lib/tok/spm.cc, which its headers
# want built as C++17) reads the SentencePiece types' models; spm_train and
# spm_encode (sentencepiece) are the tests' reference.
LIBS_bpe-encode += -lsentencepiece -lstdc++
DEB_PKGS += libsentencepiece-dev sentencepiece
$(B)/lib/tok/spm.o: OWT_CXXFLAGS += -std=c++17
