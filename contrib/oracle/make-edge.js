// make-edge.js - the edge-case fixtures of bpe-encode's tests and their
// reference ids, from npm tiktoken (the WASM build of tiktoken's Rust core),
// get_encoding("gpt2").encode_ordinary. Run once; the output is committed:
//
//   mkdir -p /tmp/ref && (cd /tmp/ref && npm install tiktoken@1.0.22)
//   NODE_PATH=/tmp/ref/node_modules node contrib/oracle/make-edge.js t/bpe/edge
//
// writes t/bpe/edge.jsonl (one {"name", "text"} record a case) and
// t/bpe/edge.ids (the ids of each text, space-separated, a line each).
const fs = require('fs');
const { get_encoding } = require('tiktoken');

// A fixed pseudo-random sequence (mulberry32), so that a rerun writes the same files.
let seed = 20261202;
function rand() {
	seed = (seed + 0x6d2b79f5) >>> 0;
	let t = seed;
	t = Math.imul(t ^ (t >>> 15), t | 1);
	t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
	return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}
const pick = (s, n) => Array.from({ length: n }, () => s[Math.floor(rand() * s.length)]).join('');

const cases = [
	['empty', ''],
	['one space', ' '],
	['one newline', '\n'],
	['spaces between words', 'a   b'],
	['space then tab', 'a \tb'],
	['newlines then space', 'a\n\n b'],
	['space newline space', 'a \n b'],
	['leading and trailing', '  lead and trail  '],
	['only spaces', '     '],
	['tabs', 'x\t\t\ty\t'],
	['crlf', 'line1\r\nline2\r\n\r\nend'],
	['vt ff', 'a\u000b\u000cb \u000b c'],
	['nbsp', 'a\u00a0b a\u00a0\u00a0b \u00a0x'],
	['nel', 'a\u0085b \u0085\u0085c'],
	['en to hair spaces', 'a\u2000b\u2001c\u2002d\u2003e\u2004f\u2005g\u2006h\u2007i\u2008j\u2009k\u200al'],
	['line and paragraph separators', 'one\u2028two\u2029three \u2028 four'],
	['narrow and math spaces', 'a\u202fb\u205fc \u202f\u205f d'],
	['ideographic space', '日本\u3000語 \u3000テスト\u3000\u3000終'],
	['ogham space', 'a\u1680b \u1680 c'],
	['feff after newlines', '2.0\n\n\ufeff.. _tw'],
	['feff after space', 'word \ufeffnext \ufeff\ufeff end'],
	['zero width space', 'a\u200bb \u200b c\u200b\u200b'],
	['mongolian vowel separator', 'a\u180eb \u180e c'],
	['information separators', 'a\u001c\u001d\u001e\u001fb \u001c x'],
	['contractions', "don't I'll we've they're he'd I'm it's"],
	['upper case contractions', "DON'T I'LL WE'VE IT'S 'S 'LL 'Ve"],
	['apostrophe runs', "''s 's' 'x rock'n'roll ' ' s '"],
	['curly apostrophe', 'it\u2019s don\u2019t \u2018quoted\u2019'],
	['digits', '1234567890 3.14159 12,345 1st 2nd 0x1F 007'],
	['arabic indic digits', '\u0663\u0664\u0665 \u0661\u0662 \u06f1\u06f2'],
	['fullwidth digits', '\uff11\uff12\uff13 \uff21\uff22'],
	['other numbers', '\u00b2\u00b3 \u00bd \u2167 \u216b \u2460\u2461 \u3007'],
	['japanese', '日本語のテキストです。東京都、大阪府。'],
	['chinese', '中文测试，标点符号。「引号」和（括号）'],
	['korean', '한국어 텍스트 입니다.'],
	['thai', 'ภาษาไทยไม่มีช่องว่างระหว่างคำ'],
	['devanagari', 'हिन्दी भाषा में पाठ'],
	['hebrew and arabic', 'עברית והעולם العربية والعالم'],
	['cyrillic and greek', 'Привет, мир! Γειά σου κόσμε'],
	['emoji zwj family', 'family: \u{1f468}\u200d\u{1f469}\u200d\u{1f467}\u200d\u{1f466} ok'],
	['emoji flags and tones', 'flag \u{1f3f3}\ufe0f\u200d\u{1f308} \u{1f1e9}\u{1f1ea} \u{1f44d}\u{1f3fd}'],
	['emoji tag sequence', '\u{1f3f4}\u{e0067}\u{e0062}\u{e0073}\u{e0063}\u{e0074}\u{e007f} scotland'],
	['emoji in words', 'a\u{1f600}b \u{1f600}\u{1f600}c'],
	['combining marks', 'cafe\u0301 nai\u0308ve e\u0301\u0301\u0301 a\u0300b'],
	['zalgo', 'z\u0351\u0344\u0300a\u0352\u0346l\u0357g\u034fo'],
	['nul and c0', 'a\u0000b \u0000\u0001\u0002 \u007f'],
	['c1 controls', 'x\u0080\u0085\u009fy'],
	['ansi escapes', '\u001b[31mred\u001b[0m plain'],
	['bom at start', '\ufeffhello world'],
	['bom alone', '\ufeff'],
	['endoftext inside', 'a<|endoftext|>b <|endoftext|>'],
	['endoftext alone', '<|endoftext|>'],
	['punctuation runs', '!!!???... --- ... !? ,, ;;'],
	['code', 'for (int i = 0; i < n; i++) {\n\treturn x->y[i];\n}\n'],
	['url and email', 'see https://example.org/a/b?c=d&e=f#g or mail a.b@example.com'],
	['money and tags', '$100.00 #hashtag @user 50% a&b'],
	['mixed scripts', 'abcабв abc123 123abc a1b2 日本abc'],
	['private use and unassigned', '\ue000\uf8ff \u0378 \uffff \u{10ffff} x'],
	['unicode 15 letters', 'kawi \u{11f04}\u{11f05} cjk-h \u{31350}\u{31351}中'],
	['unicode 16 letters', 'latin \ua7cb\ua7dc garay \u{10d4a}\u{10d50} cyr \u1c89\u1c8a'],
	['unicode 17 characters', 'x\u{10940}y \u{11dc0}z'],
	['long word', 'Pneumonoultramicroscopicsilicovolcanoconiosis antidisestablishmentarianism'],
	['long url', 'https://example.com/' + pick('abcdefghijklmnopqrstuvwxyz0123456789/-_', 300)],
	['base64', pick('ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/', 2000)],
	['random letters', pick('abcdefghijklmnopqrstuvwxyz', 3000)],
	['random digits', pick('0123456789', 3000)],
	['random cjk', pick('的一是不了人我在有他这中大来上个国和也子时道出而要于就下得可你年生', 1000)],
	['a times 20000', 'a'.repeat(20000)],
	['spaced a', 'a '.repeat(2000)],
	['newline runs', '\n\n\n \n\n  \n\t\n'],
	// Pieces of 60..70 bytes: both sides of the short/long merge boundary.
	['letters 60 to 70', Array.from({ length: 11 }, (_, k) => pick('abcdefghijklmnopqrstuvwxyz', 60 + k)).join(' ')],
	['cjk 60 to 72 bytes', Array.from({ length: 5 }, (_, k) => pick('的一是不了人我在有他这中大来上个国和', 20 + k)).join('、')],
	['punctuation 64', pick('!?.,;:-_=+*&^%$#@~', 64) + ' ' + pick('!?.,;:-_=+*&^%$#@~', 65)],
];

const enc = get_encoding('gpt2');
const out = process.argv[2] || 'edge';
const jsonl = [], ids = [];
for (const [name, text] of cases) {
	jsonl.push(JSON.stringify({ name, text }));
	ids.push(Array.from(enc.encode_ordinary(text)).join(' '));
}
fs.writeFileSync(out + '.jsonl', jsonl.join('\n') + '\n');
fs.writeFileSync(out + '.ids', ids.join('\n') + '\n');
console.error(`${cases.length} cases written to ${out}.jsonl and ${out}.ids`);
