#!/bin/sh
# gpu-kit.sh - copy what gpt-sample, bpe-encode and idx-pack link besides
# libc and CUDA (yajl, zlib, zstd, PCRE2, libunistring: Debian's headers
# and static libraries; libmicrohttpd for gpt-sample --listen: its header, and its
# shared library with those it needs but libc, in lib/mhd/, since
# Debian's static one needs GnuTLS, which has none; the SentencePiece
# plugin, built here, with libsentencepiece and the C++ runtime it needs,
# in lib/spm/, and a small model with spm_encode's ids of its text in
# spm/, for t/9005)
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
# needs SO DIR: copy the shared libraries SO needs, but libc's, into DIR
needs() {
	for so in $(ldd "$1" | awk '$3 ~ /^\// &&
	    $1 !~ /^(libc|libm|libpthread|libdl|ld-linux[^.]*)\.so/ { print $3 }'); do
		cp "$(readlink -f "$so")" "$2/${so##*/}"
	done
}
mkdir .gpu-kit/lib/mhd
cp /usr/include/microhttpd.h .gpu-kit/include/
cp "$(readlink -f "$lib/libmicrohttpd.so.12")" .gpu-kit/lib/mhd/libmicrohttpd.so.12
needs "$lib/libmicrohttpd.so.12" .gpu-kit/lib/mhd
# SentencePiece: the plugin (lib/tok/spm_plugin.cc) with an old-style
# DT_RPATH of $ORIGIN, which also serves its libraries' own needs, and
# those libraries (but libc) beside it; make check-gpu copies the folder
# to build-gpu/lib/owt/. Without Debian's libsentencepiece-dev and
# sentencepiece here, the kit has none and the GPU build refuses
# SentencePiece models, as any build without the plugin does.
if pkg-config --exists sentencepiece 2>/dev/null &&
    command -v spm_train >/dev/null && command -v spm_encode >/dev/null &&
    command -v spm_decode >/dev/null; then
	mkdir -p .gpu-kit/lib/spm .gpu-kit/spm
	# shellcheck disable=SC2016
	${CXX:-c++} -std=c++17 -O2 -Ilib -fPIC -shared -fvisibility=hidden \
	    -Wl,-z,defs -Wl,--disable-new-dtags,-rpath,'$ORIGIN' \
	    -o .gpu-kit/lib/spm/spm.so lib/tok/spm_plugin.cc \
	    $(pkg-config --cflags --libs sentencepiece)
	needs .gpu-kit/lib/spm/spm.so .gpu-kit/lib/spm
	# The model and its reference: the README's lines, spm_encode's ids,
	# spm_decode's text of them.
	grep '[a-z]' README >.gpu-kit/spm/text.txt
	spm_train --input=.gpu-kit/spm/text.txt --model_prefix=.gpu-kit/spm/m \
	    --vocab_size=400 --model_type=bpe --byte_fallback=true \
	    --random_seed=1 --num_threads=1 --minloglevel=2 >/dev/null 2>&1
	spm_encode --model=.gpu-kit/spm/m.model --output_format=id \
	    <.gpu-kit/spm/text.txt >.gpu-kit/spm/ids.txt
	spm_decode --model=.gpu-kit/spm/m.model --input_format=id \
	    <.gpu-kit/spm/ids.txt >.gpu-kit/spm/decoded.txt
	perl -CSD -MJSON::PP -ne 'BEGIN { $j = JSON::PP->new->canonical }
	    chomp; print $j->encode({ text => $_ }), "\n"' \
	    .gpu-kit/spm/text.txt >.gpu-kit/spm/text.jsonl
else
	echo "gpu-kit.sh: no libsentencepiece-dev and sentencepiece here: no SentencePiece in the kit"
fi
du -sh .gpu-kit
