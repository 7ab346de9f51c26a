# gpt-train-recompute: what activation recomputation saves and costs at
# the GPT-2 124M shape, T=1024, micro-batch $MB (4), $ITERS (3) iterations
# of mock data in each mode side by side: none, selective
# (--recompute-activations) and full (--checkpoint-activations). For each:
# the activation bytes gpt-train allocates (its "activations:" line,
# exact), the process's peak RSS (weights, gradients and AdamW moments
# included: 4 x 498 MB at this shape), peak GPU memory on the GPU, and the
# mean time of the iterations after the first, with the ratio to none.
# The three runs must also log the same losses: printed, not assumed.
# DEVICE=cuda measures the GPU (make bench measures the processors).
. "$OWT_SRC/contrib/bench/lib.sh"
: "${THREADS:=2}" "${MB:=4}" "${ITERS:=3}" "${DEVICE:=cpu}"

# The mean per-iteration time in a --log-json file, iteration 2 on (ms).
iter_ms() {
	sed -n 's/.*"elapsed_s": \([0-9.]*\).*/\1/p' "$1" |
	    awk 'NR > 1 { s += ($1 - prev) * 1000; n++ } { prev = $1 }
	    END { printf "%.0f", n ? s / n : 0 }'
}

echo "GPT-2 124M shape, T=1024, micro-batch $MB, $ITERS iterations, $DEVICE, $THREADS threads"
printf '%-12s %16s %10s %12s %12s %8s  %s\n' mode "activations (B)" GiB "peak RSS MB" ms/iteration ratio "last loss"
base=
for mode in none selective full; do
	case $mode in
	none) opt= ;;
	selective) opt=--recompute-activations ;;
	full) opt=--checkpoint-activations ;;
	esac
	: >"$BW/$mode.time"
	measure "$BW/$mode.time" gpt-train --mock-data --device "$DEVICE" \
	    --seq-length 1024 --micro-batch-size "$MB" --train-iters "$ITERS" \
	    --log-interval 1 --eval-iters 0 --workers "$THREADS" \
	    --log-json "$BW/$mode.jsonl" $opt >"$BW/$mode.err" 2>&1
	bytes=$(sed -n 's/^gpt-train: activations: \([0-9]*\) bytes.*/\1/p' "$BW/$mode.err")
	gpu=$(sed -n 's/^gpt-train: peak GPU memory \(.*\)/\1/p' "$BW/$mode.err")
	ms=$(iter_ms "$BW/$mode.jsonl")
	[ -n "$base" ] || base=$ms
	loss=$(tail -n 1 "$BW/$mode.jsonl" | sed 's/.*"loss": \([^,]*\),.*/\1/')
	printf '%-12s %16s %10s %12s %12s %8s  %s\n' "$mode" "$bytes" \
	    "$(awk -v b="$bytes" 'BEGIN { printf "%.2f", b / 1073741824 }')" \
	    "$(($(cut -d' ' -f2 "$BW/$mode.time") / 1024))${gpu:+ (GPU $gpu)}" \
	    "$ms" "$(ratio "$ms" "$base")" "$loss"
	sed 's/, "tokens_per_s": .*//' "$BW/$mode.jsonl" >"$BW/$mode.num"
done
for mode in selective full; do
	cmp -s "$BW/$mode.num" "$BW/none.num" &&
	    echo "$mode: losses, learning rates and gradient norms identical to none" ||
	    echo "$mode: DIFFERENT numbers from none"
done
