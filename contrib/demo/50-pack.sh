# 50-pack: the token stream of the encode stage into a Megatron dataset,
# then a look at it: --check, --info, and its first document back as text.
set -eu
if [ ! -f "$DEMO/tokens.tok" ]; then
	echo "no $DEMO/tokens.tok (the encode stage 40 did not run): skipped"
	exit 0
fi
echo "\$ idx-pack -o data/owt tokens.tok"
mkdir -p "$DEMO/data"
idx-pack -o "$DEMO/data/owt" "$DEMO/tokens.tok"
echo "\$ idx-pack --check data/owt"
(cd "$DEMO" && idx-pack --check data/owt)
echo "\$ idx-pack --info data/owt"
(cd "$DEMO" && idx-pack --info data/owt)
if command -v bpe-encode >/dev/null; then
	echo "\$ idx-pack --cat --docs 0 data/owt | bpe-encode -d | cut -c 1-160"
	idx-pack --cat --docs 0 "$DEMO/data/owt" | bpe-encode -d | cut -c 1-160
fi
