# gpt-sample: generation speed at the GPT-2 124M shape against the PyTorch
# reference with a key/value cache (contrib/oracle/gpt2-torch.py bench-sample:
# preallocated cache written in place, greedy), side by side at the same
# thread count: batch 1 and 8, fp32 and --int8, 16-token prompts and 64
# new tokens each. Both sides time the decoding steps after the prompt
# (gpt-sample's summary line counts the prompt's step too, which only
# lowers its figure). The weights are random: speed does not depend on
# them. Then the cost of --int8 in quality: the perplexity of held-out King
# James chapters under a small model trained on the others, fp32 and int8.
. "$OWT_SRC/contrib/bench/lib.sh"
torch_ref

echo "machine: $(nproc) processors, load $(cut -d' ' -f1-3 /proc/loadavg)"
gpt-train -q --mock-data --train-iters 1 --seq-length 8 --micro-batch-size 1 \
    --eval-iters 0 --workers "$THREADS" --save "$BW/124m"
rm -f "$BW"/124m/iter_*/optimizer.safetensors

# "tokens/s" of gpt-sample's summary
tps() {
	sed -n 's/.* \([0-9.]*\) tokens\/s$/\1/p' "$1"
}

bench() {	# batch, then gpt-sample options
	b=$1
	shift
	: >"$BW/g.tps"
	: >"$BW/t.tps"
	awk -v b="$b" 'BEGIN { for (i = 0; i < b; i++) print "It was the best of times, it was the worst of times, it was the" }' >"$BW/prompts"
	# Each repetition runs both sides back to back (the int8 rows too),
	# so both see the same moment of a shared machine.
	for i in $(seq "$REPS"); do
		gpt-sample --load "$BW/124m" --workers "$THREADS" --greedy \
		    --micro-batch-size "$b" --out-seq-length 64 \
		    --sample-input-file "$BW/prompts" "$@" >/dev/null 2>"$BW/g.err"
		tps "$BW/g.err" >>"$BW/g.tps"
		if [ "$ref" = yes ]; then
			env OMP_NUM_THREADS="$THREADS" "$py" \
			    "$OWT_SRC/contrib/oracle/gpt2-torch.py" bench-sample \
			    --threads "$THREADS" --batch "$b" --prompt 16 \
			    --tokens 64 >"$BW/t.out"
			sed -n 's/^tokens_per_s //p' "$BW/t.out" >>"$BW/t.tps"
		fi
	done
	g=$(median "$BW/g.tps" 1)
	t=0
	[ "$ref" = yes ] && t=$(median "$BW/t.tps" 1)
	echo "  batch $b ${*:-fp32}: gpt-sample $g tokens/s, pytorch fp32 $t tokens/s: $(ratio "$g" "$t")x"
}

echo "GPT-2 124M shape, $THREADS threads, median of $REPS runs, 64 new tokens per sample:"
if [ "$ref" = yes ]; then
	echo "  pytorch: $("$py" "$OWT_SRC/contrib/oracle/gpt2-torch.py" bench --steps 1 --layers 1 --hidden 8 --heads 1 --vocab 16 --threads "$THREADS" | sed -n 's/^torch //p')"
fi
bench 1
bench 1 --int8
bench 8
bench 8 --int8

# --int8 and perplexity: a small model (4 layers, 128 channels) trained on
# the first 40 King James chapters of the demo data, scored on the other 6.
zcat "$OWT_SRC/contrib/demo/data/kjv.jsonl.gz" | head -n 40 >"$BW/train.jsonl"
zcat "$OWT_SRC/contrib/demo/data/kjv.jsonl.gz" | tail -n 6 >"$BW/held.jsonl"
bpe-encode -q --append-eod "$BW/train.jsonl" | idx-pack -q -o "$BW/kjv"
gpt-train -q --data-path "$BW/kjv" --num-layers 4 --hidden-size 128 \
    --num-attention-heads 4 --seq-length 64 --max-position-embeddings 128 \
    --micro-batch-size 8 --train-iters 400 --lr 2e-3 --lr-warmup-iters 10 \
    --eval-iters 0 --split 100,0,0 --workers "$THREADS" --save "$BW/small"
for w in fp32 int8; do
	gpt-sample --load "$BW/small" --score --sample-input-file "$BW/held.jsonl" \
	    --workers "$THREADS" $([ $w = int8 ] && echo --int8) 2>"$BW/$w.err" >/dev/null
	tail -n 1 "$BW/$w.err" | sed "s/^gpt-sample: /  held-out perplexity, $w: /"
done
