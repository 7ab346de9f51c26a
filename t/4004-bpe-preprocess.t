#!/bin/sh
# bpe-encode under Megatron-LM's preprocess_data.py flags: --output-prefix
# writes PREFIX_KEY_document.bin/.idx byte for byte as bpe-encode | idx-pack
# does, and as Megatron-LM v2.5 writes them (the bytes of
# ../shared/notes/megatron-compat.md, 1.6, with an empty text skipped);
# --input and Megatron's --json-keys words; the notes, the refusals, the
# progress line; a bad record leaves no dataset.
. "${OWT_SRC:-.}/t/lib.sh"

cd "$T" || exit 3
E=$OWT_SRC/t/bpe

# Megatron-LM v2.5's bytes for the documents [15496 995 50256],
# [40 716 257 1332 13 50256] and [50255 50256]; v2.5 skips an empty text,
# and so does owt (2023's rewrite would add a document of no sequence).
printf '{"text":"Hello world"}\n{"text":""}\n{"text":"I am a test."}\n{"text":" gazed"}\n' >v.jsonl
run bpe-encode --input v.jsonl --output-prefix v --tokenizer-type GPT2BPETokenizer \
    --dataset-impl mmap --append-eod --workers 2
is "$rc" 0 "preprocess_data.py's flags run"
od -An -tx1 v_text_document.idx | tr -d ' \n' >got
is "$(cat got)" "4d4d49444944580000010000000000000008030000000000000004000000000000000300000006000000020000000000000000000000060000000000000012000000000000000000000000000000010000000000000002000000000000000300000000000000" \
    "the .idx is Megatron-LM v2.5's, the empty text skipped"
od -An -tx1 v_text_document.bin | tr -d ' \n' >got
is "$(cat got)" "883ce30350c42800cc02010134050d0050c44fc450c4" "the .bin is Megatron-LM v2.5's"
like err '^bpe-encode: v_text_document: 3 documents, 11 tokens \(uint16\), 0\.0 MB$' "the dataset is summed up"
like err 'dropped: 1 empty document$' "the empty text is counted"
unlike out '.' "nothing on standard output"

# Byte for byte bpe-encode --json-keys KEY | idx-pack -o PREFIX_KEY_document,
# for each key, with and without --append-eod, on any number of workers.
awk 'BEGIN { for (i = 0; i < 3000; i++) printf "{\"title\":\"%s\",\"text\":\"document %d: the quick brown fox %d\"}\n", (i % 7 ? "t" i : ""), i, i * 7 }' >many.jsonl
sed 's/^{/{"title":"edge",/' "$E/edge.jsonl" >>many.jsonl
for eod in "" --append-eod; do
	for k in text title; do
		bpe-encode -q $eod --json-keys $k many.jsonl | idx-pack -qf -o ref_$k
	done
	run bpe-encode -q $eod --workers 3 --output-prefix p --json-keys text,title many.jsonl
	is "$rc" 0 "two keys ${eod:-without --append-eod}"
	for k in text title; do
		same ref_$k.idx p_${k}_document.idx "$k ${eod:-without --append-eod}: the .idx of bpe-encode | idx-pack"
		same ref_$k.bin p_${k}_document.bin "$k ${eod:-without --append-eod}: the .bin of bpe-encode | idx-pack"
	done
done

# Megatron's "--json-keys text title": with --input, operands are keys.
run bpe-encode -q --append-eod --input many.jsonl --json-keys text title --output-prefix m
is "$rc" 0 "--json-keys text title with --input"
same ref_title.idx m_title_document.idx "the operand is the second key"
same p_text_document.bin m_text_document.bin "and the first is as before"
fails 2 "^bpe-encode: --input: unexpected operand 'title'$" "an operand after --input without --json-keys" \
    bpe-encode --input many.jsonl title
fails 2 '^bpe-encode: --output-prefix: not with -d$' "--output-prefix with -d" \
    bpe-encode -d --output-prefix x
fails 2 '^bpe-encode: --input: not with -d$' "--input with -d" \
    bpe-encode -d --input x.tok

# A dataset there already is replaced, as Megatron-LM's script does.
printf '{"text":"Hello world"}\n' >one.jsonl
run bpe-encode -q --append-eod --output-prefix m one.jsonl
od -An -tx1 m_text_document.bin | tr -d ' \n' >got
is "$(cat got)" "883ce30350c4" "an existing dataset is replaced"

# Python details: accepted, one note each (none under -q); other values refused.
run bpe-encode --chunk-size 25 --partitions 1 --keep-sequential-samples --output-prefix n one.jsonl
is "$rc" 0 "--chunk-size, --partitions 1, --keep-sequential-samples are accepted"
grep -c 'accepted; no effect$' err >got
is "$(cat got)" 3 "with one note each"
like err '^bpe-encode: --chunk-size: accepted; no effect$' "the note names the option"
run bpe-encode -q --chunk-size 25 --output-prefix n one.jsonl
is "$(cat err)" "" "-q: no note"
fails 2 "^bpe-encode: --tokenizer-type: 'BertWordPieceCase' is not GPT2BPETokenizer, TikTokenizer, HuggingFaceTokenizer, SentencePieceTokenizer, GPTSentencePieceTokenizer or Llama2Tokenizer$" \
    "another tokenizer" bpe-encode --tokenizer-type BertWordPieceCase
fails 2 "^bpe-encode: --dataset-impl: 'lazy' is not mmap, the only format owt writes$" \
    "--dataset-impl lazy" bpe-encode --dataset-impl lazy
fails 2 "^bpe-encode: --partitions: '2': owt writes one dataset in input order \(1\)$" \
    "--partitions 2" bpe-encode --partitions 2
fails 2 '^bpe-encode: --split-sentences: not supported: owt writes each document as one sequence$' \
    "--split-sentences" bpe-encode --split-sentences
fails 2 '^bpe-encode: --keep-newlines: not supported: owt writes each document as one sequence$' \
    "--keep-newlines" bpe-encode --keep-newlines
fails 2 "^bpe-encode: --log-interval: '0' is out of range" "--log-interval 0" \
    bpe-encode --log-interval 0

# --log-interval: Megatron's progress line every n records.
head -n 5 many.jsonl >five.jsonl
run bpe-encode --log-interval 2 --output-prefix l five.jsonl
grep '^Processed' err | sed 's/(.*)/(R)/' >got
printf 'Processed 2 documents (R).\nProcessed 4 documents (R).\n' >want
same want got "--log-interval 2: a line at records 2 and 4"
like err '^Processed 2 documents \([0-9]+\.[0-9] docs/s, [0-9]+\.[0-9] MB/s\)\.$' "in Megatron's words"
run bpe-encode -q --log-interval 2 five.jsonl
unlike err '.' "not under -q"

# A bad record ends the run with no dataset; under -k it is skipped.
printf '{"text":"a"}\n{"text":1}\n{"text":"b"}\n' >bad.jsonl
fails 1 "^bpe-encode: bad.jsonl:2: non-string 'text' field$" "a bad record" \
    bpe-encode --output-prefix b bad.jsonl
ls >got
unlike got '^b_' "leaves no dataset and no temporary"
run bpe-encode -qk --output-prefix b bad.jsonl
is "$rc" 1 "-k: still exit 1"
bpe-encode -qk bad.jsonl 2>/dev/null | idx-pack -q -o ref_b
same ref_b.idx b_text_document.idx "and the datasets are those of bpe-encode -k | idx-pack"
fails 1 "^bpe-encode: cannot open 'nosuch.jsonl': No such file or directory$" "a missing input" \
    bpe-encode --input nosuch.jsonl --output-prefix c
ls >got
unlike got '^c_' "leaves no dataset"

# The shared 5 MB sample, as a Megatron user would run it.
if [ -f "$OWT_SHARED/data/corpus-sample.jsonl" ]; then
	bpe-encode -q --append-eod "$OWT_SHARED/data/corpus-sample.jsonl" | idx-pack -q -o ref_s
	run bpe-encode -q --input "$OWT_SHARED/data/corpus-sample.jsonl" --output-prefix s \
	    --append-eod --workers 4
	same ref_s.idx s_text_document.idx "the sample: the .idx of bpe-encode | idx-pack"
	same ref_s.bin s_text_document.bin "the sample: the .bin of bpe-encode | idx-pack"
else
	skip "no ../shared test data"
	skip "no ../shared test data"
fi

done_testing
