// hf-tokenizer-json.js KIND DIR [ENCODER VOCAB] - write DIR/tokenizer.json
// and DIR/tokenizer_config.json, a Hugging Face byte-level BPE tokenizer as
// transformers saves one, for the tests of bpe-encode --tokenizer-type
// HuggingFaceTokenizer (t/4011-bpe-hf.t), which check each with npm
// `tokenizers` (hf-tokenizer-json.js check, below) before using it:
//
//   gpt2 DIR ENCODER VOCAB  GPT-2's own (openai-community/gpt2's
//       tokenizer.json): encoder.json and vocab.bpe as they are, merges as
//       "A B" strings, ByteLevel pre-tokenizer with its regex, no BOS/EOS
//       around a text.
//   neox DIR   GPT-NeoX-20B's shape: an NFC normalizer, ByteLevel with its
//       regex, <|endoftext|> and <|padding|> first (ids 0 and 1), then
//       p50k_base's 50280 ranks (npm tiktoken's) with "A B" merges, then
//       added tokens that try each flag: "<mask>" (lstrip), "<sep>"
//       (rstrip), "[W]" (single_word), a run of 4 spaces and "é" in its
//       decomposed form (normalized, not special).
//   llama3 DIR  Meta-Llama-3's shape: cl100k_base's 100256 ranks as the
//       vocabulary, [A, B] merges, ignore_merges, a Split by Llama 3's
//       regex then ByteLevel without one, Llama 3's 256 special tokens
//       after the ranks (<|begin_of_text|> 100256, <|end_of_text|>
//       100257, ...), BOS before each text (TemplateProcessing); eos_token
//       <|end_of_text|>. Its vocabulary is over 65,535.
//   qwen2 DIR  Qwen2's shape: an NFC normalizer, a Split by Qwen2's regex
//       (digits one by one) then ByteLevel, cl100k_base's ranks as the
//       vocabulary with "A B" merges, <|endoftext|>, <|im_start|> and
//       <|im_end|> after them, no BOS; eos_token <|im_end|>.
//
// Merges from ranks as transformers' TikTokenConverter makes them: every
// split of a token into two tokens, in the order of the token's rank, then
// of the parts' ranks.
//
// hf-tokenizer-json.js check DIR ENCODING [BASE]: the ids `tokenizers`
// gives for a few texts, without the post-processor's, are npm tiktoken's
// encode_ordinary with ENCODING (gpt2, p50k_base, cl100k_base), each plus
// BASE (0; neox: 2), those texts left out that hold an added token's text; exit 1 and the first difference otherwise. NODE_PATH
// must reach both packages.
'use strict';
const fs = require('fs');
const path = require('path');

// GPT-2's bytes_to_unicode.
const b2u = [];
{
	let n = 0;
	for (let b = 0; b < 256; b++) {
		const keep = (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || b >= 174;
		b2u[b] = String.fromCodePoint(keep ? b : 256 + n++);
	}
}
const bl = (buf) => Array.from(buf, (b) => b2u[b]).join('');

// npm tiktoken's ranks of encoding name: [Buffer, ...] by rank.
function ranks(name) {
	return require('./tiktoken-ranks.js').ranks(name)
	    .map((tok) => Buffer.from(tok, 'base64'));
}

// vocab (text -> id) and merges ([l, r]) from ranks, ids from base.
function fromRanks(rk, base) {
	const vocab = {};
	const byText = new Map();
	rk.forEach((b, r) => {
		const t = bl(b);
		vocab[t] = base + r;
		byText.set(b.toString('latin1'), r);
	});
	const merges = [];
	rk.forEach((b, r) => {
		const s = b.toString('latin1');
		const local = [];
		for (let i = 1; i < s.length; i++) {
			const l = byText.get(s.slice(0, i));
			const rr = byText.get(s.slice(i));
			if (l !== undefined && rr !== undefined && l < r && rr < r)
				local.push([l, rr]);
		}
		local.sort((x, y) => x[0] - y[0] || x[1] - y[1]);
		for (const [l, rr] of local)
			merges.push([bl(rk[l]), bl(rk[rr])]);
	});
	return { vocab, merges };
}

const added = (id, content, o = {}) => ({
	id, content, single_word: !!o.single_word, lstrip: !!o.lstrip,
	rstrip: !!o.rstrip, normalized: !!o.normalized, special: o.special !== false,
});
const byteLevel = (regex) => ({
	type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: regex,
});
const bpe = (vocab, merges, ignore) => ({
	type: 'BPE', dropout: null, unk_token: null, continuing_subword_prefix: null,
	end_of_word_suffix: null, fuse_unk: false, byte_fallback: false,
	ignore_merges: ignore, vocab, merges,
});
function tokenizer(o) {
	return {
		version: '1.0', truncation: null, padding: null,
		added_tokens: o.added, normalizer: o.normalizer || null,
		pre_tokenizer: o.pre, post_processor: o.post,
		decoder: { type: 'ByteLevel', add_prefix_space: true, trim_offsets: true, use_regex: true },
		model: o.model,
	};
}

function write(dir, tj, config) {
	fs.mkdirSync(dir, { recursive: true });
	fs.writeFileSync(path.join(dir, 'tokenizer.json'), JSON.stringify(tj, null, 1) + '\n');
	fs.writeFileSync(path.join(dir, 'tokenizer_config.json'), JSON.stringify(config, null, 1) + '\n');
}

// Llama 3's regex, as its tokenizer.json spells it.
const LLAMA3 = "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
// Qwen2's regex, as its tokenizer.json spells it.
const QWEN2 = "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
const LLAMA3_NAMED = [
	'<|begin_of_text|>', '<|end_of_text|>', '<|reserved_special_token_0|>',
	'<|reserved_special_token_1|>', '<|finetune_right_pad_id|>', '<|step_id|>',
	'<|start_header_id|>', '<|end_header_id|>', '<|eom_id|>', '<|eot_id|>',
	'<|python_tag|>',
];

async function check(dir, enc, base) {
	const { Tokenizer } = require('tokenizers');
	const t = Tokenizer.fromFile(path.join(dir, 'tokenizer.json'));
	const e = require('tiktoken').get_encoding(enc);
	const texts = [
		'Hello world', "It's 2024: 12345 apples, don't they?", '  indented\n\n\tcode();  ',
		'naïve café déjà vu', '日本語のテキスト', 'emoji 👍🏽 and ZWJ 👩‍👩‍👧', 'Ünïcödé… “quotes”',
		'x'.repeat(300), '1234567890'.repeat(20),
	];
	// Texts with an added token's text in them are not tiktoken's.
	const tj = JSON.parse(fs.readFileSync(path.join(dir, 'tokenizer.json'), 'utf8'));
	const has = (s) => tj.added_tokens.some((a) => s.includes(a.content) ||
	    s.normalize('NFC').includes(a.content.normalize('NFC')));
	for (const s of texts.filter((x) => !has(x))) {
		const got = Array.from((await t.encode(s, null, { addSpecialTokens: false })).getIds());
		const want = Array.from(e.encode_ordinary(s), (x) => x + base);
		if (got.join(' ') !== want.join(' ')) {
			console.error(`hf-tokenizer-json.js: ${dir}: ${JSON.stringify(s)}: tokenizers ${got.join(' ')}, tiktoken ${want.join(' ')}`);
			process.exit(1);
		}
	}
}

const [kind, dir, a1, a2] = process.argv.slice(2);
if (kind === 'check') {
	check(dir, a1, Number(a2 || 0));
} else if (kind === 'gpt2') {
	const vocab = JSON.parse(fs.readFileSync(a1, 'utf8'));
	const merges = fs.readFileSync(a2, 'utf8').split('\n')
	    .filter((l) => l && !l.startsWith('#version'));
	write(dir, tokenizer({
		added: [added(50256, '<|endoftext|>', { normalized: true })],
		pre: byteLevel(true), post: { type: 'ByteLevel', add_prefix_space: true, trim_offsets: false, use_regex: true },
		model: bpe(vocab, merges, false),
	}), { bos_token: '<|endoftext|>', eos_token: '<|endoftext|>', unk_token: '<|endoftext|>',
	    model_max_length: 1024, tokenizer_class: 'GPT2Tokenizer' });
} else if (kind === 'neox') {
	const rk = ranks('p50k_base');
	const { vocab, merges } = fromRanks(rk, 2);
	const n = rk.length + 2;
	write(dir, tokenizer({
		added: [
			added(0, '<|endoftext|>'), added(1, '<|padding|>'),
			added(n, '<mask>', { lstrip: true }), added(n + 1, '<sep>', { rstrip: true }),
			added(n + 2, '[W]', { single_word: true }),
			added(n + 3, '    ', { normalized: true, special: false }),
			added(n + 4, 'e\u0301', { normalized: true, special: false }),
		],
		normalizer: { type: 'NFC' }, pre: byteLevel(true),
		post: { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: true },
		model: bpe({ '<|endoftext|>': 0, '<|padding|>': 1, ...vocab },
		    merges.map(([l, r]) => l + ' ' + r), false),
	}), { bos_token: '<|endoftext|>', eos_token: '<|endoftext|>', unk_token: '<|endoftext|>',
	    tokenizer_class: 'GPTNeoXTokenizer' });
} else if (kind === 'llama3') {
	const rk = ranks('cl100k_base');
	const { vocab, merges } = fromRanks(rk, 0);
	const n = rk.length;
	const sp = [];
	for (let i = 0; i < 256; i++)
		sp.push(added(n + i, i < LLAMA3_NAMED.length ? LLAMA3_NAMED[i] :
		    `<|reserved_special_token_${i - 9}|>`));
	write(dir, tokenizer({
		added: sp,
		pre: { type: 'Sequence', pretokenizers: [
			{ type: 'Split', pattern: { Regex: LLAMA3 }, behavior: 'Isolated', invert: false },
			byteLevel(false),
		] },
		post: { type: 'Sequence', processors: [
			{ type: 'ByteLevel', add_prefix_space: true, trim_offsets: false, use_regex: true },
			{ type: 'TemplateProcessing',
			  single: [{ SpecialToken: { id: '<|begin_of_text|>', type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } }],
			  pair: [{ SpecialToken: { id: '<|begin_of_text|>', type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } },
			      { SpecialToken: { id: '<|begin_of_text|>', type_id: 1 } }, { Sequence: { id: 'B', type_id: 1 } }],
			  special_tokens: { '<|begin_of_text|>': { id: '<|begin_of_text|>', ids: [n], tokens: ['<|begin_of_text|>'] } } },
		] },
		model: bpe(vocab, merges, true),
	}), { bos_token: '<|begin_of_text|>', eos_token: '<|end_of_text|>',
	    model_max_length: 131072, tokenizer_class: 'PreTrainedTokenizerFast' });
} else if (kind === 'qwen2') {
	const rk = ranks('cl100k_base');
	const { vocab, merges } = fromRanks(rk, 0);
	const n = rk.length;
	write(dir, tokenizer({
		added: [added(n, '<|endoftext|>'), added(n + 1, '<|im_start|>'), added(n + 2, '<|im_end|>')],
		normalizer: { type: 'NFC' },
		pre: { type: 'Sequence', pretokenizers: [
			{ type: 'Split', pattern: { Regex: QWEN2 }, behavior: 'Isolated', invert: false },
			byteLevel(false),
		] },
		post: { type: 'ByteLevel', add_prefix_space: false, trim_offsets: false, use_regex: false },
		model: bpe(vocab, merges.map(([l, r]) => l + ' ' + r), false),
	}), { bos_token: null, eos_token: '<|im_end|>', pad_token: '<|endoftext|>',
	    tokenizer_class: 'Qwen2Tokenizer' });
} else {
	console.error('usage: hf-tokenizer-json.js gpt2|neox|llama3|qwen2 DIR [ENCODER VOCAB] | check DIR ENCODING');
	process.exit(2);
}
