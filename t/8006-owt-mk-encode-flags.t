#!/bin/sh
# contrib/install/owt.mk's ENCODE_FLAGS reach bpe-encode: the recipe run on
# documents in hand (DOCS, no URLs) with a SentencePiece tokenizer
# (Llama2Tokenizer on a model spm_train makes from the man pages) gives the
# dataset that bpe-encode with those flags | idx-pack gives for the same
# documents in the same order (the GPT-2 run's, decoded back); changing
# ENCODE_FLAGS makes the pack again.
. "${OWT_SRC:-.}/t/lib.sh"

command -v flock >/dev/null || skip_all "no flock (util-linux)"
command -v spm_train >/dev/null || skip_all "no spm_train (Debian's sentencepiece)"
MK=$OWT_SRC/contrib/install/owt.mk
cd "$T" || exit 3

grep -hv '^\.\\"' "$OWT_SRC"/man/*.[157] | sed 's/^\.[A-Za-z][a-z]* *//' |
    grep '[a-z]' >text.txt
spm_train --input=text.txt --model_prefix=a --vocab_size=300 --model_type=bpe \
    --random_seed=1 --num_threads=1 --minloglevel=2 >/dev/null 2>&1
mkdir docs
cp "$OWT_SRC/contrib/demo/data/kjv.jsonl.gz" docs/kjv.jsonl.gz
cp "$OWT_SRC/contrib/demo/data/speeches/address-07.txt" docs/speech.txt
mk() {	# OUT [make args]
	o=$1
	shift
	make -s --no-print-directory -f "$MK" URLS=none DOCS=docs OUT="$o" \
	    SHARDS=2 NAME=t "$@"
}
run mk gpt2
is "$rc" 0 "the recipe builds with GPT-2"
# The documents in the dataset's order: the GPT-2 build's, decoded.
idx-pack --cat gpt2/t_text_document | bpe-encode -dq >docs.jsonl
sp="--tokenizer-type Llama2Tokenizer --tokenizer-model $T/a.model"
bpe-encode -q --append-eod $sp docs.jsonl | idx-pack -q -o want
run mk spm ENCODE_FLAGS="$sp"
is "$rc" 0 "the recipe builds with ENCODE_FLAGS naming a SentencePiece model"
same want.bin spm/t_text_document.bin "the .bin is bpe-encode ENCODE_FLAGS | idx-pack's"
same want.idx spm/t_text_document.idx "the .idx is bpe-encode ENCODE_FLAGS | idx-pack's"
idx-pack --cat spm/t_text_document | perl "$OWT_SRC/t/bpe/tok2ids" |
    awk '{ print $1 }' | sort -u >first
is "$(cat first)" 1 "every document starts with Llama2Tokenizer's BOS"
run mk gpt2 ENCODE_FLAGS="$sp"
is "$rc" 0 "the GPT-2 build again, ENCODE_FLAGS changed"
same want.bin gpt2/t_text_document.bin "changed ENCODE_FLAGS make the pack again"
done_testing
