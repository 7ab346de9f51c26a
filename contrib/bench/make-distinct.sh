#!/bin/sh
# make-distinct.sh OUT [MB]: distinct multilingual text from this machine's
# Debian packages, as JSONL ({"text": ...}, a document a line), for the
# second headline input of bpe-encode.sh. Three kinds of document:
#   - the translations of programs' messages: each catalogue under
#     /usr/share/locale/LANG/LC_MESSAGES/*.mo, its translated strings one
#     after another (the .mo format is read directly, no gettext needed);
#   - the manual pages in other languages, /usr/share/man/LANG/, rendered
#     to text by groff (skipped where groff is missing);
#   - the documentation in /usr/share/doc: README, NEWS, changelogs,
#     copyright files and other plain text, decompressed.
# Nothing of ../shared is read. A document that is not UTF-8 is skipped,
# one seen before (the same text) is kept once, and each kind is taken in
# an order fixed by a hash of its path, up to its share of MB megabytes
# (20): 55% translations, 20% manual pages, 25% documentation. The same
# machine gives the same file; the summary on stderr says what went in.
set -eu
[ $# -ge 1 ] || { echo "usage: make-distinct.sh out.jsonl [MB]" >&2; exit 2; }
out=$1
mb=${2:-20}
py=/usr/bin/python3
[ -x "$py" ] || py=$(command -v python3) ||
	{ echo "make-distinct.sh: needs python3" >&2; exit 3; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/distinct.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# The manual pages, rendered first: the Python part reads them from $tmp/man.
if command -v groff >/dev/null 2>&1; then
	find /usr/share/man -mindepth 1 -maxdepth 1 -type d ! -name 'man*' |
	    sort | while read -r d; do
		find "$d" -type f -name '*.gz' | sort | while read -r f; do
			o=$tmp/man/$(printf '%s' "$f" | tr '/' '_').txt
			mkdir -p "$tmp/man"
			zcat "$f" 2>/dev/null | groff -man -Tutf8 -Kutf8 -P-cbou \
			    2>/dev/null >"$o" || rm -f "$o"
		done
	done
fi

"$py" - "$out" "$mb" "$tmp/man" <<'EOF'
import glob, gzip, hashlib, json, os, struct, sys

out, mb, mandir = sys.argv[1], float(sys.argv[2]), sys.argv[3]
budget = {'mo': 0.55, 'man': 0.20, 'doc': 0.25}

def key(path):
    return hashlib.sha1(path.encode()).hexdigest()

def mo_text(path):
    """The translated strings of a .mo catalogue, or None."""
    d = open(path, 'rb').read()
    if len(d) < 28:
        return None
    magic = struct.unpack('<I', d[:4])[0]
    e = '<' if magic == 0x950412de else '>' if magic == 0xde120495 else None
    if e is None:
        return None
    n, oo, to = struct.unpack(e + 'III', d[8:20])
    charset, strs = 'utf-8', []
    for i in range(n):
        ol, oa = struct.unpack(e + 'II', d[oo + 8 * i:oo + 8 * i + 8])
        tl, ta = struct.unpack(e + 'II', d[to + 8 * i:to + 8 * i + 8])
        t = d[ta:ta + tl]
        if ol == 0:        # the header: its charset
            for line in t.decode('ascii', 'replace').split('\n'):
                if 'charset=' in line:
                    charset = line.split('charset=')[1].strip() or 'utf-8'
            continue
        strs.append(t)
    try:
        return '\n'.join(s.decode(charset).replace('\0', '\n') for s in strs)
    except (LookupError, UnicodeDecodeError):
        return None

def plain(path):
    try:
        d = gzip.open(path).read() if path.endswith('.gz') else open(path, 'rb').read()
        if b'\0' in d:
            return None
        return d.decode('utf-8')
    except (OSError, UnicodeDecodeError, EOFError):
        return None

docs = {'mo': sorted(glob.glob('/usr/share/locale/*/LC_MESSAGES/*.mo'), key=key),
        'man': sorted(glob.glob(os.path.join(mandir, '*.txt')), key=key),
        'doc': []}
for root, dirs, files in os.walk('/usr/share/doc'):
    dirs.sort()
    for f in sorted(files):
        b = f[:-3] if f.endswith('.gz') else f
        if b.split('.')[0].upper() in ('README', 'NEWS', 'CHANGELOG', 'COPYRIGHT',
                'AUTHORS', 'THANKS', 'TODO', 'FAQ', 'HISTORY', 'CHANGES') or \
                b.endswith(('.txt', '.md', '.rst')) or b.startswith('changelog'):
            docs['doc'].append(os.path.join(root, f))
docs['doc'].sort(key=key)

seen, total = set(), 0
with open(out + '.tmp', 'w', encoding='utf-8') as w:
    for kind in ('mo', 'man', 'doc'):
        room, n, size = budget[kind] * mb * 1e6, 0, 0
        for path in docs[kind]:
            t = mo_text(path) if kind == 'mo' else plain(path)
            if not t or len(t) < 200:
                continue
            h = hashlib.sha1(t.encode()).digest()
            if h in seen:
                continue
            line = json.dumps({'text': t}, ensure_ascii=False) + '\n'
            k = len(line.encode())
            if size + k > room:
                continue
            seen.add(h)
            w.write(line)
            n, size = n + 1, size + k
        total += size
        print('make-distinct.sh: %s: %d documents, %.1f MB of JSONL (of %d files)'
              % (kind, n, size / 1e6, len(docs[kind])), file=sys.stderr)
os.rename(out + '.tmp', out)
print('make-distinct.sh: %s: %.1f MB' % (out, total / 1e6), file=sys.stderr)
EOF
