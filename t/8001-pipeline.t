#!/bin/sh
# The programs joined as DESIGN.md joins them, on the bundled sample data:
# jsonl-merge -> owt-dedup -> jsonl-merge --shuffle -> bpe-encode -> idx-pack
# -> gpt-train. Each joint is checked against what the next program must
# see: the text that comes out of the dataset is the text that went in.
. "${OWT_SRC:-.}/t/lib.sh"

data=$OWT_SRC/contrib/demo/data
cd "$T" || exit 3

run jsonl-merge -q --add-id p "$data"
is "$rc" 0 "merge the sample files"
mv out merged.jsonl
# The speeches twice (as text files and again as JSONL) give exact duplicates.
grep '"src"' merged.jsonl | head -n 3 | sed 's/,"src":[^}]*}$/,"copy":1}/' >copies.jsonl
cat merged.jsonl copies.jsonl >withcopies.jsonl
run owt-dedup -q --stages exact --report report.jsonl withcopies.jsonl
is "$rc" 0 "owt-dedup reads jsonl-merge's output"
same merged.jsonl out "the three planted copies, and only they, are dropped"
is "$(wc -l <report.jsonl | tr -d ' ')" 3 "each drop is in the report"

run jsonl-merge -q --shuffle --seed 5 merged.jsonl
mv out shuffled.jsonl
run bpe-encode -q --append-eod shuffled.jsonl
is "$rc" 0 "bpe-encode reads the shuffled stream"
mv out tokens.tok
run idx-pack -q -o ds tokens.tok
is "$rc" 0 "idx-pack packs bpe-encode's stream"
run idx-pack --check ds
is "$rc" 0 "the dataset passes --check"
n=$(wc -l <shuffled.jsonl | tr -d ' ')
like out ": ok: $n sequences, $n documents" "one sequence per document"

# Back: dataset -> token stream -> text equals the shuffled documents' text.
idx-pack --cat ds >cat.tok 2>err && bpe-encode -q -d cat.tok >back.jsonl 2>err
is "$?" 0 "--cat and bpe-encode -d read it back"
sed 's/.*"text": *\("\([^"\\]\|\\.\)*"\).*/\1/' shuffled.jsonl >want.txt
sed 's/^{"text":\(.*\)}$/\1/' back.jsonl >got.txt
same want.txt got.txt "every document's text comes back byte for byte"
cmp -s tokens.tok cat.tok && ok "--cat gives bpe-encode's token stream back" ||
    not_ok "--cat gives bpe-encode's token stream back"

# A few training steps on the dataset: the data path reads what idx-pack wrote.
run gpt-train -q --data-path ds --num-layers 1 --hidden-size 32 \
    --num-attention-heads 2 --seq-length 16 --micro-batch-size 2 \
    --train-iters 6 --lr 1e-3 --lr-warmup-iters 1 --eval-iters 1 \
    --eval-interval 3 --log-interval 1 --split 90,10,0 --workers 1 \
    --log-json log.jsonl --save ckpt
is "$rc" 0 "gpt-train trains on the packed dataset"
is "$(grep -c '"loss"' log.jsonl)" 6 "six iterations logged"
like log.jsonl '"valid_loss"' "validation ran on the valid split"
is "$(cat ckpt/latest_checkpointed_iteration.txt)" 6 "a checkpoint was saved"
done_testing
