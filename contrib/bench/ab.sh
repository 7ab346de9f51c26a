# ab: every program of this build against another build of owt on the same
# inputs (OLD=the other build's folder, holding bin/): one core (taskset
# -c 0, --workers 1), CPU time (user + system), the two builds alternating,
# the median of REPS. Issue 18's gate: the refactor made no program
# slower. A ratio is old/new: above 1, this build is faster. Where the
# programs' behaviour changed between the builds (owt-dedup's language
# ID, owt-fetch's extraction), the outputs differ and the line says so.
# Without OLD it says how to run it and does nothing.
. "$OWT_SRC/contrib/bench/lib.sh"

if [ -z "${OLD:-}" ] || [ ! -x "$OLD/bin/jsonl-merge" ]; then
	echo "ab: skipped: set OLD to another build (OLD=/tmp/old/build after"
	echo "    git worktree add /tmp/old REV && make -C /tmp/old CUDA=0)"
	exit 0
fi
NEW=$OWT_BUILD
: "${REPS:=5}"

# cpu OUT CMD...: append CMD's user + system seconds to OUT.
cpu() {
	out=$1
	shift
	s=0
	/usr/bin/time -f '%U %S' -o "$BW/.t" "$@" || s=$?
	tail -n 1 "$BW/.t" | awk '{ printf "%.3f\n", $1 + $2 }' >>"$out"
	return $s
}

# ab NAME OUTFILE CMD...: CMD run with each build's bin/ first on PATH,
# alternating, REPS times each, its standard output to OUTFILE.old and
# OUTFILE.new; prints the two medians, the ratio, and whether the two
# outputs are the same bytes.
ab() {
	name=$1 o=$2
	shift 2
	rm -f "$BW/a.old" "$BW/a.new"
	failed=
	for i in $(seq "$REPS"); do
		for b in old new; do
			case $b in old) d=$OLD ;; *) d=$NEW ;; esac
			PATH=$d/bin:$PATH cpu "$BW/a.$b" taskset -c 0 "$@" \
			    >"$o.$b" 2>"$o.$b.err" || failed="$failed $b"
		done
	done
	if [ -n "$failed" ]; then
		printf '%-34s failed:%s: %s\n' "$name" "$failed" \
		    "$(tail -n 1 "$o.${failed##* }.err")"
		return 0
	fi
	to=$(sort -n "$BW/a.old" | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }')
	tn=$(sort -n "$BW/a.new" | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }')
	if cmp -s "$o.old" "$o.new"; then same="same output"; else same="outputs differ"; fi
	printf '%-34s old %7.3f s  new %7.3f s  old/new %sx  (%s)\n' \
	    "$name" "$to" "$tn" "$(ratio "$to" "$tn")" "$same"
}

# Inputs: the sample corpus once (5 MB), else synthetic records.
in=$BW/in.jsonl
if [ -f "$OWT_SHARED/data/corpus-sample.jsonl" ]; then
	src="shared/data/corpus-sample.jsonl"
	cp "$OWT_SHARED/data/corpus-sample.jsonl" "$in"
else
	src="synthetic records"
	awk 'BEGIN { for (i = 0; i < 20000; i++) printf "{\"text\":\"document %d: The quick brown fox jumps over the lazy dog %d times. Caf\303\251 na\303\257ve.\\nLorem ipsum dolor sit amet %d.\"}\n", i, i * 7, i % 13 }' >"$in"
fi
echo "input: $src, $(wc -c <"$in") bytes; old: $OLD ($(git -C "$OLD/.." rev-parse --short HEAD 2>/dev/null || echo '?')), new: $NEW ($(git -C "$OWT_SRC" rev-parse --short HEAD))"
echo "one core, CPU seconds (user + system), median of $REPS, builds alternating"
# The fast programs read 8 copies (40 MB), so that their times are more
# than the clock's 10 ms; none of them caches across records.
big=$BW/big.jsonl
for i in 1 2 3 4 5 6 7 8; do cat "$in"; done >"$big"

ab "jsonl-merge (pass-through, x8)" "$BW/m" jsonl-merge -q "$big"
ab "jsonl-merge --shuffle (x8)" "$BW/s" jsonl-merge -q --shuffle --seed 1 "$big"
ab "owt-dedup (every stage)" "$BW/d" owt-dedup -q --workers 1 "$in"
ab "bpe-encode --append-eod" "$BW/e" bpe-encode -q --workers 1 --append-eod "$in"
for i in 1 2 3 4 5 6 7 8; do cat "$BW/e.new"; done >"$BW/e8"
for i in 1 2 3 4; do cat "$BW/e8"; done >"$BW/e32"
ab "idx-pack (the token stream, x32)" "$BW/p" sh -c \
    'rm -f "$1".*; idx-pack -q -o "$1" "$2" && cat "$1.idx" "$1.bin"' sh "$BW/ds" "$BW/e32"
ab "bpe-encode -d (x8)" "$BW/dec" bpe-encode -q -d "$BW/e8"

# owt-fetch: the URL filter over a million URLs, and --extract on the
# demo's pages (stage 10 of make demo, saved to disk).
awk 'BEGIN { for (i = 0; i < 1000000; i++) printf "https://site%d.example.org/news/%d/story-%d.html\n", i % 5000, i % 97, i }' >"$BW/urls"
ab "owt-fetch --filter-only (1M URLs)" "$BW/f" owt-fetch -q --filter-only "$BW/urls"
DEMO=$BW/demo DATA=$OWT_SRC/contrib/demo/data sh "$OWT_SRC/contrib/demo/10-site.sh" >/dev/null
for i in 1 2 3 4 5 6 7 8; do ls "$BW"/demo/www/address-*.html; done >"$BW/pages"
ab "owt-fetch --extract (112 pages)" "$BW/x" owt-fetch -q --workers 1 --extract "$BW/pages"

# gpt-train: 8 iterations of a small model on mock data (its log holds
# times, so the outputs differ); gpt-sample:
# perplexity of 4 records with the checkpoint the new build saved.
set -- --mock-data --num-layers 2 --hidden-size 64 --num-attention-heads 2 \
    --seq-length 64 --micro-batch-size 4 --train-iters 8 --lr 1e-3 \
    --log-interval 4 --eval-interval 1000 --eval-iters 1 --device cpu --workers 1
ab "gpt-train (8 iterations)" "$BW/t" gpt-train "$@"
PATH=$NEW/bin:$PATH gpt-train "$@" --save "$BW/ckpt" >/dev/null 2>&1
head -n 4 "$in" >"$BW/four.jsonl"
ab "gpt-sample --score (4 records)" "$BW/g" gpt-sample -q --load "$BW/ckpt" \
    --seq-length 64 --workers 1 --score --sample-input-file "$BW/four.jsonl"
ab "gpt-sample (greedy, 64 tokens)" "$BW/h" sh -c 'echo "The news today" |
    gpt-sample -q --load "$1" --workers 1 --greedy --out-seq-length 64' sh "$BW/ckpt"
