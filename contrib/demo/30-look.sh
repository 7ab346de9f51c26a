# 30-look: the dataset of the recipe, data/owt_text_document: --check,
# --info, its first document back as text, and what the dedup dropped.
set -eu
cd "$DEMO"
if [ ! -f data/owt_text_document.idx ]; then
	echo "no $DEMO/data/owt_text_document.idx (stage 20 did not run): skipped"
	exit 0
fi
echo "\$ idx-pack --check data/owt_text_document"
idx-pack --check data/owt_text_document
echo "\$ idx-pack --info data/owt_text_document"
idx-pack --info data/owt_text_document
echo "\$ idx-pack --cat --docs 0 data/owt_text_document | bpe-encode -d | cut -c 1-160"
idx-pack --cat --docs 0 data/owt_text_document | bpe-encode -d | cut -c 1-160
echo "what the dedup dropped (data/4-dedup/drops.jsonl), shortened:"
cut -c 1-160 data/4-dedup/drops.jsonl
