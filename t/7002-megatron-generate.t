#!/bin/sh
# The seed's generation command line (notes/seed-scripts.md), run as a
# Megatron-LM user would run it with only the program name replaced and
# the sizes shrunk (shell variables; the flags untouched), on a tiny
# checkpoint trained here: the exact output for the fixed seed, the same
# text through each of Megatron's input modes, Megatron's own output
# forms (--sample-output-file, and --num-samples' unconditional records)
# byte for byte, and the flags of tools/generate_samples_gpt.py.
. "${OWT_SRC:-.}/t/lib.sh"

cd "$T" || exit 3
py=/usr/bin/python3
# --fp16 keeps its meaning on a GPU; these bytes are the cpu backend's
OWT_DEVICE=cpu
export OWT_DEVICE

LAYERS=2 HIDDEN=32 HEADS=2 SEQ=32 POS=32 OUT=12
ITER=0000001
# A model whose draws do not hang on the last bits of its numbers: one
# step of a tiny learning rate from a wide initialization (so the weights
# are the seed's, whatever the build's sums, and the next-token
# distributions far from flat).
mkdir -p model
cp "$OWT_SRC/data/gpt2/encoder.json" model/gpt2-vocab.json &&
    cp "$OWT_SRC/data/gpt2/vocab.bpe" model/gpt2-merges.txt &&
    gpt-train --mock-data --num-layers $LAYERS --hidden-size $HIDDEN \
    --num-attention-heads $HEADS --seq-length $SEQ --max-position-embeddings $POS \
    --vocab-size 50304 --micro-batch-size 4 --workers 1 --train-iters 1 \
    --lr 1e-6 --min-lr 0 --init-method-std 0.3 --eval-iters 0 \
    --save model/gpt2_1.3B_output -q ||
    { echo "Bail out! could not train the test model"; exit 1; }
printf 'The meaning of life is\nIn the beginning\n' >prompts.txt

# The seed's line, --interactive with the prompts on standard input.
megatron() {
	gpt-sample \
	    --num-layers $LAYERS --hidden-size $HIDDEN --num-attention-heads $HEADS \
	    --seq-length $SEQ --max-position-embeddings $POS \
	    --tokenizer-type GPT2BPETokenizer \
	    --vocab-file ./model/gpt2-vocab.json --merge-file ./model/gpt2-merges.txt \
	    --load ./model/gpt2_1.3B_output/iter_$ITER --fp16 \
	    --out-seq-length $OUT --temperature 0.9 --top-p 0.95 \
	    "$@"
}
run megatron --genfile ./generated_output.txt --interactive <prompts.txt
is "$rc" 0 "the seed's generation command line exits 0"
like "$T/err" '^gpt-sample: --fp16: the cpu backend computes in fp32: generating in fp32$' \
    "--fp16 without a GPU: fp32, with a warning"
like "$T/err" '^gpt-sample: 2 prompts, 2 samples, 24 tokens in ' "two prompts, twelve tokens each"
cat >want.jsonl <<'EOF'
{"prompt":"The meaning of life is","text":" plunge om Rights Prosecutor fetishGettingAh students Fare629noxiousbara","prompt_tokens":5,"tokens":12,"finished":false}
{"prompt":"In the beginning","text":"56 certificationγ1969 Sunshine devastating Wizard IPM Used collapses confry","prompt_tokens":3,"tokens":12,"finished":false}
EOF
same generated_output.txt want.jsonl "--genfile: a JSON Lines record per prompt, the text for seed 1234"

# The seed's other input: --sample-input-file in place of --interactive.
run megatron --genfile ./generated_output.txt --sample-input-file prompts.txt
same generated_output.txt want.jsonl "--sample-input-file: the same records"
run megatron --genfile ./generated_output.txt --sample-input-file prompts.txt \
    --micro-batch-size 3 --recompute
same generated_output.txt want.jsonl "--micro-batch-size and --recompute change no number"
like "$T/err" '^gpt-sample: --recompute: accepted; no effect$' "--recompute: one note line"

# Megatron's file mode: --sample-output-file, its Context form.
printf 'The meaning of life is\nIn the beginning\nstop\nnot read\n' >prompts2.txt
run megatron --genfile ./generated_output.txt --sample-input-file prompts2.txt \
    --sample-output-file prompts2.txt.out
is "$rc" 0 "--sample-output-file exits 0"
like "$T/err" '^gpt-sample: --genfile: not written: samples of prompts go to --sample-output-file$' \
    "--genfile beside it is named as not written"
cat >want.out <<'EOF'

Context:The meaning of life is


Megatron-LM: gutsbattlerum StronghWHAT PyongyangGR shows 308Sel Eater paralyzed

Context:In the beginning


Megatron-LM: yourselfInf Alibaba Huckabee satirPN Belt IPM facial ;)renical
EOF
same prompts2.txt.out want.out "--sample-output-file: Megatron's Context and Megatron-LM lines, up to the line holding stop"
if [ -x "$py" ]; then
	# each line a JSON prompt with its newline, as Megatron's readlines
	# keeps it; its record rendered as generate_samples_gpt.py writes
	"$py" -c '
import json, sys
for l in open(sys.argv[1]):
    print(json.dumps({"prompt": l}))
' prompts.txt >prompts.jsonl
	run megatron --sample-input-file prompts.txt --sample-output-file p.out
	run megatron --sample-input-file prompts.jsonl --genfile p.jsonl
	"$py" -c '
import json, sys
out = open(sys.argv[2], "w")
for l in open(sys.argv[1]):
    r = json.loads(l)
    out.write("\nContext:")
    out.write(r["prompt"])
    out.write("\n\nMegatron-LM:")
    out.write(r["text"])
    out.write("\n")
' p.jsonl p2.out
	same p.out p2.out "the Context form is the records' prompt and text as Megatron's script writes them"
else
	skip "no /usr/bin/python3"
fi

# Megatron's unconditional mode: --num-samples without prompts.
run megatron --genfile ./generated_output.txt --num-samples 3
is "$rc" 0 "--num-samples 3 without prompts exits 0"
cat >want-uncond.jsonl <<'EOF'
{"text": " abandoning heats Games clad Maduroinski Below results Advisor knackourses frogs", "length": 12, "finished": false}
{"text": "ford affection Boolean drifting infinitely Bombventory regress encounters geopolitical conf't", "length": 12, "finished": false}
{"text": "key OrthChair Gor symb therapistsn relatingarez educatingidiunte", "length": 12, "finished": false}
EOF
same generated_output.txt want-uncond.jsonl "--genfile: json.dumps's {\"text\", \"length\", \"finished\"} records"
printf '\n' >one.txt
run megatron --genfile e.jsonl --num-samples 3 --sample-input-file one.txt
if [ -x "$py" ]; then
	"$py" -c '
import json, sys
a = [json.loads(l) for l in open(sys.argv[1])]
b = [json.loads(l) for l in open(sys.argv[2])]
ok = len(a) == 3 and [x["text"] for x in a] == [x["text"] for x in b] and \
    [x["length"] for x in a] == [x["tokens"] for x in b] and \
    [x["finished"] for x in a] == [x["finished"] for x in b]
print("ok" if ok else "differ")
' generated_output.txt e.jsonl >cmp.out
	is "$(cat cmp.out)" ok "unconditional samples are those of an empty prompt"
else
	skip "no /usr/bin/python3"
fi

# The rest of generate_samples_gpt.py's flags.
run megatron --genfile g1.txt --sample-input-file prompts.txt --top_k 1
run megatron --genfile g2.txt --sample-input-file prompts.txt --greedy
same g1.txt g2.txt "--top_k 1 is --greedy"
run megatron --genfile g3.txt --sample-input-file prompts.txt --top_p 0.95 --top_k 0
same g3.txt want.jsonl "--top_p and --top_k, Megatron's spellings"
run megatron --genfile g4.txt --sample-input-file prompts.txt --temperature 2
cmp -s g4.txt want.jsonl && not_ok "--temperature changes the draws" ||
    ok "--temperature changes the draws"
fails 1 '^gpt-sample: \./model/gpt2_1\.3B_output/iter_0000001/config\.json: n_layer is 2, but --num-layers is 24$' \
    "the 1.3B shape against a smaller checkpoint" megatron --num-layers 24 --sample-input-file prompts.txt
fails 1 '^gpt-sample: \./model/gpt2_1\.3B_output/iter_0000001/config\.json: n_positions is 32, but --max-position-embeddings is 2048$' \
    "--max-position-embeddings against config.json" megatron --max-position-embeddings 2048 --sample-input-file prompts.txt
fails 2 "^gpt-sample: --tokenizer-type: 'BertWordPieceLowerCase' is not GPT2BPETokenizer$" \
    "another --tokenizer-type" megatron --tokenizer-type BertWordPieceLowerCase
fails 2 '^gpt-sample: --score and --sample-output-file exclude each other$' \
    "--score with --sample-output-file" megatron --score --sample-output-file x
run megatron --sample-output-file nodir/x.out --sample-input-file prompts.txt
is "$rc:$(grep -c "^gpt-sample: cannot create 'nodir/x.out': " "$T/err")" 3:1 \
    "an unwritable --sample-output-file: exit 3, named"

done_testing
