# 30-dedup: clean the merged stream: fix the text, keep English, drop short
# texts and duplicates; every decision goes to clean.report.
set -eu
echo "\$ owt-dedup --report clean.report merged.jsonl > clean.jsonl"
owt-dedup --report "$DEMO/clean.report" "$DEMO/merged.jsonl" >"$DEMO/clean.jsonl"
echo "clean.report: $(wc -l <"$DEMO/clean.report") lines; the first:"
head -n 3 "$DEMO/clean.report" | cut -c 1-160
echo "\$ owt-dedup --stages exact,near merged.jsonl merged.jsonl > /dev/null   # every copy found"
owt-dedup --stages exact,near "$DEMO/merged.jsonl" "$DEMO/merged.jsonl" >/dev/null
