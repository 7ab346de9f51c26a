#!/bin/sh
# gpu-kit.sh - copy what gpt-sample, bpe-encode and idx-pack link besides
# libc and CUDA (yajl, zlib, zstd, PCRE2: Debian's headers and static
# libraries)
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
cp "$lib/libyajl_s.a" "$lib/libzstd.a" "$lib/libz.a" "$lib/libpcre2-8.a" \
    .gpu-kit/lib/
du -sh .gpu-kit
