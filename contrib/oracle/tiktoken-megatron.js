// tiktoken-megatron.js RANKFILE OUT.json - a model in Megatron-Core's JSON
// form made from a .tiktoken rank file: a list of {"rank": I,
// "token_bytes": BASE64, "token_str": TEXT}, as its CustomTikTokenizer
// reads (reload_mergeable_ranks), which wants the 256 single bytes first,
// in byte order: so they come first here, then the other tokens in the
// rank file's order, renumbered from 256. Merges compare only the ranks
// of tokens of two bytes or more, whose order is kept, so that a text
// merges into the same tokens as with the rank file. token_str is the
// bytes as UTF-8, U+FFFD for what is not (Megatron does not read it).
// For t/4015.
const fs = require('fs');
const [src, dst] = process.argv.slice(2);
const single = [], multi = [];
for (const line of fs.readFileSync(src, 'utf8').split('\n')) {
	if (!line)
		continue;
	const [b64, rank] = line.split(' ');
	const bytes = Buffer.from(b64, 'base64');
	if (bytes.length === 1)
		single[bytes[0]] = b64;
	else
		multi[Number(rank)] = b64;
}
const out = single.concat(multi.filter((b) => b !== undefined)).map((b64, i) =>
    JSON.stringify({ rank: i, token_bytes: b64,
	token_str: Buffer.from(b64, 'base64').toString('utf8') }));
fs.writeFileSync(dst, '[\n' + out.join(',\n') + '\n]\n');
