#!/bin/sh
# contrib/install/megatron-to-owt: Megatron-LM GPT checkpoints, written with
# Megatron's state-dict names and nesting by contrib/oracle/megatron-ckpt.py, turn
# into directories gpt-sample loads, and gpt-sample --score of the result
# equals a forward pass computed from Megatron's own layout (fused QKV rows
# per head, [out, in] weights, padded vocabulary) to 1e-4. Every other
# layout of the same weights (checkpoint_version 1.0 and 0, torch's format
# before 1.6, two tensor-parallel ranks, fp16 and bfloat16, a bare state
# dict) gives the same bytes; the check fails on a wrong QKV order and on
# the padding rows kept. The converter needs no torch and runs none of the
# pickle's code. Bad inputs exit 1, bad usage 2, an unwritable output or no
# numpy 3. Skips where /usr/bin/python3 has no torch (which makes the
# checkpoints and the reference).
. "${OWT_SRC:-.}/t/lib.sh"

py=/usr/bin/python3
[ -x "$py" ] && "$py" -c 'import torch' 2>/dev/null ||
    skip_all "no PyTorch (apt-get install python3-torch)"
conv=$OWT_SRC/contrib/install/megatron-to-owt
mk=$OWT_SRC/contrib/oracle/megatron-ckpt.py
m2o() { "$py" "$conv" "$@"; }

cd "$T" || exit 3
"$py" "$mk" make ck || { echo "Bail out! could not make the test checkpoints"; exit 1; }
printf '%s\n' '{"text": "The quick brown fox jumps over the lazy dog."}' \
    '{"text": "In the beginning was the Word, and the Word was with God."}' \
    '{"text": "caf\u00e9, na\u00efve, 20 euros"}' '{"text": "a"}' >t.jsonl
v3pt=ck/v3/iter_0000010/mp_rank_00/model_optim_rng.pt

# score DIR: gpt-sample --score of the conversion in DIR against the forward
# pass of v3's Megatron weights; the checker's status in $rc.
score() {
	gpt-sample --device cpu --load "$1" --score --ids -q \
	    --sample-input-file t.jsonl >scored.jsonl ||
	    { rc=fail; return; }
	run "$py" "$mk" score "$v3pt" scored.jsonl
	sed 's/^/# /' "$T/out"
}

# The safetensors header (names, dtypes, shapes, offsets) of a file.
header() {
	n=$(od -An -tu8 -N8 "$1" | tr -d ' ')
	head -c $((8 + n)) "$1"
}

run m2o ck/v3 o/v3
is "$rc" 0 "the save directory of a version 3.0 checkpoint converts"
is "$(cat "$T/err")" "megatron-to-owt: o/v3: iteration 10, checkpoint version 3.0, 1 tensor-parallel rank: 2 layers, hidden 64, 4 heads, 64 positions, vocabulary 50257 of 50304 rows" \
    "the summary says what was read"
score o/v3
is "$rc" 0 "gpt-sample --score equals the forward pass of Megatron's layout"

# The files gpt-train saves for the same shape: the same config.json and
# safetensors header.
gpt-train --device cpu --mock-data --train-iters 1 --num-layers 2 \
    --hidden-size 64 --num-attention-heads 4 --seq-length 32 \
    --max-position-embeddings 64 --micro-batch-size 1 --global-batch-size 1 \
    --hidden-dropout 0.1 --attention-dropout 0.1 --eval-iters 0 --save gt -q ||
    { echo "Bail out! gpt-train could not save a model"; exit 1; }
same gt/iter_0000001/config.json o/v3/config.json "config.json is gpt-train's"
header gt/iter_0000001/model.safetensors >h.gt
header o/v3/model.safetensors >h.v3
same h.gt h.v3 "the safetensors header is gpt-train's"

# Other layouts of the same weights, named by each kind of path.
for c in "v1 ck/v1/iter_0000010 1.0 1 50304" \
    "v0 ck/v0/iter_0000010/mp_rank_00/model_optim_rng.pt 0.0 1 50304" \
    "tp2 ck/tp2 3.0 2 50432" \
    "tp2v0 ck/tp2v0/iter_0000010/mp_rank_01/model_optim_rng.pt 0.0 2 50432"; do
	set -- $c
	run m2o "$2" "o/$1"
	is "$rc" 0 "$1 ($2) converts"
	ranks="$4 tensor-parallel rank"
	[ "$4" = 1 ] || ranks=${ranks}s
	is "$(cat "$T/err")" "megatron-to-owt: o/$1: iteration 10, checkpoint version $3, $ranks: 2 layers, hidden 64, 4 heads, 64 positions, vocabulary 50257 of $5 rows" \
	    "$1: the summary"
	same o/v3/model.safetensors "o/$1/model.safetensors" "$1 gives the same weights"
done
mkdir -p rel/release/mp_rank_00 && printf release >rel/latest_checkpointed_iteration.txt &&
    cp ck/payload.pt rel/release/mp_rank_00/model_optim_rng.pt
run m2o --vocab-size 100 rel o/rel
is "$rc:$(cat "$T/err")" "0:megatron-to-owt: o/rel: iteration 10, checkpoint version 3.0, 1 tensor-parallel rank: 1 layer, hidden 8, 2 heads, 16 positions, vocabulary 100 of 128 rows" \
    "a release checkpoint converts"
run m2o -q --vocab-size 100 rel/release/mp_rank_00 o/rank
is "$rc" 0 "a rank directory converts"
same o/rel/model.safetensors o/rank/model.safetensors "to the same weights"
fails 1 "^megatron-to-owt: ck/bare.pt: no args to give the number of attention heads: say it with --num-attention-heads$" \
    "a bare state dict without --num-attention-heads" m2o ck/bare.pt o/bare
run m2o -q --num-attention-heads 4 ck/bare.pt o/bare
is "$rc:$(cat "$T/err")" "0:" "a bare state dict converts quietly with -q"
same o/v3/model.safetensors o/bare/model.safetensors "a bare state dict gives the same weights"
same o/v3/config.json o/bare/config.json "and the same config.json"

# The check can fail: the wrong QKV order, or the padding rows kept.
run m2o -q --checkpoint-version 3.0 ck/v0 o/wrong
is "$rc" 0 "--checkpoint-version overrides the checkpoint's"
score o/wrong
is "$rc" 1 "version 0's rows read in 3.0's order score differently"
run m2o -q --vocab-size 50304 ck/v3 o/pad
is "$rc" 0 "--vocab-size 50304 keeps the padding rows"
score o/pad
is "$rc" 1 "the padding rows in the softmax score differently"

# Replacing an earlier conversion; nothing else is replaced.
run m2o -q ck/v0 o/v3
is "$rc" 0 "an earlier conversion is replaced"
same o/v0/model.safetensors o/v3/model.safetensors "with the new weights"
is "$(ls -A o | grep -c tmp)" 0 "no temporaries are left"
mkdir busy && : >busy/notes.txt
fails 2 "^megatron-to-owt: busy: exists and holds 'notes.txt', so it is not a converted checkpoint: not replaced$" \
    "an output directory holding other files" m2o ck/v3 busy
: >afile
fails 2 "^megatron-to-owt: afile: exists and is not a directory: not replaced$" \
    "an output that is a file" m2o ck/v3 afile
fails 3 "^megatron-to-owt: cannot create '$T/afile': Not a directory$" \
    "an output under a file" m2o ck/v3 afile/sub

# The pickle names Megatron's classes, which plain torch.load needs; the
# converter neither needs them nor runs the pickle's code.
run m2o -q --vocab-size 100 ck/payload.pt o/payload
is "$rc" 0 "a checkpoint with a payload converts"
[ -e ck/payload-ran ] && not_ok "the payload did not run" || ok "the payload did not run"
run "$py" -c 'import sys, torch
for f in sys.argv[1:]:
    try:
        torch.load(f)
    except ImportError as e:
        print(e)' "$v3pt" ck/payload.pt
like "$T/out" "No module named 'megatron'" "the checkpoints name Megatron's classes"
[ -e ck/payload-ran ] && ok "plain torch.load runs the payload" ||
    not_ok "plain torch.load runs the payload"

# Checkpoints that are not converted, and what they say.
fails 1 "^megatron-to-owt: ck/nope.pt: no such file$" "a missing file" \
    m2o ck/nope.pt o/x
fails 1 "^megatron-to-owt: ck/pp2/iter_0000010: a pipeline-parallel checkpoint \(mp_rank_00_001\): only checkpoints saved with --pipeline-model-parallel-size 1 are converted$" \
    "a pipeline-parallel checkpoint" m2o ck/pp2 o/x
fails 1 "^megatron-to-owt: ck/tp2-half/iter_0000010: no mp_rank_01 \(the checkpoint's args say 2 tensor-parallel ranks\)$" \
    "a tensor-parallel rank missing" m2o ck/tp2-half o/x
fails 1 "^megatron-to-owt: ck/tp2.pt: one of 2 tensor-parallel shards: give the iteration directory that holds mp_rank_00 to mp_rank_01$" \
    "one shard of two" m2o ck/tp2.pt o/x
fails 1 "^megatron-to-owt: ck/other.pt: not a Megatron-LM GPT checkpoint \(no 'model' state dict\)$" \
    "a torch file that is no checkpoint" m2o ck/other.pt o/x
fails 1 "^megatron-to-owt: t.jsonl: not a torch checkpoint \(invalid load key, '\{'\.\)$" \
    "a file that is not torch's" m2o t.jsonl o/x
head -c 4096 "$v3pt" >cut.pt
fails 1 "^megatron-to-owt: cut.pt: not a torch checkpoint \(a zip without its directory: truncated\?\)$" \
    "a truncated checkpoint" m2o cut.pt o/x
fails 1 "^megatron-to-owt: ck/version.pt: checkpoint_version 1.5 is not one Megatron-LM wrote \(0, 1.0, 2.0 or later\)$" \
    "an unknown checkpoint_version" m2o --vocab-size 100 ck/version.pt o/x
fails 1 "^megatron-to-owt: ck/missing.pt: no tensor 'layers.0.mlp.dense_4h_to_h.bias' \(of 1 layer\)$" \
    "a tensor missing" m2o --vocab-size 100 ck/missing.pt o/x
fails 1 "^megatron-to-owt: ck/untied.pt: tensor 'language_model.output_layer.weight' is not part of a GPT-2 model \(pre-LN, learned positions, tied output layer\)$" \
    "an untied output layer" m2o --vocab-size 100 ck/untied.pt o/x
fails 1 "^megatron-to-owt: ck/postln.pt: the model has the residual taken after LayerNorm \(--apply-residual-connection-post-layernorm True\): gpt-train's GPT-2 does not$" \
    "a post-LayerNorm residual" m2o --vocab-size 100 ck/postln.pt o/x
fails 1 "^megatron-to-owt: ck/args.pt: the checkpoint's args say num_layers 3, its weights 1$" \
    "args that do not match the weights" m2o --vocab-size 100 ck/args.pt o/x
fails 1 "^megatron-to-owt: ck/payload.pt: the word embeddings have 128 rows, fewer than --vocab-size 200$" \
    "--vocab-size beyond the rows" m2o --vocab-size 200 ck/payload.pt o/x
[ -e o/x ] && not_ok "a failed conversion writes nothing" ||
    ok "a failed conversion writes nothing"
run m2o -q --vocab-size 100 ck/erf.pt o/erf
is "$rc:$(cat "$T/err")" "0:megatron-to-owt: ck/erf.pt: the model was trained with the exact (erf) GELU (--no-bias-gelu-fusion); owt computes the tanh form, so its outputs differ a little" \
    "the exact GELU converts with a warning"

mkdir nonumpy && echo 'raise ImportError("no numpy here")' >nonumpy/numpy.py
run env PYTHONPATH=nonumpy "$py" "$conv" ck/v3 o/x
is "$rc:$(cat "$T/err")" "3:megatron-to-owt: needs numpy: no numpy here" \
    "without numpy, exit 3"

# Usage.
usage="usage: megatron-to-owt [-hq] [--checkpoint-version v] [--num-attention-heads n] [--vocab-size n] input outdir"
run m2o -h
is "$rc:$(head -n 1 "$T/out")" "0:$usage" "-h prints the usage line"
like "$T/out" "^      --vocab-size n " "-h lists the options"
run m2o ck/v3
is "$rc:$(cat "$T/err")" "2:$usage" "one operand is a usage error"
fails 2 "^megatron-to-owt: unrecognized option '--bogus'$" "a bad option" \
    m2o --bogus ck/v3 o/x
fails 2 "^megatron-to-owt: --vocab-size: '0' is out of range 1..1073741824$" \
    "--vocab-size 0" m2o --vocab-size 0 ck/v3 o/x
fails 2 "^megatron-to-owt: --checkpoint-version: '1.5' is not 0, 1.0, or 2.0 or later$" \
    "--checkpoint-version 1.5" m2o --checkpoint-version 1.5 ck/v3 o/x
done_testing
