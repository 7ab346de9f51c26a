// make-tiktoken-edge.js - write t/bpe/tiktoken-edge.jsonl, the edge cases of
// TikTokenizer (t/4005-bpe-tiktoken.t): every encoding's special tokens as
// text, contractions in both cases, case runs (o200k), slashes, digits,
// CJK, emoji, white space, and characters assigned after Unicode 14 (PCRE2
// 10.42's tables) in places where their class moves a piece boundary.
//   node contrib/oracle/make-tiktoken-edge.js >t/bpe/tiktoken-edge.jsonl
const docs = [];
const add = (name, text) => docs.push({ name, text });
const specials = ['<|endoftext|>', '<|fim_prefix|>', '<|fim_middle|>',
	'<|fim_suffix|>', '<|endofprompt|>', '<|begin_of_text|>', '<|end_of_text|>',
	'<|eot_id|>', '<|reserved_special_token_7|>'];
for (const s of specials)
	add('special ' + s, s);
add('specials in text', 'x<|endoftext|>y <|endoftext|> <|fim_prefix|><|fim_middle|>\n<|endofprompt|>.');
add('contractions', "I'm you'RE he'S they'll we'VE she'd it's 'd ſ's O'NEIL's rock'n'roll");
add('case runs', 'HelloWorld CamelCaseWORDS iPhone xmlHTTPRequest ALLCAPS MiXeD ǅungla Ǆ');
add('slashes', 'a/b//c\n/usr/local/bin/ https://example.com/a/b?c=d&e=f#g\r\n//\n');
add('digits', '1234567890 12 123 1234 3.14159 1,000,000 ١٢٣٤٥ １２３ ²³ ½ Ⅻ 2024-12-05');
add('cjk', '日本語のテキストです。中文文本，測試。한국어 텍스트 입니다. ｶﾀｶﾅ');
add('emoji', '😀👍🏽 👨‍👩‍👧‍👦 🏳️‍🌈 🇯🇵🇫🇷 🏴󠁧󠁢󠁳󠁣󠁴󠁿 ❤️‍🔥');
add('white space', 'a  \n\n  b\t\t\r\n\r\n   c\u000b\f d\u0085e\u00a0f\u2028g\u3000h  ');
add('not white space', 'a\ufeffb \ufeff\n\ufeff c\u200bd\u180ee');
add('trailing spaces and newlines', 'end   \n\n\n   ');
add('mixed scripts', 'Русский текст, ελληνικά, עברית, العربية, हिन्दी, ไทย, Tiếng Việt');
add('marks', 'e\u0301 a\u0308\u0304 \u0915\u094d\u0937 Z\u0351\u0352\u0353');
add('punctuation', '...!!!??? --- *** ### "quoted" (paren) [bracket] {brace} <tag/>');
add('code', 'int main(void) {\n\treturn x->y[3] != 0 && a <= b; // comment\n}\n');
const late = {
	'U15 Kawi letter': 0x11F04, 'U15 CJK ext H': 0x31350, 'U15 Kannada mark (Mc)': 0x0CF3,
	'U15 Lao mark (Mn)': 0x0ECE, 'U15 Nag Mundari digit': 0x1E4F1, 'U15 Kawi digit': 0x11F51,
	'U15 Cyrillic modifier (Lm)': 0x1E030, 'U15.1 CJK ext I': 0x2EBF0,
	'U16 Latin capital (Lu)': 0xA7CB, 'U16 Latin small (Ll)': 0xA7CD,
	'U16 Cyrillic TJE (Lu)': 0x1C89, 'U16 Cyrillic tje (Ll)': 0x1C8A,
	'U16 Garay capital (Lu)': 0x10D50, 'U16 Garay small (Ll)': 0x10D70,
	'U16 Garay digit': 0x10D41, 'U16 outlined digit': 0x1CCF1, 'U16 Todhri': 0x105C0,
	'U16 Arabic mark (Mn)': 0x0897, 'U17 Sidetic': 0x10940, 'U17 Tai Yo': 0x1E6C0,
};
for (const [name, cp] of Object.entries(late)) {
	const x = String.fromCodePoint(cp);
	add(name + ' U+' + cp.toString(16).toUpperCase(),
	    ['aXb', 'X', ' X', 'XX', '1X2', 'X12', "X's", "aX's", 'AXb', 'aXB',
	    '.X.', 'X\n', 'the X of'].map((c) => c.replace(/X/g, x)).join(' | '));
}
for (const d of docs)
	console.log(JSON.stringify(d));
