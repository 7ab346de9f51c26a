# serve: gpt-sample --listen under load (issue 27) at the GPT-2 124M shape
# (random weights: speed does not depend on them), against a reference
# server built like Megatron-LM's (contrib/bench/serve-ref.py: Flask, one
# request at a time behind a lock, PyTorch GPT-2 with a key/value cache)
# on the same checkpoint. The load client (contrib/bench/serve-load.js)
# sends the same streamed requests to both: PROMPT (32) token ids, TOKENS
# (32) greedy tokens each, at concurrency 1, 8 and 32 (REQS/8, REQS/2 and
# REQS requests, at least 2, 8 and 32; REQS 32), and reads the streams to time the first token
# and the gaps between tokens. owt runs --parallel 32, fp32 and --int8;
# the reference fp32; each THREADS (2) threads. Then wrk on GET /health,
# the HTTP layer alone, on both.
. "$OWT_SRC/contrib/bench/lib.sh"
torch_ref
sh "$OWT_SRC/contrib/build/deps.sh" python3-flask wrk >/dev/null 2>&1 || :
: "${REQS:=32}" "${PROMPT:=32}" "${TOKENS:=32}"
command -v node >/dev/null || { echo "serve: no node, skipped"; exit 0; }
"$py" -c 'import flask' 2>/dev/null || ref=no

gpt-train -q --mock-data --train-iters 1 --seq-length 8 --micro-batch-size 1 \
    --eval-iters 0 --workers "$THREADS" --save "$BW/124m"
rm -f "$BW"/124m/iter_*/optimizer.safetensors
ck=$(ls -d "$BW"/124m/iter_* | tail -n 1)

pids=
trap 'for p in $pids; do kill "$p" 2>/dev/null || :; done; rm -rf "$BW"' EXIT

await_line() {	# FILE PATTERN: wait up to 120 s for a line
	i=0
	while ! grep -q "$2" "$1" 2>/dev/null; do
		i=$((i + 1))
		[ $i -gt 1200 ] && { echo "serve: no '$2' in $1:"; cat "$1"; exit 1; }
		sleep 0.1
	done
}

owt_start() {	# NAME, gpt-sample options: sets $NAME to its URL
	name=$1
	shift
	gpt-sample --load "$BW/124m" --listen 0 --parallel 32 --workers "$THREADS" \
	    "$@" 2>"$BW/$name.log" &
	pids="$pids $!"
	await_line "$BW/$name.log" "ready as"
	eval "$name=http://$(sed -n 's/.*listening on http:\/\/\([^ ]*\)$/\1/p' "$BW/$name.log")"
	sed -n "s/^gpt-sample: \([0-9]* slots .*\); ready as.*/  owt $name: \1/p" "$BW/$name.log"
}

# load NAME URL CONCURRENCY REQUESTS: the client's line in $BW/NAME
load() {
	node "$OWT_SRC/contrib/bench/serve-load.js" "$2" "$3" "$4" "$PROMPT" "$TOKENS" >"$BW/$1"
	printf '  %-12s c=%-2s %s\n' "$1" "$3" "$(cat "$BW/$1")"
}

# field FILE NAME: a number of the client's JSON line
field() {
	sed -n "s/.*\"$2\":\([0-9.]*\).*/\1/p" "$BW/$1"
}

if [ "$ref" = yes ]; then
	env OMP_NUM_THREADS="$THREADS" "$py" "$OWT_SRC/contrib/bench/serve-ref.py" \
	    "$ck" "$THREADS" >"$BW/ref.out" 2>"$BW/ref.err" &
	pids="$pids $!"
	await_line "$BW/ref.out" "^port "
	refurl=http://127.0.0.1:$(sed -n 's/^port //p' "$BW/ref.out")
fi

count() {	# the requests at concurrency $1
	awk -v c="$1" -v r="$REQS" 'BEGIN { n = c == 1 ? r / 8 : c == 8 ? r / 2 : r
		print int(n < (c == 1 ? 2 : c) ? (c == 1 ? 2 : c) : n) }'
}

echo "GPT-2 124M shape, $THREADS threads, prompts of $PROMPT tokens, $TOKENS generated:"
# Both owt servers (fp32 and --int8) and the reference run together,
# idle but one; each concurrency runs the three back to back, so that
# all see the same moment of a shared machine.
owt_start fp32
owt_start int8 --int8
for c in 1 8 32; do
	n=$(count $c)
	[ "$ref" = yes ] && load ref$c "$refurl" $c $n
	load fp32-$c "$fp32" $c $n
	load int8-$c "$int8" $c $n
done
if command -v wrk >/dev/null; then
	echo "wrk -t1 -c8 -d3s GET /health:"
	wrk -t1 -c8 -d3s "$fp32/health" >"$BW/wrk.owt"
	echo "  owt:       $(sed -n 's/^Requests\/sec: *//p' "$BW/wrk.owt") requests/s, latency $(awk '$1 == "Latency" { print $2 " mean, " $3 " stdev" }' "$BW/wrk.owt")"
	if [ "$ref" = yes ]; then
		wrk -t1 -c8 -d3s "$refurl/health" >"$BW/wrk.ref"
		echo "  reference: $(sed -n 's/^Requests\/sec: *//p' "$BW/wrk.ref") requests/s, latency $(awk '$1 == "Latency" { print $2 " mean, " $3 " stdev" }' "$BW/wrk.ref")"
	fi
fi

echo "against the targets (owt over the reference, fp32):"
if [ "$ref" = yes ]; then
	echo "  c=1 time to first token p50: $(ratio "$(field fp32-1 ttft_p50_ms)" "$(field ref1 ttft_p50_ms)")x (target <= 0.5x); int8 $(ratio "$(field int8-1 ttft_p50_ms)" "$(field ref1 ttft_p50_ms)")x"
	echo "  c=1 inter-token latency p50: $(ratio "$(field fp32-1 itl_p50_ms)" "$(field ref1 itl_p50_ms)")x (target <= 0.5x); int8 $(ratio "$(field int8-1 itl_p50_ms)" "$(field ref1 itl_p50_ms)")x"
	echo "  c=32 generated tokens/s: $(ratio "$(field fp32-32 gen_tok_per_s)" "$(field ref32 gen_tok_per_s)")x the reference's (target >= 8x); int8 $(ratio "$(field int8-32 gen_tok_per_s)" "$(field ref32 gen_tok_per_s)")x"
fi
echo "  c=32 generated tokens/s: $(ratio "$(field fp32-32 gen_tok_per_s)" "$(field fp32-1 gen_tok_per_s)")x owt's own at c=1 (target >= 4x); int8 $(ratio "$(field int8-32 gen_tok_per_s)" "$(field int8-1 gen_tok_per_s)")x"
