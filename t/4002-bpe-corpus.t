#!/bin/sh
# bpe-encode on ../shared's 5 MB multilingual sample: the ids equal
# tiktoken's (corpus-sample.gpt2.u16: npm tiktoken@1.0.22 encode_ordinary,
# then 50256, little-endian u16), on one worker and on several, and every
# document decodes back to its text.
. "${OWT_SRC:-.}/t/lib.sh"
need_shared

cd "$T" || exit 3
D=$OWT_SHARED/data
# The ids of a GPT-2 token stream of one member, without the header,
# counts and trailer, as u16.
tok2u16() {
	perl -e 'binmode STDIN; binmode STDOUT; local $/; my $d = <STDIN>;
	    for (my $i = 16; $i < length($d) - 32; ) { my $n = unpack "V", substr($d, $i, 4);
	    print substr($d, $i + 4, 2 * $n); $i += 4 + 2 * $n }'
}

run bpe-encode --append-eod --workers 1 "$D/corpus-sample.jsonl"
is "$rc" 0 "the sample encodes"
like err '^bpe-encode: 1029 records, 1029 documents, 1855188 tokens from 5.0 MB of text' "1029 documents, 1855188 tokens"
cp out one.tok
tok2u16 <out >ids.u16
if cmp -s ids.u16 "$D/corpus-sample.gpt2.u16"; then
	ok "ids equal tiktoken's on all 1029 documents"
else
	not_ok "ids equal tiktoken's on all 1029 documents"
	cmp ids.u16 "$D/corpus-sample.gpt2.u16" | sed 's/^/# /'
fi
run bpe-encode --append-eod --workers 4 "$D/corpus-sample.jsonl"
same one.tok out "four workers write the same stream"
run bpe-encode -dq one.tok
cp out back.jsonl
run bpe-encode -q --append-eod back.jsonl
same one.tok out "decode then encode gives the same ids: every text round-trips"
done_testing
