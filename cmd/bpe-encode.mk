PKGS_bpe-encode = yajl zlib libzstd
