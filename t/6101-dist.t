#!/bin/sh
# Data parallelism (lib/train/train.c over lib/comm/comm.c) through t/train-test.c:
# DP ranks with one micro-batch each train bit for bit as one process on
# the same global batch (logs and checkpoint files), with and without the
# distributed optimizer; with two micro-batches each, the losses of the
# first iteration are the same and the rest agree to rounding;
# checkpoints move between layouts; a rank that asks to stop stops every
# rank; a rank that hangs or dies ends the job, the last checkpoint
# intact. Pipelines of 2 and 4 stages, and a pipeline of data-parallel
# replicas, train bit for bit as one process; tensor parallelism to a
# stated tolerance.
. "${OWT_SRC:-.}/t/lib.sh"

need_mpi
tt=$OWT_BUILD/t/train-test
cd "$T" || exit 3
it5=iter_0000005
it10=iter_0000010

# Same checkpoint files: model and optimizer.
same_ckpt() {
	if cmp -s "$1/model.safetensors" "$2/model.safetensors" &&
	    cmp -s "$1/optimizer.safetensors" "$2/optimizer.safetensors"; then
		ok "$3"
	else
		not_ok "$3"
	fi
}

# One process, G=4 in micro-batches of 2: the reference.
run "$tt" -s one -S 5 10 4 2
is "$rc" 0 "one process trains"
mv out one.log
is "$(wc -l <one.log | tr -d ' ')" 11 "ten iterations and a validation loss"

mpi_run 2 "$tt" -s dp2 -S 5 10 4 2
is "$rc" 0 "DP2 trains"
same out one.log "DP2: the losses, learning rates, norms and validation loss of one process, bit for bit"
same_ckpt dp2/$it5 one/$it5 "DP2: the checkpoint at 5 is one process's, byte for byte"
same_ckpt dp2/$it10 one/$it10 "DP2: the checkpoint at 10 is one process's, byte for byte"

mpi_run 2 "$tt" -z -s zero2 -S 5 10 4 2
is "$rc" 0 "DP2 with the distributed optimizer trains"
same out one.log "DP2 + ZeRO-1: one process's log, bit for bit"
same_ckpt zero2/$it5 one/$it5 "DP2 + ZeRO-1: the gathered checkpoint at 5 is one process's"
same_ckpt zero2/$it10 one/$it10 "DP2 + ZeRO-1: the gathered checkpoint at 10 is one process's"

# Four ranks of one sample each against one process in micro-batches of 1.
run "$tt" -s one1 10 4 1
mv out one1.log
mpi_run 4 "$tt" -z -s zero4 10 4 1
is "$rc" 0 "DP4 with the distributed optimizer trains"
same out one1.log "DP4 + ZeRO-1: one process's log, bit for bit"
same_ckpt zero4/$it10 one1/$it10 "DP4 + ZeRO-1: one process's checkpoint"

# A vocabulary of 2000 (Vp 2048: four norm chunks of the token
# embedding): ZeRO's shards over 4 ranks cut the embedding and its
# output-layer gradient.
run "$tt" -M 2,32,4,16,2000 -s onev 6 4 1
mv out onev.log
mpi_run 4 "$tt" -z -M 2,32,4,16,2000 -s zerov 6 4 1
same out onev.log "DP4 + ZeRO-1 with the embedding cut between shards: one process's log"
same_ckpt zerov/iter_0000006 onev/iter_0000006 "... and its checkpoint"

have_numpy=
if /usr/bin/python3 -c 'import numpy' 2>/dev/null; then
	have_numpy=1
	# "ok" when two model files differ, by at most 1e-5 (relative L2)
	weights_tol() {
		/usr/bin/python3 - "$1" "$2" <<'EOF'
import json, struct, sys
import numpy as np
def load(p):
    b = open(p, 'rb').read()
    n = struct.unpack('<Q', b[:8])[0]
    h = json.loads(b[8:8 + n])
    return {k: np.frombuffer(b[8 + n + v['data_offsets'][0]:8 + n +
        v['data_offsets'][1]], dtype='<f4') for k, v in h.items()
        if k != '__metadata__'}
a, b = load(sys.argv[1]), load(sys.argv[2])
num = sum(float(((a[k].astype('f8') - b[k]) ** 2).sum()) for k in a)
den = sum(float((a[k].astype('f8') ** 2).sum()) for k in a)
print('ok' if 0 < num ** 0.5 / den ** 0.5 <= 1e-5 else
    'off %g' % (num ** 0.5 / den ** 0.5))
EOF
	}
fi

# Two micro-batches per rank: (g0 + g2) + (g1 + g3) is not
# ((g0 + g1) + g2) + g3, so only the first loss is exact. The rest:
# |loss difference| <= 2e-5 |loss|, final weights |dw|/|w| <= 1e-5.
run "$tt" -s one8 10 8 2
mv out one8.log
mpi_run 2 "$tt" -s dp2m2 10 8 2
is "$rc" 0 "DP2 with two micro-batches each trains"
is "$(sed -n 1p out | cut -d" " -f4)" "$(sed -n 1p one8.log | cut -d" " -f4)" \
    "DP2 m=2: the first iteration's loss is exact"
awk 'NR == FNR { l[FNR] = $4; next }
    { d = $4 - l[FNR]; if (d < 0) d = -d; if (d > 2e-5 * l[FNR]) bad++ }
    END { exit bad > 0 }' one8.log out
is "$?" 0 "DP2 m=2: every loss within 2e-5 of one process's"
if [ "$have_numpy" ]; then
	weights_tol one8/$it10/model.safetensors dp2m2/$it10/model.safetensors >rel
	is "$(cat rel)" ok "DP2 m=2: final weights within 1e-5 (relative L2), and not identical"
else
	skip "no numpy for /usr/bin/python3: the weights' tolerance"
fi

# Checkpoints are layout-free: DP2 + ZeRO's save at 5 resumed by one
# process, and one process's by DP2 + ZeRO, both give the uninterrupted run.
sed -n '6,$p' one.log >tail.log
run "$tt" -l zero2/$it5 -s res1 10 4 2
same out tail.log "DP2 + ZeRO's checkpoint resumed by one process: the same iterations 6-10"
same_ckpt res1/$it10 one/$it10 "... and the same checkpoint at 10"
mpi_run 2 "$tt" -z -l one/$it5 -s res2 10 4 2
same out tail.log "one process's checkpoint resumed by DP2 + ZeRO: the same iterations 6-10"
same_ckpt res2/$it10 one/$it10 "... and the same checkpoint at 10"

# Rank 1 alone asks to stop before iteration 4 (a signal there): the
# control all-reduce stops both after iteration 4.
mpi_run 2 "$tt" -t 3 10 4 2
is "$rc" 0 "a stop asked on rank 1 exits 0"
is "$(grep '^stopped' out)" "stopped at iteration 4" "every rank stops at the same iteration"

# Rank 1 stops answering (SIGSTOP) at iteration 3 with a 3 s timeout:
# rank 0 names it and exits 3, and mpirun ends the job.
mpi_run 2 "$tt" -w 0.05 -p 3 10 4 2
is "$rc" 3 "a rank that hangs: the job exits 3"
like err "^train-test: rank 0: ordered sum of 'gradients': no answer from rank 1 in 3 s \(dead or hung\)$" \
    "the rank that does not answer is named"

# Rank 1 dies by SIGKILL at iteration 3 after a save at 2: mpirun ends
# the job; the checkpoint at 2 is complete and resumes.
mpi_run 2 "$tt" -k 3 -s killed -S 2 10 4 2
is "$rc" 137 "a rank killed by SIGKILL ends the job (128 + 9)"
is "$(cat killed/latest_checkpointed_iteration.txt)" 2 "the latest checkpoint is the one before the kill"
sed -n '3,$p' one.log >tail2.log
run "$tt" -l killed -s after 10 4 2
same out tail2.log "it resumes to one process's run"
same_ckpt after/$it10 one/$it10 "... and its checkpoint"

# The 1F1B schedule (lib/dist/pipeline.c) with a toy model, t/pipe-test.c:
# Megatron's order of steps per stage, and the gradients of stages run
# over ranks equal those of the stages run one after the other.
pt=$OWT_BUILD/t/pipe-test
run "$pt" serial 4 6 8
cat >want <<'EOF'
order F0 F1 F2 F3 B0 F4 B1 F5 B2 B3 B4 B5 held 4
order F0 F1 F2 B0 F3 B1 F4 B2 F5 B3 B4 B5 held 3
order F0 F1 B0 F2 B1 F3 B2 F4 B3 F5 B4 B5 held 2
order F0 B0 F1 B1 F2 B2 F3 B3 F4 B4 F5 B5 held 1
EOF
sed 's/.* order/order/' out >got
same got want "1F1B: warm-up, steady pairs and cool-down per stage, as Megatron's"
for pm in "2 6" "3 6" "4 6" "4 2"; do
	set -- $pm
	run "$pt" serial $1 $2 1000
	mv out serial.out
	mpi_run $1 "$pt" run $2 1000
	sort out >got
	same got serial.out "PP$1 over $2 micro-batches: every stage's order, depth and gradient (bit for bit)"
done

# Pipeline parallelism through lib/train/train.c: stages of the model's parts
# (gpt_init_part), 1F1B over the micro-batches, the tied embedding's
# gradient summed over the first and last stage. Four micro-batches of
# one sample: PP2 and PP4 (one layer a stage) give one process's log bit
# for bit; PP2 x DP2 with one micro-batch a replica too.
run "$tt" 10 4 1
mv out pp1.log
mpi_run 2 "$tt" -P 2 10 4 1
is "$rc" 0 "PP2 trains"
same out pp1.log "PP2: one process's losses, rates, norms and validation loss, bit for bit"
mpi_run 4 "$tt" -P 4 10 4 1
same out pp1.log "PP4: one process's log, bit for bit"
run "$tt" 10 2 1
mv out pp1b.log
mpi_run 4 "$tt" -P 2 10 2 1
same out pp1b.log "PP2 x DP2: one process's log, bit for bit"
# A pipeline's checkpoint is one process's: PP2 saves what one process
# saves, and PP4 resumes one process's checkpoint to the same end.
run "$tt" -s ppone -S 5 10 4 1
mv out ppone.log
mpi_run 2 "$tt" -P 2 -s pp2 -S 5 10 4 1
same out ppone.log "PP2 saving: one process's log"
same_ckpt pp2/$it5 ppone/$it5 "PP2: the checkpoint at 5 put together by rank 0 is one process's"
same_ckpt pp2/$it10 ppone/$it10 "PP2: the checkpoint at 10 too"
sed -n '6,$p' ppone.log >pptail.log
mpi_run 4 "$tt" -P 4 -l ppone/$it5 -s pp4 10 4 1
same out pptail.log "one process's checkpoint resumed by PP4: the same iterations 6-10"
same_ckpt pp4/$it10 ppone/$it10 "... and the same checkpoint at 10"

# Tensor parallelism (the model's column- and row-parallel parts, the
# vocabulary-parallel embedding and cross-entropy) through lib/train/train.c:
# partial sums associate differently, so the numbers agree with one
# process's to rounding: every loss within 2e-5 of it, the final weights
# within 1e-5 (relative L2). TP2, TP2 x PP2 (its checkpoint put together
# from four parts), and TP2 resuming one process's checkpoint.
close_losses() {	# got want: every loss within 2e-5
	awk 'NR == FNR { l[FNR] = $4; next }
	    { d = $4 - l[FNR]; if (d < 0) d = -d; if (d > 2e-5 * l[FNR]) bad++ }
	    END { exit bad > 0 }' "$2" "$1"
}
mpi_run 2 "$tt" -T 2 10 4 1
is "$rc" 0 "TP2 trains"
close_losses out pp1.log
is "$?" 0 "TP2: every loss within 2e-5 of one process's"
mpi_run 4 "$tt" -T 2 -P 2 -s tp2pp2 10 4 1
is "$rc" 0 "TP2 x PP2 trains and saves"
close_losses out pp1.log
is "$?" 0 "TP2 x PP2: every loss within 2e-5 of one process's"
run "$tt" -s tpone -S 5 10 4 1
if [ "$have_numpy" ]; then
	weights_tol tpone/$it10/model.safetensors \
	    tp2pp2/$it10/model.safetensors >rel
	is "$(cat rel)" ok "TP2 x PP2: its checkpoint's weights within 1e-5 of one process's"
else
	skip "no numpy for /usr/bin/python3: the weights' tolerance"
fi
sed -n '6,$p' pp1.log >tptail.log
mpi_run 2 "$tt" -T 2 -l tpone/$it5 10 4 1
close_losses out tptail.log
is "$?" 0 "one process's checkpoint resumed by TP2: iterations 6-10 within 2e-5"

fails 2 "^train-test: rank [01]: --num-layers 4 is not a multiple of --pipeline-model-parallel-size 3$" \
    "layers that the stages cannot share" \
    mpi_launch 3 "$tt" -P 3 10 3 1

# gpt-train itself under mpirun: DP2 and DP2 + ZeRO-1 log what one
# process logs (the time per iteration aside) and save the same files;
# each rank names itself in its errors.
ga="--mock-data --num-layers 4 --hidden-size 32 --num-attention-heads 4
    --seq-length 16 --max-position-embeddings 16 --vocab-size 256
    --micro-batch-size 2 --global-batch-size 4 --train-iters 6
    --log-interval 1 --eval-interval 3 --eval-iters 1 --lr 1e-2
    --workers 1 --save-interval 3"
# The log without the time per iteration and the start-up lines.
numbers() {
	grep -v '^gpt-train:' "$1" |
	    sed 's/elapsed time per iteration (ms): [0-9.]* |//' >"$2"
	sed 's/, "tokens_per_s".*//' "$3" >"$4"
}
run gpt-train $ga --save g1 --log-json g1.jsonl
is "$rc" 0 "gpt-train alone"
numbers out g1.log g1.jsonl g1.num
mpi_run 2 gpt-train $ga --save g2 --log-json g2.jsonl
is "$rc" 0 "gpt-train as DP2"
numbers out g2.log g2.jsonl g2.num
same g2.log g1.log "gpt-train DP2: the log of one process (losses, rates, norms, validation)"
same g2.num g1.num "gpt-train DP2: the --log-json of one process"
like out "^gpt-train: 2 ranks \(mpirun, collectives on mpi\): 2 data-parallel, 1 pipeline stages, 1 tensor-parallel, 1 micro-batches each; the optimizer on every rank$" \
    "rank 0 logs the layout"
same_ckpt g2/iter_0000006 g1/iter_0000006 "gpt-train DP2: one process's checkpoint"
mpi_run 2 gpt-train $ga --use-distributed-optimizer --save g3
numbers out g3.log /dev/null g3.num
same g3.log g1.log "gpt-train DP2 + --use-distributed-optimizer: one process's log"
same_ckpt g3/iter_0000006 g1/iter_0000006 "gpt-train DP2 + ZeRO-1: one process's checkpoint"
sed -n '/iteration        4\//,$p' g1.log >g1.tail
mpi_run 2 gpt-train $ga --use-distributed-optimizer --load g1/iter_0000003 --save g4
numbers out g4.log /dev/null g4.num
sed -n '/iteration        4\//,$p' g4.log >g4.tail
same g4.tail g1.tail "gpt-train: one process's checkpoint at 3 resumed by DP2 + ZeRO-1: the same iterations 4-6"
same_ckpt g4/iter_0000006 g1/iter_0000006 "... and the same checkpoint"
mpi_run 2 gpt-train $ga --pipeline-model-parallel-size 2 --save g5
is "$rc" 0 "gpt-train as PP2"
numbers out g5.log /dev/null g5.num
same g5.log g1.log "gpt-train PP2: the log of one process"
same_ckpt g5/iter_0000006 g1/iter_0000006 "gpt-train PP2: one process's checkpoint"
sed -n '/iteration        4\//,$p' g1.log >g1.tail
mpi_run 2 gpt-train $ga --pipeline-model-parallel-size 2 --load g1/iter_0000003 --save g6
numbers out g6.log /dev/null g6.num
sed -n '/iteration        4\//,$p' g6.log >g6.tail
same g6.tail g1.tail "gpt-train: one process's checkpoint resumed by PP2: the same iterations 4-6"
same_ckpt g6/iter_0000006 g1/iter_0000006 "... and the same checkpoint"
mpi_run 4 gpt-train $ga --tensor-model-parallel-size 2 --pipeline-model-parallel-size 2 --save g7
is "$rc" 0 "gpt-train as TP2 x PP2"
like out "^gpt-train: 4 ranks \(mpirun, collectives on mpi\): 1 data-parallel, 2 pipeline stages, 2 tensor-parallel, 2 micro-batches each; the optimizer on every rank$" \
    "rank 0 logs the layout"
[ -f g7/iter_0000006/model.safetensors ] && ok "gpt-train TP2 x PP2 saves" || not_ok "gpt-train TP2 x PP2 saves"
fails 2 "^gpt-train: --use-distributed-optimizer with tensor or pipeline parallelism: not implemented$" \
    "gpt-train: ZeRO with model parallelism" gpt-train $ga \
    --tensor-model-parallel-size 2 --use-distributed-optimizer
fails 2 "^gpt-train: rank [01]: --global-batch-size 2 is not a multiple of --micro-batch-size 2 x 2 data-parallel ranks$" \
    "gpt-train: a global batch the ranks cannot share" \
    mpi_launch 2 gpt-train $ga --global-batch-size 2
fails 3 "^gpt-train: rank [01] of 2 under mpirun, but this build has no MPI \(/nonexistent: cannot open shared object file: No such file or directory; install libopenmpi-dev and rebuild\)$" \
    "gpt-train launched without the MPI plugin" mpi_launch 2 \
    -x OWT_COMM_PLUGIN=/nonexistent gpt-train $ga

fails 2 "^train-test: rank [01]: --global-batch-size 3 is not a multiple of --micro-batch-size 1 x 2 data-parallel ranks$" \
    "a global batch that the ranks cannot share" \
    mpi_launch 2 "$tt" 10 3 1

done_testing
