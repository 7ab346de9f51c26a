PKGS_owt-fetch = yajl zlib libzstd libcurl tidy libpsl
DEB_PKGS += libcurl4-openssl-dev libtidy-dev libpsl-dev publicsuffix iproute2
