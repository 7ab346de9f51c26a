PKGS_jsonl-merge = yajl zlib libzstd
