# tok.sh - make token streams and binary files in tests: . "$OWT_SRC/t/tok.sh"
#
# mktok VOCAB EOD      ids on stdin, one document per line (an empty line is
#                      an empty document) -> an owt-tok(5) stream on stdout
# unhex                hex digits on stdin (spaces and newlines ignored) -> bytes
# corpus_tok FILE      shared/data/corpus-sample.gpt2.u16 (raw uint16 ids, each
#                      document ending in 50256) -> a GPT-2 token stream

mktok() {
	LC_ALL=C awk -v vocab="$1" -v eod="$2" '
	function u8(v) { printf "%c", v % 256 }
	function u16(v) { u8(v % 256); u8(int(v / 256)) }
	function u32(v) { u16(v % 65536); u16(int(v / 65536)) }
	BEGIN { printf "OWTTOK"; u8(1); w = vocab <= 65536 ? 2 : 4; u8(w); u32(vocab); u32(eod) }
	{ u32(NF); for (i = 1; i <= NF; i++) if (w == 2) u16($i); else u32($i) }'
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
