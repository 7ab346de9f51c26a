// ref.js DIR FILE - npm tokenizers' ids of each JSONL record's text with
// DIR/tokenizer.json, the post-processor's ids included (addSpecialTokens,
// as Megatron's HuggingFaceTokenizer calls it), one document a line, a
// document of no ids left out (bpe-encode writes none).
// ref.js --decode DIR FILE: each line of ids decoded (skipSpecialTokens
// false), as JSONL records {"text": ...}.
// ref.js --specials DIR: JSONL records that hold every added token of
// DIR/tokenizer.json as text: alone, between words, after and before
// white space, glued to letters, and all of them in one text.
'use strict';
const fs = require('fs');
const path = require('path');
const { Tokenizer } = require('tokenizers');
const args = process.argv.slice(2);
const lines = (f) => fs.readFileSync(f, 'utf8').split('\n').filter((l) => l);

function specials(dir) {
	const tj = JSON.parse(fs.readFileSync(path.join(dir, 'tokenizer.json'), 'utf8'));
	const out = [];
	const all = [];
	for (const a of tj.added_tokens) {
		const c = a.content;
		for (const t of [c, `a ${c} b`, `x  ${c}  y`, `w${c}w`, `${c}${c}`, `\n${c}\t`, `1${c}.`])
			out.push(JSON.stringify({ text: t }) + '\n');
		all.push(c);
	}
	out.push(JSON.stringify({ text: all.join(' x ') }) + '\n');
	out.push(JSON.stringify({ text: all.join('') }) + '\n');
	fs.writeFileSync(1, out.join(''));
}

async function main() {
	if (args[0] === '--specials')
		return specials(args[1]);
	if (args[0] === '--decode') {
		const t = Tokenizer.fromFile(path.join(args[1], 'tokenizer.json'));
		const out = [];
		for (const l of lines(args[2]))
			out.push(JSON.stringify({ text: await t.decode(l.split(' ').map(Number), false) }) + '\n');
		fs.writeFileSync(1, out.join(''));
		return;
	}
	const t = Tokenizer.fromFile(path.join(args[0], 'tokenizer.json'));
	const texts = lines(args[1]).map((l) => JSON.parse(l).text);
	const out = [];
	for (let i = 0; i < texts.length; i += 256) {
		const enc = await t.encodeBatch(texts.slice(i, i + 256), { addSpecialTokens: true });
		for (const e of enc) {
			const ids = e.getIds();
			if (ids.length > 0)
				out.push(Array.from(ids).join(' ') + '\n');
		}
	}
	fs.writeFileSync(1, out.join(''));
}
main().catch((e) => { console.error('ref.js: ' + e); process.exit(1); });
