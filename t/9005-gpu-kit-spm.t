#!/bin/sh
# The GPU kit's SentencePiece (contrib/build/gpu-kit.sh): in a build that
# took the kit's plugin (make check-gpu's, GPU_ONLY=1, where the GPU
# machine has no libsentencepiece), the plugin loads the
# libsentencepiece and C++ runtime beside it, by its DT_RPATH, and
# bpe-encode's ids of the kit's text are spm_encode's where the kit was
# made, also with the system's libsentencepiece hidden; -d gives
# spm_decode's text. Needs no GPU; skipped by a build that did not take
# a kit's plugin (make check's).
. "${OWT_SRC:-.}/t/lib.sh"

kit=$OWT_SRC/.gpu-kit/spm
owt=$OWT_BUILD/lib/owt
# the kit's plugin: its DT_RPATH is $ORIGIN (the build's own has none)
if [ ! -f "$kit/m.model" ] || ! command -v readelf >/dev/null ||
    ! readelf -d "$owt/spm.so" 2>/dev/null | grep -q 'RPATH.*\$ORIGIN'; then
	skip_all "no GPU kit's SentencePiece in this build (make check-gpu after sh contrib/build/gpu-kit.sh)"
fi
cd "$T" || exit 3
spm="--tokenizer-type GPTSentencePieceTokenizer --tokenizer-model $kit/m.model"

run env LD_DEBUG=libs bpe-encode --workers 1 $spm "$kit/text.jsonl"
is "$rc" 0 "the kit's model encodes"
like err "calling init: .*/lib/owt/libsentencepiece\.so\.0\$" \
    "libsentencepiece is the kit's, beside the plugin"
unlike err "error while loading|cannot open shared object" "no library is missing"
cp out kit.tok
perl "$OWT_SRC/t/bpe/tok2ids" <out >got
same "$kit/ids.txt" got "the ids of $(wc -l <"$kit/ids.txt") lines are spm_encode's, made with the kit"
# The system's own libsentencepiece (this machine's, where the kit is
# tried before a GPU run) made unreadable in a mount namespace: the
# plugin has no need of it.
sys=$(ldconfig -p 2>/dev/null | sed -n 's/.*libsentencepiece\.so\.0 .*=> //p' | head -n 1)
if [ -z "$sys" ]; then
	skip "no libsentencepiece of the system's to hide (the GPU machine's case)"
elif ! unshare -m true 2>/dev/null; then
	skip "no mount namespace (unshare -m): the system's libsentencepiece not hidden"
else
	run unshare -m sh -c 'mount --bind /dev/null "$1" || exit 125; shift;
	    exec "$@"' sh "$(readlink -f "$sys")" bpe-encode --workers 1 $spm \
	    "$kit/text.jsonl"
	perl "$OWT_SRC/t/bpe/tok2ids" <out >hid
	same "$kit/ids.txt" hid "the system's libsentencepiece hidden: the same ids (exit $rc)"
fi
run bpe-encode -dq $spm kit.tok
perl -CO -MJSON::PP -ne 'print JSON::PP->new->utf8->decode($_)->{text}, "\n"' \
    out >got.text
same "$kit/decoded.txt" got.text "-d gives spm_decode's text, made with the kit"

done_testing
