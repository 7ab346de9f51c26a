# 40-encode: the documents into GPT-2 token ids (tiktoken's exact ids), one
# document per record ending in <|endoftext|>, as a token stream in
# tokens.tok; the cleaned documents when the dedup stage ran, else the
# merged ones.
set -eu
src=$DEMO/merged.jsonl
[ -f "$DEMO/clean.jsonl" ] && src=$DEMO/clean.jsonl
echo "\$ bpe-encode --append-eod ${src##*/} > tokens.tok"
bpe-encode --append-eod "$src" >"$DEMO/tokens.tok"
echo "the first 12 ids of the first document (after the 16-byte header and its count):"
od -An -tu2 -j20 -N24 "$DEMO/tokens.tok"
echo "\$ bpe-encode -d tokens.tok | head -n 1   # back to text, shortened:"
bpe-encode -dq "$DEMO/tokens.tok" | head -n 1 | cut -c 1-160
