# gpt-train-dist: data parallelism on the processors. DP=2 ranks of one
# thread each against one process of $THREADS (2) threads on the same
# global batch, at the GPT-2 124M shape, T=$SEQ (64), micro-batch $MB (4),
# global batch $G (8), $ITERS (4) iterations of mock data: plain DP and
# DP with the distributed optimizer (ZeRO-1), and TP2 and PP2 (1F1B over
# the same micro-batches) likewise. For each: the median
# milliseconds per iteration after the first (rank 0's clock), the
# iterations per second against one process (the issue's target: at
# least 0.9), the CPU seconds (user + system) of the whole run, the peak
# RSS of the largest process, and whether the losses equal one process's
# (they must: DP with one micro-batch per rank and PP are bit-identical;
# TP within 2e-5 of each value, its sums being split over ranks).
# The runs use build/t/train-test, lib/train/train.c's driver (the same
# iteration gpt-train runs), until gpt-train takes the parallel flags.
#
# First, gpt-train --dry-run's figures (no data, no device, no MPI) for
# the layouts RESULTS.md discusses: the seed's 1.3B at TP 2 x PP 4 on
# 8 x 40 GB, and GPT-2 124M on 8 GPUs as DP8 and TP2 x DP4. DRYRUN=1
# stops after them.
. "$OWT_SRC/contrib/bench/lib.sh"
: "${THREADS:=2}" "${SEQ:=64}" "${MB:=4}" "${G:=8}" "${ITERS:=4}"
dry() {	# title, then gpt-train's options
	echo "--- $1"
	shift
	"$OWT_BUILD/bin/gpt-train" --dry-run "$@" || exit 1
}
dry "1.3B (seed), TP 2 x PP 4, 8 ranks a node, micro-batch 1, global batch 512" \
    --num-layers 24 --hidden-size 2048 --num-attention-heads 16 \
    --seq-length 2048 --max-position-embeddings 2048 \
    --tensor-model-parallel-size 2 --pipeline-model-parallel-size 4 \
    --micro-batch-size 1 --global-batch-size 512
dry "1.3B (seed), TP 2 x PP 4, full recomputation" \
    --num-layers 24 --hidden-size 2048 --num-attention-heads 16 \
    --seq-length 2048 --max-position-embeddings 2048 \
    --tensor-model-parallel-size 2 --pipeline-model-parallel-size 4 \
    --micro-batch-size 1 --global-batch-size 512 \
    --recompute-granularity full --recompute-method uniform \
    --recompute-num-layers 1
dry "124M, DP8, micro-batch 4, global batch 512" --world-size 8 \
    --micro-batch-size 4 --global-batch-size 512
dry "124M, DP8 + ZeRO-1" --world-size 8 --micro-batch-size 4 \
    --global-batch-size 512 --use-distributed-optimizer
dry "124M, TP2 x DP4" --world-size 8 --tensor-model-parallel-size 2 \
    --micro-batch-size 4 --global-batch-size 512
[ "${DRYRUN:-0}" = 1 ] && exit 0
tt=$OWT_BUILD/t/train-test
command -v mpirun >/dev/null 2>&1 || { echo "no mpirun: skipped"; exit 0; }
[ -x "$tt" ] || { echo "no $tt (make $tt): skipped"; exit 0; }
. "$OWT_SRC/t/ompi.sh"
shape=12,768,12,$SEQ,50257

# The median of the per-iteration milliseconds after the first.
iter_ms() {
	sed 1d "$1" | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'
}

run_one() {	# name np threads [flags]
	name=$1 np=$2 th=$3
	shift 3
	if [ "$np" = 1 ]; then
		/usr/bin/time -f '%e %U %S %M' -o "$BW/$name.time" \
		    "$tt" -q "$@" -j "$th" -M "$shape" "$ITERS" "$G" "$MB" \
		    >"$BW/$name.log"
		"$tt" -j "$th" -M "$shape" 2 "$G" "$MB" >"$BW/$name.loss"
	else
		/usr/bin/time -f '%e %U %S %M' -o "$BW/$name.time" \
		    mpirun -np "$np" --bind-to none "$tt" -q "$@" -j "$th" \
		    -M "$shape" "$ITERS" "$G" "$MB" >"$BW/$name.log"
		mpirun -np "$np" --bind-to none "$tt" "$@" -j "$th" \
		    -M "$shape" 2 "$G" "$MB" >"$BW/$name.loss"
	fi
}

echo "GPT-2 124M shape, T=$SEQ, micro-batch $MB, global batch $G, $ITERS iterations"
run_one one 1 "$THREADS"
run_one dp2 2 1
run_one zero2 2 1 -z
run_one tp2 2 1 -T 2
run_one pp2 2 1 -P 2
base=$(iter_ms "$BW/one.log")
printf '%-28s %14s %10s %10s %14s  %s\n' run ms/iteration "it/s ratio" "CPU s" "peak RSS MB" "losses"
for name in one dp2 zero2 tp2 pp2; do
	case $name in
	one) what="1 process, $THREADS threads" ;;
	dp2) what="DP2, 1 thread each" ;;
	zero2) what="DP2 + ZeRO-1, 1 thread each" ;;
	tp2) what="TP2, 1 thread each" ;;
	pp2) what="PP2 (1F1B), 1 thread each" ;;
	esac
	ms=$(iter_ms "$BW/$name.log")
	read -r wall user sys rss <"$BW/$name.time"
	# TP's products add partial sums over ranks: a tolerance, not bits
	if cmp -s "$BW/$name.loss" "$BW/one.loss"; then
		same=identical
	elif [ "$name" = tp2 ] && paste "$BW/$name.loss" "$BW/one.loss" | awk '
	    NF == 0 { next }
	    { for (i = 1; i <= NF / 2; i++) { a = $i; b = $(i + NF / 2)
	      if (a + 0 != 0 && (a - b > 2e-5 * a || b - a > 2e-5 * a)) bad = 1 } }
	    END { exit bad }'; then
		same="within 2e-5"
	else
		same=DIFFERENT
	fi
	printf '%-28s %14s %10s %10s %14s  %s\n' "$what" "$ms" \
	    "$(ratio "$base" "$ms")" "$(awk -v u="$user" -v s="$sys" \
	    'BEGIN { printf "%.1f", u + s }')" "$((rss / 1024))" "$same"
done
