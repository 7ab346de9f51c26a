#!/bin/sh
# bpe-encode --tokenizer-type HuggingFaceTokenizer: the ids equal those of
# Hugging Face's own `tokenizers` (npm 0.23.2, the Rust library, installed
# from t/hftok/'s lock; the script skips without npm or its registry) with
# the tokenizer.json files that contrib/oracle/hf-tokenizer-json.js
# builds, checked against npm tiktoken first: GPT-2's (data/gpt2), a
# GPT-NeoX-style one (NFC, added tokens with each flag, p50k_base's ranks)
# and a Llama-3-style one (a Split regex, ignore_merges, 256 special
# tokens, BOS; cl100k_base's ranks, over 65,535 ids); and a Qwen2-style
# one (NFC then a Split regex of single digits; not tiktoken's). On the edge
# cases of t/bpe, every added token as text, long runs without white
# space and ../shared's 5 MB multilingual sample; -d as tokenizers
# decodes; the EOD of tokenizer_config.json; --output-prefix as
# bpe-encode | idx-pack (int32); the parts that are refused.
. "${OWT_SRC:-.}/t/lib.sh"
. "$OWT_SRC/t/hftok.sh"
. "$OWT_SRC/t/tok.sh"

cd "$T" || exit 3
E=$OWT_SRC/t/bpe
hf="--tokenizer-type HuggingFaceTokenizer"

fails 2 '^bpe-encode: --tokenizer-type HuggingFaceTokenizer needs --tokenizer-model DIR \(with tokenizer.json and tokenizer_config.json\)$' \
    "HuggingFaceTokenizer without a model" bpe-encode $hf
fails 2 '^bpe-encode: --vocab-file, --merge-file and --tiktoken-pattern: not with HuggingFaceTokenizer' \
    "--vocab-file with HuggingFaceTokenizer" bpe-encode $hf --tokenizer-model x \
    --vocab-file v.json --merge-file m.bpe
fails 1 "^bpe-encode: cannot open 'nosuch/tokenizer.json': No such file or directory$" \
    "a directory without tokenizer.json" bpe-encode $hf --tokenizer-model nosuch
mkdir -p dirjson/tokenizer.json
fails 1 "^bpe-encode: cannot read 'dirjson/tokenizer.json': a directory$" \
    "a tokenizer.json that is a directory: bad input" bpe-encode $hf --tokenizer-model dirjson
if ! command -v node >/dev/null 2>&1; then
	skip "no node"
	done_testing
fi

# Refusals, on GPT-2's tokenizer.json with one part changed (node only).
hftok_make gpt2 g2 "$OWT_SRC/data/gpt2/encoder.json" "$OWT_SRC/data/gpt2/vocab.bpe"
mod() {
	mkdir -p "$1" && cp g2/tokenizer_config.json "$1/" &&
	node -e "const fs = require('fs'); const t = JSON.parse(fs.readFileSync('g2/tokenizer.json'));
	    $2; fs.writeFileSync('$1/tokenizer.json', JSON.stringify(t))"
}
refused() {	# refused NAME JS STATUS MESSAGE
	mod "$1" "$2"
	fails "$3" "^bpe-encode: $1/tokenizer.json: $4\$" "$1" \
	    bpe-encode -q $hf --tokenizer-model "$1" /dev/null
}
refused wordpiece "t.model = { type: 'WordPiece', vocab: {} }" 2 \
    "model: type 'WordPiece' is not supported \(byte-level BPE only\)"
refused unigram "t.model = { type: 'Unigram', vocab: [] }" 2 \
    "model: type 'Unigram' is not supported \(byte-level BPE only\)"
refused nfkc "t.normalizer = { type: 'NFKC' }" 2 \
    "normalizer: type 'NFKC' is not supported \(byte-level BPE only\)"
refused metaspace "t.pre_tokenizer = { type: 'Metaspace', replacement: 'x' }" 2 \
    "pre_tokenizer: type 'Metaspace' is not supported \(byte-level BPE only\)"
refused nobytelevel "t.pre_tokenizer = { type: 'Split', pattern: { Regex: 'a' }, behavior: 'Isolated', invert: false }" 2 \
    "pre_tokenizer: one without ByteLevel is not supported \(byte-level BPE only\)"
refused removed "t.pre_tokenizer = { type: 'Sequence', pretokenizers: [{ type: 'Split', pattern: { Regex: 'a' }, behavior: 'Removed', invert: false }, t.pre_tokenizer] }" 2 \
    "pre_tokenizer.Split: behavior 'Removed' is not supported \(byte-level BPE only\)"
refused badregex "t.pre_tokenizer = { type: 'Sequence', pretokenizers: [{ type: 'Split', pattern: { Regex: 'a(' }, behavior: 'Isolated', invert: false }, t.pre_tokenizer] }" 2 \
    "pre_tokenizer.Split: pattern 'a\\(': missing closing parenthesis"
refused dropout "t.model.dropout = 0.1" 2 \
    "model.dropout: dropout is not supported \(byte-level BPE only\)"
refused truncation "t.truncation = { max_length: 512 }" 2 \
    "truncation: truncation is not supported \(byte-level BPE only\)"
refused wpdecoder "t.decoder = { type: 'WordPiece' }" 2 \
    "decoder: type 'WordPiece' is not supported \(byte-level BPE only\)"
refused badmerge "t.model.merges[7] = 'a b c'" 1 'model.merges\[7\]: not "A B"'
refused nomerge "t.model.merges[3] = ['zzzzqq', 'x']" 1 \
    'model.merges\[3\]: a part is not in the vocabulary'
refused badid "t.model.vocab['hello'] = -1" 1 \
    'model.vocab\[[0-9]+\]: the id is not a whole number from 0 to 2\^31-1'
mkdir -p badjson && cp g2/tokenizer_config.json badjson/ && printf '{"model": [' >badjson/tokenizer.json
fails 1 "^bpe-encode: badjson/tokenizer.json: byte 12: expected a value$" "bad JSON" \
    bpe-encode -q $hf --tokenizer-model badjson /dev/null
mod noeos "" && printf '{"eos_token": "<|nosuch|>"}' >noeos/tokenizer_config.json
fails 1 "^bpe-encode: noeos/tokenizer_config.json: eos_token '<\|nosuch\|>' is no token of tokenizer.json$" \
    "an eos_token that is no token" bpe-encode -q $hf --tokenizer-model noeos /dev/null

if ! hftok_npm; then
	skip "$hftok_why"
	done_testing
fi

# The tokenizers, checked against npm tiktoken before they are used.
hftok_make neox neox
hftok_make llama3 llama3
hftok_make qwen2 qwen2
for m in g2:gpt2:0 neox:p50k_base:2 llama3:cl100k_base:0; do
	d=${m%%:*} e=${m#*:}
	if hftok_check $d ${e%:*} ${e#*:} 2>err; then
		ok "$d: tokenizers gives tiktoken's ${e%:*} ids"
	else
		not_ok "$d: tokenizers gives tiktoken's ${e%:*} ids"
		sed 's/^/# /' err
	fi
done

# Edge cases: t/bpe's, every added token as text, long runs without white
# space (letters, digits, random letters), decomposed letters for NFC.
cp "$E/tiktoken-edge.jsonl" edge.jsonl
cat "$E/edge.jsonl" >>edge.jsonl
awk 'BEGIN { srand(7); a = d = r = "";
	for (i = 0; i < 10000; i++) { a = a "a"; d = d int(rand() * 10); r = r sprintf("%c", 97 + int(rand() * 26)) }
	printf "{\"text\":\"%s\"}\n{\"text\":\"%s\"}\n{\"text\":\"%s\"}\n", a, d, r }' >>edge.jsonl
printf '{"text":"cafe\\u0301 A\\u030a \\u1100\\u1161\\u11a8 e\\u0301e\\u0301"}\n' >>edge.jsonl
for d in g2 neox llama3 qwen2; do
	cp edge.jsonl $d.jsonl
	NODE_PATH=$hftok_dir/node_modules node "$OWT_SRC/t/hftok/ref.js" --specials $d >>$d.jsonl
	hftok_ref $d $d.jsonl >want
	run bpe-encode $hf --tokenizer-model $d $d.jsonl
	is "$rc" 0 "$d: the edge cases encode"
	perl "$E/tok2ids" <out >got
	same want got "$d: the ids of $(wc -l <$d.jsonl) edge cases are tokenizers'"
done
# Characters taken whole before the merges (lib/tok/chars.h), and where
# they must not be: the 256 bytes, then the merges (E1 83, 90) -> "ა"
# (rank 0), (90, y), (E1, 83), (space, D0), (B0, x), (D0, B0) -> "а".
# "ა" never (its first merge ranks above its last), "а" not after a
# space nor before x; tokenizers' ids on texts of each case.
mod chm "t.added_tokens = [];
	const bs = [], cs = [], m = {};
	for (let b = 0; b < 256; b++)
		if ((b >= 33 && b <= 126) || (b >= 161 && b <= 172) || b >= 174) { bs.push(b); cs.push(b); }
	for (let b = 0, n = 0; b < 256; b++)
		if (!bs.includes(b)) { bs.push(b); cs.push(256 + n++); }
	bs.forEach((b, i) => { m[b] = String.fromCodePoint(cs[i]); });
	const enc = (a) => a.map((b) => m[b]).join('');
	const v = {};
	for (let b = 0; b < 256; b++) v[m[b]] = b;
	const ms = [[[0xe1, 0x83], [0x90]], [[0x90], [0x79]], [[0xe1], [0x83]],
	    [[0x20], [0xd0]], [[0xb0], [0x78]], [[0xd0], [0xb0]]];
	ms.forEach(([a, b], i) => { v[enc(a) + enc(b)] = 256 + i; });
	t.model.vocab = v;
	t.model.merges = ms.map(([a, b]) => [enc(a), enc(b)]);" &&
    echo '{}' >chm/tokenizer_config.json
printf '{"text":" \u0430\u0430"}\n{"text":"\u0430x"}\n{"text":"\u10d0y"}\n{"text":"\u0430\u0430\u0430 \u10d0\u10d0"}\n' >chm.jsonl
hftok_ref chm chm.jsonl >want
run bpe-encode -q $hf --tokenizer-model chm chm.jsonl
perl "$E/tok2ids" <out >got
same want got "characters whole where tokenizers' ids stay"
# ByteLevel's add_prefix_space (RoBERTa's): a space before each piece of
# text between added tokens that does not start with one.
mod g2p "t.pre_tokenizer.add_prefix_space = true"
hftok_ref g2p g2.jsonl >want
run bpe-encode -q $hf --tokenizer-model g2p g2.jsonl
perl "$E/tok2ids" <out >got
same want got "add_prefix_space: the ids of the edge cases are tokenizers'"

# GPT-2's tokenizer.json gives GPT2BPETokenizer's ids (but for
# <|endoftext|>, which GPT2BPETokenizer takes as text).
grep -v endoftext edge.jsonl >plain.jsonl
run bpe-encode -q plain.jsonl
perl "$E/tok2ids" <out >gpt2
hftok_ref g2 plain.jsonl >want
same want gpt2 "GPT-2's tokenizer.json: GPT2BPETokenizer's ids"

# The stream: the vocabulary, the EOD of tokenizer_config.json, the BOS
# of the post-processor, ids above 65,535 (width 4).
printf '{"text":"Hello world"}\n{"text":""}\n' >h.jsonl
run bpe-encode -q --append-eod $hf --tokenizer-model llama3 h.jsonl
od -An -tx1 -N16 out | tr -d ' \n' >got
is "$(cat got)" "4f5754544f4b0204a0880100a1870100" "llama3: width 4, n_vocab 100512, EOD <|end_of_text|> 100257"
perl "$E/tok2ids" <out >got
printf '100256 9906 1917 100257\n100256 100257\n' >want
same want got "llama3: BOS before each text, even an empty one, and the EOD after"
run bpe-encode -q --append-eod $hf --tokenizer-model neox h.jsonl
od -An -tx1 -N16 out | tr -d ' \n' >got
is "$(cat got)" "4f5754544f4b02026fc4000000000000" "neox: width 2, n_vocab 50287, EOD <|endoftext|> 0"
perl "$E/tok2ids" <out >got
printf '15498 997 0\n' >want
same want got "neox: no BOS; an empty text is no document"

run bpe-encode -q --append-eod $hf --tokenizer-model qwen2 h.jsonl
perl "$E/tok2ids" <out >got
printf '9906 1917 100258\n' >want
same want got "qwen2: the EOD is its eos_token, <|im_end|> (100258)"

# Invalid text is refused as for every type (owt's JSON reader).
printf '{"text":"a\377b"}\n' >inv.jsonl
fails 1 '^bpe-encode: inv.jsonl:1: invalid UTF-8 at byte 11$' "invalid UTF-8" \
    bpe-encode $hf --tokenizer-model llama3 inv.jsonl

# -d: what tokenizers' decode gives (skipSpecialTokens false) for the ids
# before the EOD that --append-eod adds (-d drops it); for GPT-2's, the
# text itself.
# neox's added token "e\u0301" (normalized, so matched as U+00E9) decodes
# as ByteLevel's byte 0xE9 alone: tokenizers writes U+FFFD for it, -d
# refuses a document that is not UTF-8 text; those documents are left out
# here and tried below.
for d in g2 neox llama3; do
	grep -v '"text":""' $d.jsonl >full.jsonl
	[ $d = neox ] && node -e 'const fs = require("fs");
	    process.stdout.write(fs.readFileSync("full.jsonl", "utf8").split("\n")
	    .filter((l) => l && !JSON.parse(l).text.normalize("NFC").includes("\u00e9"))
	    .map((l) => l + "\n").join(""))' >n.jsonl && mv n.jsonl full.jsonl
	bpe-encode -q $hf --tokenizer-model $d full.jsonl | perl "$E/tok2ids" >ids
	bpe-encode -q --append-eod $hf --tokenizer-model $d full.jsonl >$d.tok
	hftok_decode $d ids >want
	run bpe-encode -d $hf --tokenizer-model $d $d.tok
	is "$rc" 0 "$d: -d"
	same want out "$d: -d gives what tokenizers decodes"
	# neox's NFC changes text; llama3's BOS writes <|begin_of_text|> first.
	[ $d = g2 ] || continue
	cp out back.jsonl
	if node "$OWT_SRC/t/tiktoken/ref.js" --text full.jsonl back.jsonl 2>err; then
		ok "$d: every edge case decodes back to its text"
	else
		not_ok "$d: every edge case decodes back to its text"
		sed 's/^/# /' err
	fi
done
printf '{"text":"caf\\u00e9"}\n' >cafe.jsonl
bpe-encode -q $hf --tokenizer-model neox cafe.jsonl >cafe.tok
fails 1 '^bpe-encode: cafe.tok: document 1: the tokens are not UTF-8 text \(byte 4\)$' \
    "neox -d: the added token of byte 0xE9 alone is no text" \
    bpe-encode -d $hf --tokenizer-model neox cafe.tok
echo '9906 100600' | mktok 100512 100257 >gap.tok
fails 1 '^bpe-encode: gap.tok: byte 24: token 100600 in document 1 is outside the vocabulary \(100512\)$' \
    "-d: an id beyond the vocabulary" bpe-encode -d $hf --tokenizer-model llama3 gap.tok

# --output-prefix writes what bpe-encode | idx-pack writes: int32 for llama3.
bpe-encode -q --append-eod $hf --tokenizer-model llama3 llama3.jsonl | idx-pack -q -o ref_e
run bpe-encode -q --append-eod $hf --tokenizer-model llama3 --output-prefix p llama3.jsonl
is "$rc" 0 "llama3 --output-prefix"
same ref_e.idx p_text_document.idx "the .idx of bpe-encode | idx-pack"
same ref_e.bin p_text_document.bin "the .bin of bpe-encode | idx-pack"
od -An -tu1 -j17 -N1 p_text_document.idx | tr -d ' ' >got
is "$(cat got)" 4 "the dtype is int32 (4): the vocabulary is over 65,500"
od -An -tu4 -v p_text_document.bin | tr -s ' ' '\n' | sort -n | tail -n 1 >got
is "$(cat got)" 100511 "the .bin holds ids above 65,535 (the last special, 100511)"

# ../shared's 5 MB multilingual sample.
if [ ! -f "$OWT_SHARED/data/corpus-sample.jsonl" ]; then
	skip "no ../shared test data"
	done_testing
fi
S=$OWT_SHARED/data/corpus-sample.jsonl
for d in g2 neox llama3 qwen2; do
	hftok_ref $d "$S" >want
	run bpe-encode --workers 2 $hf --tokenizer-model $d "$S"
	is "$rc" 0 "$d: the sample encodes"
	cp out $d.tok
	perl "$E/tok2ids" <out >got
	same want got "$d: the ids of the sample's 1029 documents are tokenizers'"
done
perl "$E/tok2ids" <g2.tok >got
corpus_tok "$OWT_SHARED/data/corpus-sample.gpt2.u16" | perl "$E/tok2ids" |
    sed 's/ 50256$//' >want
same want got "g2: the sample's ids are ../shared's GPT-2 reference ids"
bpe-encode -q --append-eod $hf --tokenizer-model llama3 "$S" | idx-pack -q -o ref_s
run bpe-encode -q --append-eod --workers 2 $hf --tokenizer-model llama3 \
    --input "$S" --output-prefix s
same ref_s.idx s_text_document.idx "the sample, llama3: the .idx of bpe-encode | idx-pack"
same ref_s.bin s_text_document.bin "the sample, llama3: the .bin of bpe-encode | idx-pack"
done_testing
