PKGS_idx-pack = yajl zlib libzstd
DEB_PKGS += python3-numpy
