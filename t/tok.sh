# tok.sh - make token streams and binary files in tests: . "$OWT_SRC/t/tok.sh"
#
# mktok VOCAB EOD [VERSION]  ids on stdin, one document per line (an empty
#                      line is an empty document) -> an owt-tok(5) stream
#                      on stdout: version 2 with its trailer, or version 1
# unhex                hex digits on stdin (spaces and newlines ignored) -> bytes
# corpus_tok FILE      shared/data/corpus-sample.gpt2.u16 (raw uint16 ids, each
#                      document ending in 50256) -> a GPT-2 token stream
# man_jsonl            the text lines of our man pages (markup dropped) as
#                      {"text": LINE} records on stdout: a small corpus of
#                      our own for tokenizers and models
# tiny_shape DATA      gpt-train's options for a model of one layer and 16
#                      channels on the dataset DATA, 16 positions, on stdout

# Counts and the id sum are exact below 2^53 (awk's doubles): test sizes.
mktok() {
	LC_ALL=C awk -v vocab="$1" -v eod="$2" -v version="${3:-2}" '
	function u8(v) { printf "%c", v % 256 }
	function u16(v) { u8(v % 256); u8(int(v / 256)) }
	function u32(v) { u16(v % 65536); u16(int(v / 65536)) }
	function u64(v) { u32(v % 4294967296); u32(int(v / 4294967296)) }
	BEGIN { printf "OWTTOK"; u8(version); w = vocab <= 65536 ? 2 : 4; u8(w); u32(vocab); u32(eod) }
	{ u32(NF); ntok += NF; for (i = 1; i <= NF; i++) { sum += $i; if (w == 2) u16($i); else u32($i) } }
	END { if (version == 2) { printf "OWTEND"; u16(0); u64(NR); u64(ntok); u64(sum) } }'
}

unhex() {
	tr -d ' \n' | LC_ALL=C awk '{
		for (i = 1; i < length($0); i += 2) {
			hi = index("0123456789abcdef", substr($0, i, 1)) - 1
			lo = index("0123456789abcdef", substr($0, i + 1, 1)) - 1
			printf "%c", 16 * hi + lo
		}
	}'
}

corpus_tok() {
	od -An -v -tu2 -w2 "$1" | awk '{ s = s " " $1 } $1 == 50256 { print s; s = "" }' |
	    mktok 50257 50256
}

man_jsonl() {
	grep -hv '^\.\\"' "$OWT_SRC"/man/*.[157] | sed 's/^\.[A-Za-z][a-z]* *//' |
	    grep '[a-z]' | perl -CSD -MJSON::PP -ne 'chomp;
	    print JSON::PP->new->canonical->encode({ text => $_ }), "\n"'
}

tiny_shape() {
	echo "--num-layers 1 --hidden-size 16 --num-attention-heads 2 --seq-length 16
	    --max-position-embeddings 16 --micro-batch-size 2 --workers 1
	    --split 100,0,0 --data-path $1 --lr 1e-3 --seed 5"
}
