#!/bin/sh
# Debian's wget crawls a loopback site into a WARC (--warc-file
# --warc-cdx, a record a gzip member); owt-fetch --extract on it gives the
# texts owt-fetch gives crawling the same site, and each record's
# warc_offset is the offset wget's CDX gives.
. "${OWT_SRC:-.}/t/lib.sh"
. "$OWT_SRC/t/httpd.sh"
. "$OWT_SRC/t/warc.sh"

command -v wget >/dev/null || skip_all "no wget"
cd "$T" || exit 3
mkdir www
warc_site www links
httpd_start www

run wget -q -r -e robots=off --warc-file=site --warc-cdx "$B/index.html"
is "$rc" 8 "wget crawls the site (exit 8: the 404 link)"
ok_file=no
[ -s site.warc.gz ] && [ -s site.cdx ] && ok_file=yes
is "$ok_file" yes "wget wrote site.warc.gz and site.cdx"

run owt-fetch --extract site.warc.gz
is "$rc" 0 "owt-fetch --extract on wget's WARC exits 0"
mv out warc.jsonl
like err '^owt-fetch: outcomes: 5 ok, 1 http, 2 not-html$' \
    "5 pages, the 404, wget's two text/plain resource records"
like err '^owt-fetch: WARC records skipped: 1 warcinfo, 6 request, 1 metadata$' \
    "warcinfo, requests and wget's manifest are skipped"

sed -n 's/^\(http[^ ]*\) .*/\1/p' site.cdx | grep -v '/status/404' >urls
run owt-fetch -q --allow-private --ignore-robots --delay 0 --ordered urls
is "$rc" 0 "owt-fetch crawls the same URLs"
# url, title and text of each record, sorted
utt() {
	sed -E 's/^\{"url":("[^"]*"),"title":("([^"\\]|\\.)*"),"text":("([^"\\]|\\.)*").*/\1 \2 \4/' "$1" | sort
}
utt out >crawl.txt
utt warc.jsonl >warc.txt
same crawl.txt warc.txt "the WARC gives the crawl's titles and texts"
like warc.jsonl '"text":"Café crème brûlée,.*"charset":"WINDOWS-1252"' \
    "the charset of the archived HTTP header"

# warc_offset against wget's CDX (url, then the compressed offset, column V: the 9th).
awk 'NR > 1 && $5 == 200 { print $1, $9 }' site.cdx | sort >cdx.off
sed -n 's/^{"url":"\([^"]*\)".*"warc_offset":\([0-9]*\)}$/\1 \2/p' warc.jsonl |
    grep -v '^metadata:' | sort >ours.off
same cdx.off ours.off "warc_offset is the offset wget's CDX gives"
done_testing
