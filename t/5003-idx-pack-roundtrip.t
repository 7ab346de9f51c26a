#!/bin/sh
# The pipeline round trip: JSONL -> bpe-encode --append-eod -> idx-pack ->
# idx-pack --cat -> bpe-encode -d gives the text back; on the shared sample
# the dataset's .bin equals tiktoken's ids. Skips until bpe-encode is built.
. "${OWT_SRC:-.}/t/lib.sh"

[ -x "$OWT_BUILD/bin/bpe-encode" ] || skip_all "bpe-encode is not built"
cd "$T" || exit 3

# Raw UTF-8 (as the decoder writes it): caf\303\251 \303\274ber \346\227\245\346\234\254.
{
	printf '{"text":"Hello world"}\n'
	printf '{"text":"I am a test.\\nTwo lines, caf\303\251 \303\274ber \346\227\245\346\234\254"}\n'
	printf '{"text":"  leading and trailing spaces  "}\n'
	printf '{"text":"<|endoftext|> is ordinary text here"}\n'
} >in.jsonl
run bpe-encode --append-eod in.jsonl
is "$rc" 0 "bpe-encode --append-eod exits 0"
cp out tok
run idx-pack -q -o ds tok
is "$rc" 0 "idx-pack packs bpe-encode's stream"
run idx-pack --check ds
is "$(cat out)" "ds: ok: 4 sequences, 4 documents, $(($(wc -c <ds.bin) / 2)) tokens (uint16)" \
    "a valid uint16 dataset of 4 documents"
run idx-pack --cat ds
same tok out "--cat gives bpe-encode's stream back, byte for byte"
cp out cat.tok
run bpe-encode -d tok
cp out dec.want
run bpe-encode -d cat.tok
is "$rc" 0 "bpe-encode -d reads the --cat stream"
same dec.want out "the text decoded from the dataset equals the text decoded from the stream"
# The decoder may or may not spell the EOD out; the text must be the input's.
sed 's/"}$/<|endoftext|>"}/' in.jsonl >in-eod.jsonl
if cmp -s in.jsonl out || cmp -s in-eod.jsonl out; then
	ok "JSONL -> tokens -> dataset -> --cat -> decode gives the input"
else
	not_ok "JSONL -> tokens -> dataset -> --cat -> decode gives the input"
	diff in.jsonl out | sed 's/^/# /'
fi

corpus=$OWT_SHARED/data/corpus-sample.jsonl
if [ -f "$corpus" ]; then
	bpe-encode -q --append-eod "$corpus" >corpus.tok &&
	    idx-pack -q -o corpus corpus.tok
	same "$OWT_SHARED/data/corpus-sample.gpt2.u16" corpus.bin \
	    "shared sample: JSONL -> bpe-encode -> idx-pack .bin equals tiktoken's ids"
else
	skip "no ../shared test data"
fi
done_testing
