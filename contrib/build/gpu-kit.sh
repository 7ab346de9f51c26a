#!/bin/sh
# gpu-kit.sh - copy what gpt-sample, bpe-encode and idx-pack link besides
# libc and CUDA (yajl, zlib, zstd, PCRE2, libunistring: Debian's headers
# and static libraries; libmicrohttpd for gpt-sample --listen: its header, and its
# shared library with those it needs but libc, in lib/mhd/, since
# Debian's static one needs GnuTLS, which has none)
# into .gpu-kit/, for a GPU machine that has no package registry. The
# directory is ignored by git; name it in the device run's carry list.
set -eu
cd "$(dirname "$0")/../.."
arch=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || echo x86_64-linux-gnu)
lib=/usr/lib/$arch
rm -rf .gpu-kit
mkdir -p .gpu-kit/include/yajl .gpu-kit/lib
cp /usr/include/yajl/*.h .gpu-kit/include/yajl/
cp /usr/include/zlib.h /usr/include/zconf.h /usr/include/zstd.h \
    /usr/include/zstd_errors.h /usr/include/pcre2.h .gpu-kit/include/
[ -f /usr/include/$arch/zconf.h ] && cp /usr/include/$arch/zconf.h .gpu-kit/include/
cp /usr/include/uni*.h .gpu-kit/include/
cp -r /usr/include/unistring .gpu-kit/include/
cp "$lib/libyajl_s.a" "$lib/libzstd.a" "$lib/libz.a" "$lib/libpcre2-8.a" \
    "$lib/libunistring.a" .gpu-kit/lib/
mkdir .gpu-kit/lib/mhd
cp /usr/include/microhttpd.h .gpu-kit/include/
for so in "$lib/libmicrohttpd.so.12" $(ldd "$lib/libmicrohttpd.so.12" |
    awk '$3 ~ /^\// && $1 !~ /^(libc|libm|libpthread|libdl|ld-linux)/ { print $3 }'); do
	cp "$(readlink -f "$so")" ".gpu-kit/lib/mhd/${so##*/}"
done
du -sh .gpu-kit
