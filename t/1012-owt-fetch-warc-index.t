#!/bin/sh
# owt-fetch --warc-prefix: Debian's wget crawls a loopback site into a
# WARC with its CDX (no lengths: each record read to the end of its gzip
# member); a loopback nginx serves the WARC, and the CDX, a CDXJ and a
# JSON index (with lengths) drive Range fetches of single records that
# give the records --extract gives on the whole file, byte for byte. A
# server that ignores Range (200), a short body, a wrong or missing
# Content-Range (t/httpd) are errors; bad rows and an offset that is no
# record are bad input lines, FILE:LINE.
. "${OWT_SRC:-.}/t/lib.sh"
. "$OWT_SRC/t/httpd.sh"
. "$OWT_SRC/t/nginx.sh"
. "$OWT_SRC/t/warc.sh"

command -v wget >/dev/null || skip_all "no wget"
cd "$T" || exit 3
nginx_start "$T/arch" || skip_all "$nginx_why"
mkdir www arch arch/norange
warc_site www links
httpd_start www

run wget -q -r -e robots=off --warc-file=site --warc-cdx "$B/index.html"
is "$rc" 8 "wget crawls the site (exit 8: the 404 link)"
cp site.warc.gz arch/ && cp site.warc.gz arch/norange/ && cp site.warc.gz www/

run owt-fetch --extract site.warc.gz
is "$rc" 0 "owt-fetch --extract on wget's WARC exits 0"
mv out want.jsonl

fetch() {
	run owt-fetch --allow-private --ignore-robots --delay 0 --retries 0 \
	    --ordered "$@"
}

# wget's CDX: " CDX a b a m s k r M V g u", no length.
fetch --warc-prefix "$NB" --log log site.cdx
is "$rc" 0 "wget's CDX drives Range fetches from nginx"
same want.jsonl out "the records --extract gives on the whole file"
like err '^owt-fetch: outcomes: 5 ok, 1 http$' "5 pages and the 404"
like "$T/nginx/access.log" '"GET /site.warc.gz HTTP/1.1" 206 ' "nginx answered 206"
unlike "$T/nginx/access.log" '" 200 ' "no request took the whole file"
like log '^\{"url":"http://127.0.0.1:[0-9]*/harbour.html","outcome":"ok","http_status":200,.*"final_url":"http://127.0.0.1:[0-9]*/site.warc.gz"' \
    "the log names the page, its status, and the archive fetched"

# --resume: the rows whose URL the log has are not fetched again.
n0=$(wc -l <"$T/nginx/access.log")
fetch --warc-prefix "$NB" --resume log site.cdx
like err '^owt-fetch: 0 URLs in .*; 6 already in the log$' "--resume skips every row the log has"
is "$(wc -l <"$T/nginx/access.log")" "$n0" "and asks nginx for nothing"

# Exact member lengths, for a CDXJ and a JSON index.
if [ -x /usr/bin/python3 ]; then
	/usr/bin/python3 - site.warc.gz site.cdx <<'PY' >site.cdxj 2>cc.cdx
import sys, zlib
data = open(sys.argv[1], 'rb').read()
ends, pos = {}, 0
while pos < len(data):
	d = zlib.decompressobj(31)
	d.decompress(data[pos:])
	end = len(data) - len(d.unused_data)
	ends[pos] = end - pos
	pos = end
for line in open(sys.argv[2]):
	f = line.split()
	if f[0] == 'CDX':
		continue
	print('%s %s {"url": "%s", "mime": "%s", "status": "%s", "length": "%d", "offset": "%s", "filename": "%s"}'
	    % (f[0], f[1], f[0], f[3], f[4], ends[int(f[8])], f[8], f[9]))
	# Common Crawl's 11 CDX columns, N b a m s k r M S V g, no header.
	print('%s %s %s %s %s - - - %d %s %s' % (f[0], f[1], f[0], f[3], f[4],
	    ends[int(f[8])], f[8], f[9]), file=sys.stderr)
PY
	fetch --warc-prefix "$NB/" site.cdxj
	is "$rc" 0 "a CDXJ index (Common Crawl's form, strings) with lengths"
	same want.jsonl out "the same records"
	sed -n 's/^[^{]*\({.*\)"length": "\([0-9]*\)", "offset": "\([0-9]*\)"\(.*\)/\1"length": \2, "offset": \3\4/p' site.cdxj >site.json
	fetch --warc-prefix "$NB" site.json
	is "$rc" 0 "a JSON index (numbers) with lengths"
	same want.jsonl out "the same records"
	like "$T/nginx/access.log" '"GET /site.warc.gz HTTP/1.1" 206 ' "nginx answered 206"
	fetch --warc-prefix "$NB" cc.cdx
	is "$rc" 0 "Common Crawl's 11-column CDX"
	same want.jsonl out "the same records"
else
	skip "no /usr/bin/python3: no CDXJ"
	skip "no CDXJ"
	skip "no JSON"
	skip "no JSON"
	skip "no JSON"
	skip "no CDX of 11 columns"
	skip "no CDX of 11 columns"
	cp site.cdx cc.cdx
fi

# A server that ignores Range: every record an error, none read whole.
fetch --warc-prefix "$NB/norange" site.cdx
is "$rc" 0 "a server that ignores Range: the rows are outcomes, exit 0"
like err '^owt-fetch: http://127.0.0.1:[0-9]*/harbour.html: error: HTTP 200 to a Range request \(the server ignores Range\)$' \
    "a 200 answer to a Range request is an error, named"
like err '^owt-fetch: outcomes: 6 error$' "every row"
is "$(wc -c <out | tr -d ' ')" 0 "no record written"
unlike "$T/nginx/access.log" '"GET /norange/site.warc.gz HTTP/1.1" 200 [0-9]{5}' \
    "the transfer ended at the 200, not the whole file"

# Hostile answers (t/httpd): short, a wrong or no Content-Range.
run owt-fetch --allow-private --ignore-robots --delay 0 --retries 0 \
    --warc-prefix "$B/__owt/range/short" cc.cdx
is "$rc" 0 "a short answer is an outcome"
like err '^owt-fetch: http://127.0.0.1:[0-9]*/harbour.html: error: Transferred a partial file$' \
    "a body shorter than its Content-Length is an error"
like err '^owt-fetch: outcomes: 6 error$' "every row"
fetch --warc-prefix "$B/__owt/range/wrong" cc.cdx
like err "^owt-fetch: http://127.0.0.1:[0-9]*/harbour.html: error: wrong Content-Range 'bytes [0-9]*-[0-9]*/[0-9]*' for bytes [0-9]*-" \
    "a Content-Range not at the offset asked for is an error"
like err '^owt-fetch: outcomes: 6 error$' "every row"
fetch --warc-prefix "$B/__owt/range/none" cc.cdx
like err '^owt-fetch: http://127.0.0.1:[0-9]*/harbour.html: error: HTTP 206 without Content-Range$' \
    "a 206 without Content-Range is an error"
fetch --warc-prefix "$B/__owt/range/ignore" site.cdx
like err '^owt-fetch: outcomes: 6 error$' "t/httpd's 200 too, wget's CDX"
fetch --warc-prefix "$B/__owt/range/ok" site.cdx
same want.jsonl out "t/httpd's honest 206: the records again"

# Bad rows: FILE:LINE, exit 1; -k counts them and goes on.
head -3 site.cdx >bad.cdx
echo 'x 1 http://a.test/ text/html 200 - - - 10 abc site.warc.gz' >>bad.cdx
echo 'too few fields' >>bad.cdx
echo '{"filename": "site.warc.gz", "offset": -4}' >>bad.cdx
echo '{"offset": 0}' >>bad.cdx
echo ' CDX a b' >>bad.cdx
fails 1 '^owt-fetch: bad.cdx:5: 3 fields, the CDX header has more$' \
    "a row shorter than the header: FILE:LINE, exit 1" \
    owt-fetch --allow-private --ignore-robots --delay 0 --warc-prefix "$NB" bad.cdx
printf '%s\n' 'x 1 http://a.test/ text/html 200 - - - 10 abc site.warc.gz' \
    'too few fields' '{"filename": "site.warc.gz", "offset": -4}' \
    '{"offset": 0}' ' CDX a b' >bad2.cdx
fails 1 "^owt-fetch: bad2.cdx:1: bad offset 'abc'$" "a bad offset" \
    owt-fetch --allow-private --ignore-robots --delay 0 --warc-prefix "$NB" bad2.cdx
run owt-fetch -k --allow-private --ignore-robots --delay 0 --warc-prefix "$NB" bad2.cdx
is "$rc" 1 "-k: still exit 1"
grep -v -e ' URLs in ' -e 'outcomes: ' err >got
cat >want <<'EOF2'
owt-fetch: bad2.cdx:1: bad offset 'abc'
owt-fetch: bad2.cdx:2: 3 fields: not CDX (11 or 9 fields, or a ' CDX' header line first), CDXJ or JSON
owt-fetch: bad2.cdx:3: bad 'offset' field
owt-fetch: bad2.cdx:4: missing 'filename' field
owt-fetch: bad2.cdx:5: CDX header without the file name (g) or offset (V)
EOF2
same want got "each bad row named, FILE:LINE"
like err '; 5 bad input lines$' "and counted"

# An offset that is no record's: a bad input line, FILE:LINE and the archive's offset.
sed -n '1p;3s/ \([0-9][0-9]*\) site.warc.gz / 5 site.warc.gz /p' site.cdx >off.cdx
fails 1 '^owt-fetch: off.cdx:2: site.warc.gz:5: no WARC record here$' \
    "an offset inside a member: the row and the archive's offset" \
    owt-fetch --allow-private --ignore-robots --delay 0 --warc-prefix "$NB" off.cdx

# --shard takes every n-th row; the header line is every shard's.
fetch --warc-prefix "$NB" --shard 1/2 site.cdx
sed -n '2p;4p' want.jsonl >want2
same want2 out "--shard 1/2: rows 2, 4 and 6 (the 404)"
done_testing
