// check.mjs - read a WARC file with webrecorder's warcio and check it:
// node check.mjs FILE. One line a record: "TYPE URI block=ok|bad
// payload=ok|bad|- pair=ok|bad|-", then "records N"; exit 1 if any record
// does not parse. Digests are sha1 in base32, recomputed here; a response
// must be WARC-Concurrent-To a request written before it, a metadata
// record to a response.
import { WARCParser } from 'warcio';
import { createHash } from 'crypto';
import fs from 'fs';

function b32(buf) {
	const a = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
	let bits = 0, acc = 0, s = '';
	for (const b of buf) {
		acc = (acc << 8 | b) & 0xffff;
		bits += 8;
		while (bits >= 5) {
			s += a[(acc >> (bits - 5)) & 31];
			bits -= 5;
		}
	}
	return s;
}
const sha1 = (b) => 'sha1:' + b32(createHash('sha1').update(b).digest());

function dechunk(b) {
	const out = [];
	let i = 0;
	for (;;) {
		const nl = b.indexOf(10, i);
		const n = parseInt(b.subarray(i, nl).toString(), 16);
		i = nl + 1;
		if (!n)
			break;
		out.push(b.subarray(i, i + n));
		i += n + 2;
	}
	return Buffer.concat(out);
}

const seen = new Map();
let n = 0;
const parser = new WARCParser(fs.createReadStream(process.argv[2]),
    { parseHttp: false });
for await (const r of parser) {
	const block = Buffer.from(await r.readFully());
	const type = r.warcType, id = r.warcHeader('WARC-Record-ID');
	let payload = '-', pair = '-';
	const block_ok = r.warcHeader('WARC-Block-Digest') === sha1(block);
	if (r.warcHeader('WARC-Payload-Digest')) {
		const e = block.indexOf('\r\n\r\n');
		const head = block.subarray(0, e).toString();
		let body = block.subarray(e + 4);
		if (/^transfer-encoding:\s*chunked/im.test(head))
			body = dechunk(body);
		payload = r.warcHeader('WARC-Payload-Digest') === sha1(body) ?
		    'ok' : 'bad';
	}
	const to = r.warcHeader('WARC-Concurrent-To');
	if (type === 'response')
		pair = seen.get(to) === 'request' ? 'ok' : 'bad';
	else if (type === 'metadata')
		pair = seen.get(to) === 'response' ? 'ok' : 'bad';
	seen.set(id, type);
	console.log(`${type} ${r.warcTargetURI || '-'} block=${block_ok ? 'ok' : 'bad'} payload=${payload} pair=${pair}`);
	n++;
}
console.log(`records ${n}`);
