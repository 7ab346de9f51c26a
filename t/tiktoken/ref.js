// ref.js ENCODING FILE - npm tiktoken's encode_ordinary of each JSONL
// record's text, one document a line of ids, a document of no ids left out
// (bpe-encode writes none for an empty text). ref.js --text A B: whether
// the texts of the records of A and B are the same, record by record.
const fs = require('fs');
const args = process.argv.slice(2);
const texts = (f) => fs.readFileSync(f, 'utf8').split('\n').filter((l) => l)
    .map((l) => JSON.parse(l).text);
if (args[0] === '--text') {
	const [a, b] = [texts(args[1]), texts(args[2])];
	const bad = a.findIndex((t, i) => t !== b[i]);
	if (a.length !== b.length || bad >= 0) {
		console.error(`ref.js: ${a.length} and ${b.length} records; first different: ${bad + 1}`);
		process.exit(1);
	}
	process.exit(0);
}
const e = require('tiktoken').get_encoding(args[0]);
const out = [];
for (const t of texts(args[1])) {
	const ids = e.encode_ordinary(t);
	if (ids.length > 0)
		out.push(Array.from(ids).join(' ') + '\n');
}
fs.writeFileSync(1, out.join(''));
