PKGS_owt-dedup = yajl zlib libzstd
LIBS_owt-dedup = -lunistring -lcld2 -lstdc++
DEB_PKGS += libunistring-dev libcld2-dev python3-langdetect python3-numpy
