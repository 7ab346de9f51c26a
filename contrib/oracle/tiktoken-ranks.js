// tiktoken-ranks.js NAME [DIR] - write NAME.tiktoken, the base64 rank file
// ("BASE64 RANK" a line, as OpenAI publishes them), from the ranks that npm
// tiktoken ships in node_modules/tiktoken/encoders/NAME.json (lines
// "! FIRST TOKEN TOKEN ...", base64 tokens of consecutive ranks). The rank
// files are not in the repository: the tests make them in their scratch
// folder (t/tiktoken.sh). Required, it gives ranks(NAME)
// (hf-tokenizer-json.js).
const fs = require('fs');
const path = require('path');

// The ranks of encoding name, base64 tokens by rank.
function ranks(name) {
	const j = require('tiktoken/encoders/' + name + '.json');
	const out = [];
	for (const line of j.bpe_ranks.split('\n')) {
		if (!line)
			continue;
		const f = line.split(' ');
		let rank = Number(f[1]);
		for (const tok of f.slice(2))
			out[rank++] = tok;
	}
	return out;
}
module.exports = { ranks };

if (require.main === module) {
	const [name, dir = '.'] = process.argv.slice(2);
	fs.writeFileSync(path.join(dir, name + '.tiktoken'),
	    ranks(name).map((tok, r) => tok + ' ' + r + '\n').join(''));
}
