PKGS_owt-fetch = yajl zlib libzstd libcurl tidy libpsl libidn2 libbrotlidec \
	libcrypto libdeflate
DEB_PKGS += libcurl4-openssl-dev libtidy-dev libpsl-dev libidn2-dev publicsuffix iproute2 \
	libbrotli-dev libssl-dev wget libdeflate-dev brotli
