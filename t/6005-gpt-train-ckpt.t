#!/bin/sh
# gpt-train's --load and --save rules (the table in gpt-train(1)), row by
# row: nothing to load starts from scratch with a warning, a run's
# iteration resumes only when complete, --no-load-optim, a Hugging Face
# directory and --finetune start at iteration 0, a new run does not
# replace another run's checkpoints without --force; config.json checked
# against the weights before the model is allocated; the modes of saved
# files under three umasks; temporaries of killed saves swept; --min-lr
# above --lr (SIGHUP's save: t/6001).
. "${OWT_SRC:-.}/t/lib.sh"

cd "$T" || exit 3
tiny="--mock-data --num-layers 2 --hidden-size 64 --num-attention-heads 4
    --seq-length 32 --max-position-embeddings 64 --vocab-size 300
    --micro-batch-size 4 --workers 1 --eval-iters 0 --log-interval 1"

gpt-train $tiny --train-iters 4 --save base --save-interval 2 -q ||
    { echo "Bail out! could not train the test model"; exit 1; }

# Row 1: nothing to load.
run gpt-train $tiny --train-iters 2 --load nosuch --save nosuch
is "$rc" 0 "--load of a missing directory exits 0"
is "$(grep -c 'starting from scratch' err)" 1 "with one warning"
like err '^gpt-train: nosuch: no such checkpoint directory; starting from scratch$' \
    "the warning names the directory"
like out '^ iteration        1/       2 ' "it starts at iteration 0"
is "$(cat nosuch/latest_checkpointed_iteration.txt)" 2 "--save X --load X works the first time"
run gpt-train $tiny --train-iters 3 --load nosuch --save nosuch
is "$rc:$(grep -c 'starting from scratch' err)" 0:0 "and the second time resumes, without a warning"
like out '^gpt-train: resuming at iteration 2, 8 samples consumed$' "at the saved iteration"
mkdir empty
run gpt-train $tiny --train-iters 1 --load empty
is "$rc" 0 "--load of a directory without a checkpoint exits 0"
like err '^gpt-train: empty: no checkpoint \(neither latest_checkpointed_iteration.txt nor model.safetensors\); starting from scratch$' \
    "with a warning saying what is missing"

# Row 2: latest_checkpointed_iteration.txt names an iteration, which must
# be complete; the run it belongs to is left as it was.
for f in trainer_state.json optimizer.safetensors model.safetensors config.json; do
	rm -rf part && cp -R base part && rm part/iter_0000004/$f
	fails 1 "^gpt-train: part/iter_0000004: incomplete checkpoint: no $f\$" \
	    "an iteration without $f" gpt-train $tiny --train-iters 6 --load part --save part
done
rm -rf part && cp -R base part &&
    rm part/iter_0000004/trainer_state.json part/iter_0000004/optimizer.safetensors
fails 1 '^gpt-train: part/iter_0000004: incomplete checkpoint: no trainer_state.json, optimizer.safetensors$' \
    "every missing file is named" gpt-train $tiny --train-iters 6 --load part --save part
ls part part/iter_0000002 | tr '\n' ' ' >ls.out
is "$(cat ls.out; cat part/latest_checkpointed_iteration.txt)" \
    "part: iter_0000002 iter_0000004 latest_checkpointed_iteration.txt  part/iter_0000002: config.json model.safetensors optimizer.safetensors trainer_state.json 4" \
    "and nothing of the run is replaced"
rm -rf part && cp -R base part && printf 6 >part/latest_checkpointed_iteration.txt
fails 1 "^gpt-train: part/latest_checkpointed_iteration.txt: iteration 6: no directory 'part/iter_0000006'$" \
    "a latest file naming a missing iteration" gpt-train $tiny --train-iters 8 --load part

# trainer_state.json must agree with its directory and its samples: an
# iteration edited would skip iterations (or data) silently.
rm -rf part && cp -R base part &&
    sed 's/"iteration": 4,/"iteration": 5,/' base/iter_0000004/trainer_state.json \
    >part/iter_0000004/trainer_state.json
fails 1 '^gpt-train: part/iter_0000004/trainer_state.json: iteration 5 does not match its directory iter_0000004$' \
    "an iteration that is not its directory's" gpt-train $tiny --train-iters 8 --load part
fails 1 '^gpt-train: part/iter_0000004/trainer_state.json: iteration 5 does not match its directory iter_0000004$' \
    "and with --load naming the directory" gpt-train $tiny --train-iters 8 --load part/iter_0000004
mv part/iter_0000004 part/mine
sed 's/"consumed_train_samples": 16,/"consumed_train_samples": 3,/' base/iter_0000004/trainer_state.json \
    >part/mine/trainer_state.json
fails 1 '^gpt-train: part/mine/trainer_state.json: 3 samples consumed in 4 iterations, not 1 to 16777216 an iteration$' \
    "fewer samples consumed than iterations" gpt-train $tiny --train-iters 8 --load part/mine
sed 's/"consumed_train_samples": 16,/"consumed_train_samples": 0,/' base/iter_0000004/trainer_state.json \
    >part/mine/trainer_state.json
fails 1 '^gpt-train: part/mine/trainer_state.json: 0 samples consumed in 4 iterations, not 1 to 16777216 an iteration$' \
    "none consumed in 4 iterations" gpt-train $tiny --train-iters 8 --load part/mine
# The global batch may change on resuming: 4 x 4 + 2 x 8 samples in 6.
rm -rf part && cp -R base part
gpt-train $tiny --train-iters 6 --global-batch-size 8 --load part --save part -q &&
    run gpt-train $tiny --train-iters 7 --load part -q
is "$rc:$(grep -o '"consumed_train_samples": [0-9]*' part/iter_0000006/trainer_state.json)" \
    '0:"consumed_train_samples": 32' \
    "a run whose global batch changed resumes (32 samples in 6 iterations)"

# Row 3: the optimizer missing, with --no-load-optim.
rm -rf part && cp -R base part && rm part/iter_0000004/optimizer.safetensors
run gpt-train $tiny --train-iters 6 --load part --save part --no-load-optim
is "$rc" 0 "--no-load-optim resumes without optimizer.safetensors"
like err '^gpt-train: part/iter_0000004: no optimizer.safetensors: resuming with new AdamW moments \(--no-load-optim\)$' \
    "with a warning"
like out '^gpt-train: resuming at iteration 4, ' "at the saved iteration"
head -c 200 part/iter_0000006/optimizer.safetensors | tr -d '\000' >hdr
like hdr '"step":"2"' "the moments start afresh: 2 AdamW steps, not 6"
run gpt-train $tiny --train-iters 6 --load base --no-load-optim
is "$rc:$(grep -c 'no optimizer' err)" 0:0 "--no-load-optim with the file there: no warning"

# Row 4: a Hugging Face directory starts a fine-tune at iteration 0, even
# beside Hugging Face Trainer's trainer_state.json; an iter_N directory
# itself resumes.
mkdir hf && cp base/iter_0000004/model.safetensors base/iter_0000004/config.json hf/
printf '{"global_step": 500, "epoch": 1.0}\n' >hf/trainer_state.json
run gpt-train $tiny --train-iters 2 --load hf --save hfrun
is "$rc" 0 "a Hugging Face directory loads"
like out '^ iteration        1/       2 ' "and training starts at iteration 0"
is "$(cat hfrun/latest_checkpointed_iteration.txt)" 2 "saving iterations 1 to 2"
run gpt-train $tiny --train-iters 5 --load base/iter_0000002
is "$rc" 0 "an iter_N directory itself loads"
like out '^gpt-train: resuming at iteration 2, ' "and resumes at its iteration"
rm hf/config.json
fails 1 '^gpt-train: hf: incomplete checkpoint: no config.json$' \
    "a Hugging Face directory without config.json" gpt-train $tiny --train-iters 1 --load hf

# Row 5: --finetune: weights only, from a complete or an incomplete run.
rm -rf part && cp -R base part && rm part/iter_0000004/optimizer.safetensors part/iter_0000004/trainer_state.json
run gpt-train $tiny --train-iters 2 --load part --finetune
is "$rc" 0 "--finetune loads the weights of an iteration without optimizer or state"
like out '^ iteration        1/       2 ' "and starts at iteration 0"
fails 1 '^gpt-train: empty: no checkpoint \(neither latest_checkpointed_iteration.txt nor model.safetensors\); nothing to fine-tune from$' \
    "--finetune with nothing to load" gpt-train $tiny --train-iters 1 --load empty --finetune
fails 2 '^gpt-train: --finetune needs --load$' "--finetune without --load" \
    gpt-train $tiny --train-iters 1 --finetune

# Row 6: a run that does not resume, with --save on another run's checkpoints.
cp -R base other
fails 1 '^gpt-train: other: already holds checkpoints \(iter_0000002, iter_0000004, latest_checkpointed_iteration.txt\) of a run this one does not resume: --load other resumes it, --force replaces them$' \
    "a new run over another run's checkpoints" gpt-train $tiny --train-iters 1 --save other
same base/iter_0000004/model.safetensors other/iter_0000004/model.safetensors \
    "which are left as they were"
fails 1 '^gpt-train: other: already holds checkpoints' "a fine-tune into them" \
    gpt-train $tiny --train-iters 1 --save other --load other --finetune
mkdir -p many/iter_0000001 many/iter_0000002 many/iter_0000003 many/iter_0000004 many/iter_0000005 \
    many/iter_0000006
fails 1 '^gpt-train: many: already holds checkpoints \(iter_0000001, iter_0000002, iter_0000003, iter_0000004 and 2 more\) ' \
    "many checkpoints are named in part" gpt-train $tiny --train-iters 1 --save many
run gpt-train $tiny --train-iters 1 --save other --force
is "$rc" 0 "--force replaces them"
like out '^gpt-train: removed the checkpoints in other \(--force\)$' "saying so"
ls other | tr '\n' ' ' >ls.out
is "$(cat ls.out; cat other/latest_checkpointed_iteration.txt)" \
    "iter_0000001 latest_checkpointed_iteration.txt 1" "leaving only the new run's"

# config.json is checked against the weights before the model is allocated:
# 2000000 layers of 64 channels would be 400 GB.
rm -rf big && cp -R base big
sed 's/"n_layer": 2,/"n_layer": 2000000,/' base/iter_0000004/config.json >big/iter_0000004/config.json
fails 1 "^gpt-train: big/iter_0000004/model.safetensors: no tensor 'transformer.h.2.ln_1.weight' of the 2000000 layers of config.json$" \
    "a config.json with more layers than the weights" gpt-train $tiny --train-iters 5 --load big
sed 's/"n_head": 4,/"n_head": 3,/' base/iter_0000004/config.json >big/iter_0000004/config.json
fails 1 '^gpt-train: big/iter_0000004/config.json: hidden size 64 is not a multiple of the 3 attention heads$' \
    "a config.json that is not a model" gpt-train --mock-data --workers 1 --train-iters 5 --load big
cp base/iter_0000004/config.json big/iter_0000004/
f=big/iter_0000004/model.safetensors
# wpe's data_offsets [76800,93184] become [76796,93180]: the same length,
# overlapping wte's [0,76800].
off=$(head -c 4000 $f | grep -obUa '"data_offsets":\[76800,93184\]' | cut -d: -f1)
printf '"data_offsets":[76796,93180]' | dd of=$f bs=1 seek="${off:-0}" conv=notrunc 2>/dev/null
fails 1 "^gpt-train: big/iter_0000004/model.safetensors: data of 'transformer.wpe.weight' overlaps that of 'transformer.wte.weight'$" \
    "overlapping data_offsets" gpt-train $tiny --train-iters 5 --load big
cp base/iter_0000004/model.safetensors $f && printf 'x' >>$f
fails 1 "^gpt-train: big/iter_0000004/model.safetensors: 1 bytes after the last tensor's data$" \
    "bytes after the data" gpt-train $tiny --train-iters 5 --load big

# Modes: what open(0666) and mkdir(0777) give under the umask.
for u in 022 002 077; do
	(umask $u && gpt-train $tiny --train-iters 1 --save m$u -q)
	stat -c '%a' m$u m$u/iter_0000001 m$u/iter_0000001/* m$u/latest_checkpointed_iteration.txt |
	    sort | uniq -c | sed 's/^ *//' | tr '\n' ' ' >modes
	case $u in
	022) want="5 644 2 755 " ;;
	002) want="5 664 2 775 " ;;
	077) want="5 600 2 700 " ;;
	esac
	is "$(cat modes)" "$want" "umask $u: directories and files have the umask's modes"
done

# Temporaries of a save killed with -9 go at the next save there.
mkdir base/.iter_0000006.tmpAbC123
: >base/.iter_0000006.tmpAbC123/model.safetensors
: >base/latest_checkpointed_iteration.txt.tmpXyZ789
run gpt-train $tiny --train-iters 6 --load base --save base --save-interval 6 -q
ls -A base | tr '\n' ' ' >ls.out
is "$rc:$(cat ls.out)" "0:iter_0000002 iter_0000004 iter_0000006 latest_checkpointed_iteration.txt " \
    "a killed save's temporaries are swept"

# --min-lr above --lr.
fails 2 '^gpt-train: --min-lr 0.02 is above --lr 0.01$' "--min-lr above --lr" \
    gpt-train $tiny --train-iters 1 --lr 0.01 --min-lr 0.02
run gpt-train $tiny --train-iters 1 --lr 1e-5 -q
is "$rc" 0 "--min-lr is 0 by default, Megatron's: any --lr is above it"
run gpt-train $tiny --train-iters 1 --lr 1e-5 --min-lr 1e-5 -q
is "$rc" 0 "--min-lr equal to --lr is fine"
done_testing
