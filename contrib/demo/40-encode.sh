# 40-encode: shuffle the documents with a seed, then turn them into GPT-2
# token ids (tiktoken's exact ids), one document per record ending in
# <|endoftext|>, as a token stream in tokens.tok; the cleaned documents when
# the dedup stage ran, else the merged ones.
set -eu
src=$DEMO/merged.jsonl
[ -f "$DEMO/clean.jsonl" ] && src=$DEMO/clean.jsonl
echo "\$ jsonl-merge --shuffle --seed 1 ${src##*/} > shuffled.jsonl"
jsonl-merge --shuffle --seed 1 "$src" >"$DEMO/shuffled.jsonl"
echo "\$ bpe-encode --append-eod shuffled.jsonl > tokens.tok"
bpe-encode --append-eod "$DEMO/shuffled.jsonl" >"$DEMO/tokens.tok"
echo "the first 12 ids of the first document (after the 16-byte header and its count):"
od -An -tu2 -j20 -N24 "$DEMO/tokens.tok"
echo "\$ bpe-encode -d tokens.tok | head -n 1   # back to text, shortened:"
bpe-encode -dq "$DEMO/tokens.tok" | head -n 1 | cut -c 1-160
