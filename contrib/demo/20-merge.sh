# 20-merge: the sample speeches (.txt) and Bible chapters (.jsonl.gz), plus
# the crawled pages when the fetch stage ran, into one JSONL stream with ids.
set -eu
set -- "$DATA"
[ -f "$DEMO/pages.jsonl" ] && set -- "$DEMO/pages.jsonl" "$@"
echo "\$ jsonl-merge --add-id demo $* > merged.jsonl"
jsonl-merge --add-id demo "$@" >"$DEMO/merged.jsonl"
echo "first record, shortened:"
head -n 1 "$DEMO/merged.jsonl" | cut -c 1-160
