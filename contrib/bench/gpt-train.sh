# gpt-train: milliseconds per training iteration (forward, backward,
# clipping, AdamW) against the PyTorch reference doing the same work
# (contrib/oracle/gpt2-torch.py bench), side by side at the same thread count, on
# the small configuration (4 layers, 128 channels, 4 heads) and the GPT-2
# 124M shape, both with batch 4 of 64 tokens and the 50257-token
# vocabulary. Each side's number is the median iteration after the first;
# the runs alternate so that both see the same load. Debian's
# python3-torch uses whatever libblas.so.3 points to, the reference BLAS
# unless an optimised one is installed, so this installs OpenBLAS's OpenMP
# build (libopenblas0-openmp) and prints the BLAS each side loaded.
. "$OWT_SRC/contrib/bench/lib.sh"
torch_ref

# The median of the per-iteration times in a --log-json file, iteration 2 on.
gpt_ms() {
	sed -n 's/.*"elapsed_s": \([0-9.]*\).*/\1/p' "$1" |
	    awk 'NR > 1 { print ($1 - prev) * 1000 } { prev = $1 }' | sort -n |
	    awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'
}

bench() {	# name, steps, model options (gpt-train spelling)
	name=$1 steps=$2
	shift 2
	: >"$BW/g.ms"
	: >"$BW/t.ms"
	: >"$BW/g.time"
	: >"$BW/t.time"
	for i in $(seq "$REPS"); do
		measure "$BW/g.time" gpt-train -q --mock-data "$@" \
		    --seq-length 64 --micro-batch-size 4 --train-iters "$steps" \
		    --log-interval 1 --eval-iters 0 --workers "$THREADS" \
		    --hidden-dropout 0 --attention-dropout 0 \
		    --log-json "$BW/g.jsonl"
		gpt_ms "$BW/g.jsonl" >>"$BW/g.ms"
		if [ "$ref" = yes ]; then
			measure "$BW/t.time" env OMP_NUM_THREADS="$THREADS" "$py" \
			    "$OWT_SRC/contrib/oracle/gpt2-torch.py" bench \
			    --threads "$THREADS" --steps "$steps" --seq 64 \
			    --batch 4 $torch_opts >"$BW/t.out"
			sed -n 's/^ms_per_step //p' "$BW/t.out" >>"$BW/t.ms"
		fi
	done
	g=$(median "$BW/g.ms" 1)
	echo "$name, $THREADS threads, median of $REPS runs of $steps iterations:"
	echo "  gpt-train: $g ms/iteration, $(awk -v m="$g" 'BEGIN { printf "%.0f", 256 / m * 1000 }') tokens/s, peak RSS $(($(median "$BW/g.time" 2) / 1024)) MB"
	if [ "$ref" = yes ]; then
		t=$(median "$BW/t.ms" 1)
		echo "  pytorch:   $t ms/iteration, $(awk -v m="$t" 'BEGIN { printf "%.0f", 256 / m * 1000 }') tokens/s, peak RSS $(($(median "$BW/t.time" 2) / 1024)) MB"
		echo "  ratio gpt-train / pytorch speed: $(ratio "$t" "$g")x"
	fi
}

echo "machine: $(nproc) processors, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "gpt-train: $(gpt-train --mock-data --train-iters 1 --num-layers 1 --hidden-size 8 --num-attention-heads 1 --seq-length 8 --vocab-size 16 --eval-iters 0 --workers "$THREADS" 2>&1 | sed -n 's/^gpt-train: cpu backend, //p')"
if [ "$ref" = yes ]; then
	echo "pytorch: $("$py" "$OWT_SRC/contrib/oracle/gpt2-torch.py" bench --steps 1 --layers 1 --hidden 8 --heads 1 --vocab 16 --threads "$THREADS" | sed -n 's/^torch //p')"
else
	echo "pytorch: not available (python3-torch), gpt-train alone"
fi
echo "OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-unset} OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-unset}"

torch_opts="--layers 4 --hidden 128 --heads 4"
bench "small (4 layers, 128 channels, 4 heads, B=4, T=64)" 20 \
    --num-layers 4 --hidden-size 128 --num-attention-heads 4
torch_opts="--layers 12 --hidden 768 --heads 12"
bench "GPT-2 124M shape (B=4, T=64)" 6
