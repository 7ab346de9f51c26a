#!/bin/sh
# owt-fetch --warc-file: a crawl of a loopback site archived as
# PREFIX.warc.gz (a redirect's two hops, a 404, a chunked page); owt-fetch
# --extract on it gives the crawl's texts, and webrecorder's warcio (npm,
# t/warcio) reads every record, recomputes every digest and finds each
# response joined to its request and each outcome to its response.
. "${OWT_SRC:-.}/t/lib.sh"
. "$OWT_SRC/t/httpd.sh"
. "$OWT_SRC/t/warc.sh"

cd "$T" || exit 3
mkdir www
warc_site www
httpd_start www
printf '%s\n' "$B/harbour.html" "$B/__owt/redirect?to=/mountain.html" \
    "$B/forest.html" "$B/latin1.html?ct=text/html%3Bcharset%3Diso-8859-1" \
    "$B/__owt/chunked" "$B/__owt/status/404" >urls

run owt-fetch --allow-private --ignore-robots --delay 0 --ordered \
    --warc-file site --log log urls
is "$rc" 0 "a crawl with --warc-file exits 0"
like err '^owt-fetch: outcomes: 5 ok, 1 http$' "5 pages and a 404"
mv out crawl.jsonl
ok_file=no
[ -s site.warc.gz ] && [ ! -e site.warc.gz.open ] && ok_file=yes
is "$ok_file" yes "site.warc.gz is written, the .open name is gone"

run owt-fetch --extract site.warc.gz
is "$rc" 0 "--extract reads it back"
like err '^owt-fetch: outcomes: 5 ok, 2 http$' "the pages, the 404 and the redirect hop"
like err '^owt-fetch: WARC records skipped: 1 warcinfo, 7 request, 6 metadata$' \
    "a warcinfo, 7 requests (6 URLs, a redirect hop), 6 outcomes"
# title and text, sorted (the redirect's record is its last hop's URL)
tt() {
	sed -E 's/^\{"url":"[^"]*","title":("([^"\\]|\\.)*"),"text":("([^"\\]|\\.)*").*/\1 \3/' "$1" | sort
}
tt crawl.jsonl >want
tt out >got
same want got "the archive gives the crawl's titles and texts"
like out '"title":"Chunked","text":"This page came in chunks,' \
    "a chunked body is archived as received and extracted undone"
like out '"text":"Café crème brûlée,.*"charset":"WINDOWS-1252"' \
    "the charset of the archived header"

# Content codings: asked for as without --warc-file, archived as sent (the
# payload digest is the sha1 of the .gz file itself), undone to extract; a
# compression bomb is archived whole and dropped as too large, as the crawl
# without an archive drops it.
gzip -n -c www/forest.html >www/packed.html.gz
printf '%s\n' "$B/packed.html" "$B/__owt/bomb" >gzurls
run owt-fetch --allow-private --ignore-robots --delay 0 --ordered \
    --max-bytes 1048576 --warc-file gz --log gzlog --html-dir hd gzurls
is "$rc" 0 "a crawl of gzip-encoded pages with --warc-file exits 0"
cat hd/*.html.gz | gzip -dc >hd.html
same www/forest.html hd.html "--html-dir beside it saves the page decoded"
like err '^owt-fetch: outcomes: 1 ok, 1 too-large$' "the page, and the bomb too large"
like gzlog '"outcome":"too-large".*"error":"body over 1048576 bytes"' \
    "the bomb's outcome as without an archive"
gzip -dc gz.warc.gz | tr -d '\r' >gz.warc
like gz.warc '^Accept-Encoding: .*gzip' "the request asks for gzip"
is "$(grep -c '^Content-Encoding: gzip$' gz.warc)" 2 "both answers are archived gzip-encoded"
d=$(sha1sum www/packed.html.gz | cut -d ' ' -f 1)
like gz.warc "^WARC-Payload-Digest: sha1:$(perl -e 'print pack("H*", $ARGV[0])' "$d" | base32)$" \
    "the page's payload is the .gz file's bytes"
run owt-fetch --extract gz.warc.gz
tt out >got
grep '"title":"The forest page"' crawl.jsonl >forest.jsonl
tt forest.jsonl >want
same want got "and its text is the plain page's"

run owt-fetch --warc-file x --extract site.warc.gz
is "$rc" 2 "--warc-file with --extract is a usage error"
like err '^owt-fetch: --warc-file archives a crawl: not with --extract$' "and says so"
printf '%s/harbour.html\n' "$B" >one
run owt-fetch -q --allow-private --ignore-robots --warc-file site one
is "$rc" 2 "an existing archive is not overwritten"
like err "^owt-fetch: --warc-file: 'site.warc.gz' exists: give another prefix \(or --resume\)$" \
    "and says so"
: >left.warc.gz.open
run owt-fetch -q --allow-private --ignore-robots --warc-file left one
is "$rc" 2 "nor the .open file of a killed run"
run owt-fetch -q --allow-private --ignore-robots --warc-file nodir/x one
is "$rc" 3 "an archive that cannot be created exits 3"
like err "^owt-fetch: cannot create 'nodir/x.warc.gz.open': No such file or directory$" \
    "and names it"

# A write error (a file size limit of 64 blocks, SIGXFSZ ignored: write gets
# EFBIG, as a full disk gives ENOSPC) exits 3 naming the file, with no URL
# in the log; --resume keeps what was written whole and archives the rest:
# every URL once.
for i in $(seq 120); do
	echo "$B/harbour.html?copy=$i"
done >furls
run sh -c 'ulimit -f 64; trap "" XFSZ; exec "$@" >/dev/null' sh owt-fetch -q \
    --allow-private --ignore-robots --delay 0 --warc-file full --log flog furls
is "$rc" 3 "an archive that cannot be written exits 3"
like err "^owt-fetch: cannot write 'full.warc.gz.open': File too large$" \
    "and names it"
is "$(wc -l <flog | tr -d ' ')" 0 "no URL of the unwritten groups is logged"
run owt-fetch -q --allow-private --ignore-robots --delay 0 --warc-file full \
    --log flog --resume flog furls
is "$rc" 0 "--resume after the write error exits 0"
for f in full*.warc.gz; do
	gzip -dc "$f"
done | tr -d '\r' | awk '/^WARC-Type: / { t = $2 }
    /^WARC-Target-URI: / && t == "response" { print $2 }' | sort >furls.got
is "$(wc -l <furls.got | tr -d ' ') $(uniq -d furls.got | wc -l | tr -d ' ')" \
    "120 0" "every URL's response archived once across the files"

# warcio, from the registry (t/warcio/package-lock.json); skipped offline.
if npm_pinned warcio warcio check.mjs; then
	warcio=$OWT_BUILD/t/npm-warcio
	run node "$warcio/check.mjs" site.warc.gz
	is "$rc" 0 "warcio reads every record"
	like out '^records 21$' "21 records: warcinfo, 7 requests, 7 responses, 6 metadata"
	is "$(grep -c ' block=ok ' out)" 21 "every WARC-Block-Digest verifies"
	is "$(grep -c ' payload=ok ' out)" 5 "every WARC-Payload-Digest verifies (the 5 pages)"
	unlike out ' (block|payload|pair)=bad' "no digest or pairing is wrong"
	is "$(grep -c '^response .* pair=ok$' out)" 7 \
	    "each response is WARC-Concurrent-To its request"
	is "$(grep -c '^metadata .* pair=ok$' out)" 6 \
	    "each URL's outcome is WARC-Concurrent-To its response"
	is "$(grep -c '^metadata' out)" "$(wc -l <log | tr -d ' ')" \
	    "as many outcomes as lines in the crawl log"
else
	skip "warcio: $npm_why"
fi
done_testing
