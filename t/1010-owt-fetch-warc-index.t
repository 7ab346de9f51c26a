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
for p in harbour mountain forest; do
	warc_page "The $p page" "$p" >"www/$p.html"
done
printf '<html><body><p>Caf\351 cr\350me br\373l\351e, served as latin1, with enough words to be an article here.</p></body></html>' >www/latin1.html
cat >www/index.html <<'HTML'
<html><head><title>Index</title></head><body>
<a href="harbour.html">harbour</a> <a href="mountain.html">mountain</a>
<a href="forest.html">forest</a>
<a href="latin1.html?ct=text/html%3Bcharset%3Diso-8859-1">latin1</a>
<a href="/__owt/status/404">gone</a>
</body></html>
HTML
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

# Exact member lengths, for a CDXJ and a JSON index.
if [ -x /usr/bin/python3 ]; then
	/usr/bin/python3 - site.warc.gz site.cdx <<'PY' >site.cdxj
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
PY
	fetch --warc-prefix "$NB/" site.cdxj
	is "$rc" 0 "a CDXJ index (Common Crawl's form, strings) with lengths"
	same want.jsonl out "the same records"
	sed -n 's/^[^{]*\({.*\)"length": "\([0-9]*\)", "offset": "\([0-9]*\)"\(.*\)/\1"length": \2, "offset": \3\4/p' site.cdxj >site.json
	fetch --warc-prefix "$NB" site.json
	is "$rc" 0 "a JSON index (numbers) with lengths"
	same want.jsonl out "the same records"
	like "$T/nginx/access.log" '"GET /site.warc.gz HTTP/1.1" 206 ' "nginx answered 206"
	awk '{ print $1, $2, $3, $4, $5, "-", "-", "-", $(NF - 2), $(NF - 1), $NF }' site.cdxj |
	    tr -d '",}' | sed 's/ [a-z]*: / /g' >cc.cdx
else
	skip "no /usr/bin/python3: no CDXJ"
	skip "no CDXJ"
	skip "no JSON"
	skip "no JSON"
	skip "no JSON"
fi
