# jsonl-merge: pass-through MB/s on one core against what Megatron-LM's
# merge_jsons.py does per line (json.loads as a check, the line written
# out unchanged), side by side; then --shuffle
# on the same input with --memory 64M, to show its memory is set by the flag.
. "$OWT_SRC/contrib/bench/lib.sh"

in=$BW/in.jsonl
if [ -f "$OWT_SHARED/data/corpus-sample.jsonl" ]; then
	src="40 copies of shared/data/corpus-sample.jsonl"
	for i in $(seq 40); do cat "$OWT_SHARED/data/corpus-sample.jsonl"; done >"$in"
else
	src="synthetic records"
	awk 'BEGIN { for (i = 0; i < 400000; i++) printf "{\"text\":\"document %d: %s\\n%s\",\"url\":\"https://example.org/%d\"}\n", i, "The quick brown fox jumps over the lazy dog. Caf\303\251 na\303\257ve \\u00e9", "Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor.", i }' >"$in"
fi
bytes=$(wc -c <"$in")
cat >"$BW/py.py" <<'PY'
import json, sys
# merge_jsons.py's loop: each line parsed as a check, written unchanged.
with open(sys.argv[1], encoding="utf-8") as f, open(sys.argv[2], "w", encoding="utf-8") as out:
    for line in f:
        json.loads(line)
        out.write(line)
PY
py=$(command -v python3)
for i in $(seq "$REPS"); do
	measure "$BW/owt" taskset -c 0 jsonl-merge -q "$in" >/dev/null
	measure "$BW/py" taskset -c 0 "$py" "$BW/py.py" "$in" /dev/null
done
t_owt=$(median "$BW/owt" 1)
t_py=$(median "$BW/py" 1)
echo "input: $src, $bytes bytes; one core (taskset -c 0), median of $REPS"
echo "jsonl-merge pass-through: $(mbps "$bytes" "$t_owt") MB/s ($t_owt s)"
echo "python merge_jsons.py loop: $(mbps "$bytes" "$t_py") MB/s ($t_py s, $($py --version 2>&1))"
echo "ratio jsonl-merge / python: $(ratio "$t_py" "$t_owt")x"

for m in 64M 1G; do
	: >"$BW/shuf"
	measure "$BW/shuf" jsonl-merge -q --shuffle --seed 1 --memory "$m" \
	    --tmpdir "$BW" "$in" >/dev/null
	read -r t rss <"$BW/shuf"
	echo "jsonl-merge --shuffle --memory $m: $(mbps "$bytes" "$t") MB/s, peak RSS $((rss / 1024)) MB"
done
