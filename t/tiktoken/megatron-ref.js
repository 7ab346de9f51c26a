// megatron-ref.js JSON N PATTERN SHIFT FILE - Megatron's
// CustomTikTokenizer as npm tiktoken makes it: the first N ranks of its
// JSON model (a list of {rank, token_bytes, token_str}), Megatron's pattern v1 or v2 (PATTERN_TIKTOKEN,
// PATTERN_TIKTOKEN_V2, as megatron/training/tokenizer/tokenizer.py spells
// them), encode_ordinary of each record's text, each id + SHIFT (the
// number of special tokens), one document a line, none for no ids.
const fs = require('fs');
const { Tiktoken } = require('tiktoken');
const [json, n, pat, shift, file] = process.argv.slice(2);
const patterns = {
	v1: String.raw`[^\r\n\p{L}\p{N}]?+\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]++[\r\n]*|\s*[\r\n]|\s+(?!\S)|\s+`,
	v2: String.raw`[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+`,
};
const ranks = JSON.parse(fs.readFileSync(json, 'utf8')).slice(0, Number(n))
    .map((x) => x.token_bytes + ' ' + x.rank).join('\n') + '\n';
const e = new Tiktoken(ranks, {}, patterns[pat]);
const out = [];
for (const l of fs.readFileSync(file, 'utf8').split('\n').filter((l) => l)) {
	const ids = e.encode_ordinary(JSON.parse(l).text);
	if (ids.length > 0)
		out.push(Array.from(ids).map((i) => i + Number(shift)).join(' ') + '\n');
}
fs.writeFileSync(1, out.join(''));
