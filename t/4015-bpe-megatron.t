#!/bin/sh
# bpe-encode --tokenizer-type TikTokenizer on Megatron-Core's JSON model
# (its CustomTikTokenizer): told from a rank file by its content; special
# tokens first (<unk> <s> </s>, then <SPECIAL_N> up to
# --tiktoken-num-special-tokens), then the ranks shifted by their number
# and cut at --vocab-size; EOD </s>; patterns v1 and v2. Exact ids on a
# small model made here, then against npm tiktoken (t/tiktoken/) given
# the same JSON (contrib/oracle/tiktoken-megatron.js makes one from
# cl100k_base's ranks) and Megatron's patterns: ids = tiktoken's +
# num_special_tokens, v1 and v2, whole and cut; the refusals.
. "${OWT_SRC:-.}/t/lib.sh"
. "$OWT_SRC/t/tiktoken.sh"
. "$OWT_SRC/t/tok.sh"

cd "$T" || exit 3
E=$OWT_SRC/t/bpe
tt="--tokenizer-type TikTokenizer"

# A small model: the 256 bytes, then "ab" (256) and "abc" (257).
perl -MMIME::Base64 -e 'my @t = ((map { chr } 0 .. 255), "ab", "abc");
	print "[\n", join(",\n", map { sprintf "{\"rank\": %d, \"token_bytes\": \"%s\", \"token_str\": \"x\"}",
	    $_, encode_base64($t[$_], "") } 0 .. $#t), "\n]\n"' >small.json
sm="$tt --tokenizer-model small.json --tiktoken-pattern v2 --vocab-size 261 --tiktoken-num-special-tokens 3"
printf '{"text":"abc abd"}\n{"text":"<s>"}\n' >a.jsonl
run bpe-encode -q --append-eod $sm a.jsonl
is "$rc" 0 "the small model encodes"
perl "$E/tok2ids" <out >got
# abc: 257 + 3; " abd": ' ' 32 + 3, ab 256 + 3, d 100 + 3; EOD </s> 2;
# "<s>" as text is its bytes
printf '260 35 259 103 2\n63 118 65 2\n' >want
same want got "ids: special tokens first, ranks + 3, EOD </s> = 2"
od -An -tx1 -N16 out | tr -d ' \n' >got
is "$(cat got)" "4f5754544f4b02020501000002000000" "n_vocab is --vocab-size (261), EOD 2"
echo '0 1 2 259 260' | mktok 261 2 >s.tok
run bpe-encode -dq $sm s.tok
is "$(cat out)" '{"text":"<unk><s></s>ababc"}' "-d: special tokens as their text"
# Fillers up to --tiktoken-num-special-tokens; the ranks after them.
sm7="$tt --tokenizer-model small.json --tiktoken-pattern v1 --vocab-size 265 --tiktoken-num-special-tokens 7"
run bpe-encode -q $sm7 a.jsonl
perl "$E/tok2ids" <out >got
printf '264 39 263 107\n67 122 69\n' >want
same want got "7 special tokens: ranks + 7 (pattern v1)"
echo '3 6 264' | mktok 265 2 >s7.tok
run bpe-encode -dq $sm7 s7.tok
is "$(cat out)" '{"text":"<SPECIAL_3><SPECIAL_6>abc"}' "the fillers are <SPECIAL_N>"
run bpe-encode -q --append-eod $sm7 --tiktoken-special-tokens '<s> <mask> </s> <unk>' a.jsonl
perl "$E/tok2ids" <out >got
printf '264 39 263 107 2\n67 122 69 2\n' >want
same want got "--tiktoken-special-tokens: EOD </s> where it is (2)"
echo '0 1 2 3 4' | mktok 265 2 >s8.tok
run bpe-encode -dq $sm7 --tiktoken-special-tokens '<s> <mask> </s> <unk>' s8.tok
is "$(cat out)" '{"text":"<s><mask></s><unk><SPECIAL_4>"}' "... and the others in their order"

# Tokens of 255 bytes or more (their length is looked up apart) and a
# vocabulary of 2^20 ids or more (no cache of joins): a model of the 256
# bytes, then a run of 2, 4, ... 256 a's (ranks 256-263). BPE joins the
# leftmost pair of the lowest rank first: 257 a's are a256 a, 300 are
# a256 a32 a8 a4.
perl -MMIME::Base64 -e 'my @t = ((map { chr } 0 .. 255), map { "a" x (2 ** $_) } 1 .. 8);
	print "[\n", join(",\n", map { sprintf "{\"rank\": %d, \"token_bytes\": \"%s\", \"token_str\": \"x\"}",
	    $_, encode_base64($t[$_], "") } 0 .. $#t), "\n]\n"' >long.json
perl -e 'print join("", map { "{\"text\":\"" . ("a" x $_) . "\"}\n" } 256, 257, 300, 7)' >long.jsonl
for sp in 3 1048312; do
	run bpe-encode -q $tt --tokenizer-model long.json --tiktoken-pattern v2 \
	    --vocab-size $((264 + sp)) --tiktoken-num-special-tokens $sp long.jsonl
	perl "$E/tok2ids" <out >got
	perl -e '$s = shift; print join(" ", map { $_ + $s } @$_), "\n" for
	    [263], [263, 97], [263, 260, 258, 257], [257, 256, 97]' $sp >want
	same want got "long tokens, $((264 + sp)) ids: BPE's ids"
done

# Characters taken whole before the merges (lib/tok/tiktoken.c's
# chars_build), and where they must not be: the 256 bytes, then " \xd0"
# (256), "\xb0x" (257), "а" d0 b0 (258), "€" e2 82 ac (259), "\xacy"
# (260), "\xe2\x82" (261). "а" after a space is not ("\xd0" joins the
# space first, at 256), nor before x ("\xb0x", 257); "€" never (its own
# first join, 261, ranks above it). In " аа" BPE gives " \xd0" b0 а, in
# "аx" d0 "\xb0x", in "€y" "\xe2\x82" "\xacy", in "ааа" а а а; a
# piece of 26 bytes (the heap's) " \xd0" b0 а x 10 d0 "\xb0x".
perl -MMIME::Base64 -e 'my @t = ((map { chr } 0 .. 255), " \xd0", "\xb0x",
	"\xd0\xb0", "\xe2\x82\xac", "\xacy", "\xe2\x82");
	print "[\n", join(",\n", map { sprintf "{\"rank\": %d, \"token_bytes\": \"%s\", \"token_str\": \"x\"}",
	    $_, encode_base64($t[$_], "") } 0 .. $#t), "\n]\n"' >ch.json
printf '{"text":" \u0430\u0430"}\n{"text":"\u0430x"}\n{"text":"\u20acy"}\n{"text":"\u0430\u0430\u0430"}\n{"text":" %sx"}\n' \
    "$(perl -e 'print "\\u0430" x 12')" >ch.jsonl
run bpe-encode -q $tt --tokenizer-model ch.json --tiktoken-pattern v2 \
    --vocab-size 265 --tiktoken-num-special-tokens 3 ch.jsonl
perl "$E/tok2ids" <out >got
printf '259 179 261\n211 260\n264 263\n261 261 261\n259 179 261 261 261 261 261 261 261 261 261 261 211 260\n' >want
same want got "characters whole where BPE's ids stay (ranks + 3)"

# Refusals.
fails 1 '^bpe-encode: small\.json: 258 ranks, where --vocab-size 131072 less 1000 special tokens needs 130072$' \
    "the default --vocab-size on a model of fewer ranks" \
    bpe-encode $tt --tokenizer-model small.json --tiktoken-pattern v2 a.jsonl
fails 1 '^bpe-encode: small\.json: 258 ranks, where --vocab-size 266 less 7 special tokens needs 259$' \
    "a model one rank short" bpe-encode $sm7 --vocab-size 266 a.jsonl
fails 2 "^bpe-encode: small\.json: Megatron's JSON model needs --tiktoken-pattern v1 or v2$" \
    "a JSON model without a pattern" bpe-encode $tt --tokenizer-model small.json a.jsonl
fails 2 "^bpe-encode: small\.json: Megatron's JSON model needs --tiktoken-pattern v1 or v2$" \
    "a JSON model with an encoding's pattern" \
    bpe-encode $tt --tokenizer-model small.json --tiktoken-pattern cl100k_base a.jsonl
fails 2 "^bpe-encode: --tiktoken-special-tokens: no </s> \(Megatron's need <unk>, <s> and </s>\)$" \
    "special tokens without </s>" bpe-encode $sm --tiktoken-special-tokens '<unk> <s>' a.jsonl
fails 2 "^bpe-encode: --tiktoken-special-tokens: '<s>' is given twice$" \
    "a special token twice" bpe-encode $sm --tiktoken-special-tokens '<unk> <s> </s> <s>' a.jsonl
fails 2 '^bpe-encode: --tiktoken-num-special-tokens: 3, fewer than the 4 special tokens$' \
    "more special tokens than their number" \
    bpe-encode $sm --tiktoken-special-tokens '<unk> <s> </s> <x>' a.jsonl
fails 1 '^bpe-encode: small\.json: the special token ab is also rank 256$' \
    "a special token that is a rank's bytes" \
    bpe-encode $sm7 --tiktoken-special-tokens '<unk> <s> </s> ab' a.jsonl
fails 2 "^bpe-encode: --vocab-size 261 and --tiktoken-num-special-tokens 261: need 0 < special < size <= 16777215$" \
    "as many special tokens as ids" bpe-encode $sm --tiktoken-num-special-tokens 261 a.jsonl
fails 2 "^bpe-encode: --vocab-size: only with --tokenizer-type TikTokenizer$" \
    "--vocab-size with GPT-2" bpe-encode --vocab-size 50257 a.jsonl
fails 2 "^bpe-encode: --tiktoken-special-tokens: only with --tokenizer-type TikTokenizer$" \
    "--tiktoken-special-tokens with GPT-2" bpe-encode --tiktoken-special-tokens '<s>' a.jsonl
perl -MMIME::Base64 -e 'print encode_base64(chr($_), ""), " $_\n" for 0 .. 255' >bytes.tiktoken
fails 2 "^bpe-encode: --tiktoken-num-special-tokens: only with Megatron's JSON model \(bytes\.tiktoken is a rank file\)$" \
    "Megatron's options with a rank file" \
    bpe-encode $tt --tokenizer-model bytes.tiktoken --tiktoken-num-special-tokens 3 a.jsonl
fails 2 "^bpe-encode: --tiktoken-pattern v2: only with Megatron's JSON model \(bytes\.tiktoken is a rank file\)$" \
    "v2 with a rank file" bpe-encode $tt --tokenizer-model bytes.tiktoken --tiktoken-pattern v2 a.jsonl
# Models that are not Megatron's JSON, each named by its entry.
bad() {	# bad PERL-EDIT WHAT MESSAGE
	perl -pe "$1" small.json >bad.json
	fails 1 "^bpe-encode: bad\\.json: $3\$" "$2" bpe-encode $tt --tokenizer-model bad.json \
	    --tiktoken-pattern v2 --vocab-size 261 --tiktoken-num-special-tokens 3 a.jsonl
}
bad 's/"rank": 5,/"rank": 6,/' "a rank out of order" 'entry 5: its rank is not 5'
bad 's/"token_bytes": "YWI="/"token_bytes": "Y!I="/' "bytes not in base64" 'entry 256: token_bytes is not base64'
bad 's/"token_bytes": "AA=="/"token_bytes": "AQ=="/' "a first rank that is not byte 0" 'entry 0: not the byte 0x00'
bad 's/, "token_str": "x"// if $. == 3' "an entry without token_str" \
    'entry 1: not \{"rank", "token_bytes", "token_str"\}'
bad 's/"YWJj"/"YWI="/' "two ranks of the same bytes" 'ranks 259 and 260 are the same bytes'
bad '$_ = "{\"a\": 1}\n" if $. == 1; $_ = "" if $. > 1' "an object, not a list" 'not a JSON list'
bad 's/\]//' "JSON cut short" 'byte [0-9]+: .*'

if ! tiktoken_npm; then
	skip "$tiktoken_why"
	done_testing
fi

# cl100k_base's ranks in Megatron's form (the bytes first), against npm
# tiktoken given the same JSON and Megatron's patterns.
tiktoken_ranks cl100k_base
node "$OWT_SRC/contrib/oracle/tiktoken-megatron.js" cl100k_base.tiktoken cl.json
cp "$E/tiktoken-edge.jsonl" in.jsonl
cat "$E/edge.jsonl" >>in.jsonl
if [ -f "$OWT_SHARED/data/corpus-sample.jsonl" ]; then
	head -n 200 "$OWT_SHARED/data/corpus-sample.jsonl" >>in.jsonl
else
	skip "no ../shared: the edge cases alone"
fi
megatron_ref() {	# N PATTERN SHIFT
	NODE_PATH=$tiktoken_dir/node_modules node "$OWT_SRC/t/tiktoken/megatron-ref.js" \
	    cl.json "$1" "$2" "$3" in.jsonl
}
cl="$tt --tokenizer-model cl.json"
for v in v1 v2; do
	megatron_ref 100256 $v 1000 >want
	run bpe-encode $cl --tiktoken-pattern $v --vocab-size 101256 in.jsonl
	is "$rc" 0 "cl100k_base's ranks, $v: encodes"
	perl "$E/tok2ids" <out >got
	same want got "$v: ids = tiktoken's + 1000, above 65,535 too"
done
NODE_PATH=$tiktoken_dir/node_modules node "$OWT_SRC/t/tiktoken/megatron-ref.js" \
    ch.json 262 v2 3 ch.jsonl >want
run bpe-encode -q $tt --tokenizer-model ch.json --tiktoken-pattern v2 \
    --vocab-size 265 --tiktoken-num-special-tokens 3 ch.jsonl
perl "$E/tok2ids" <out >got
same want got "the characters' model: tiktoken's ids + 3"
megatron_ref 50000 v2 7 >want
run bpe-encode $cl --tiktoken-pattern v2 --vocab-size 50007 --tiktoken-num-special-tokens 7 in.jsonl
perl "$E/tok2ids" <out >got
same want got "cut at --vocab-size 50007 - 7: tiktoken on the first 50000 ranks, + 7"
printf '{"text":"Hello world"}\n' >h.jsonl
run bpe-encode -q --append-eod $cl --tiktoken-pattern v2 --vocab-size 101256 h.jsonl
od -An -tx1 -N16 out | tr -d ' \n' >got
is "$(cat got)" "4f5754544f4b0204888b010002000000" "width 4, n_vocab 101256, EOD </s> 2"
grep -v '"text":""' in.jsonl >full.jsonl
bpe-encode -q $cl --tiktoken-pattern v2 --vocab-size 101256 full.jsonl >full.tok
run bpe-encode -d $cl --tiktoken-pattern v2 --vocab-size 101256 full.tok
cp out back.jsonl
if tiktoken_same_text full.jsonl back.jsonl 2>err; then
	ok "-d gives every text back"
else
	not_ok "-d gives every text back"
	sed 's/^/# /' err
fi
done_testing
