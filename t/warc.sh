# warc.sh - write WARC records by hand, for the tests: . "$OWT_SRC/t/warc.sh"
#
# warc_record TYPE URI BLOCK [FIELD...]   a record on stdout: WARC/1.0, its
#                       WARC-Type, WARC-Target-URI (none when URI is -),
#                       WARC-Date and WARC-Record-ID numbered $warc_n, the
#                       FIELDs given ("Name: value"), Content-Length of the
#                       file BLOCK, the block and CRLF CRLF
# http_block STATUS FILE [FIELD...]  an HTTP/1.1 response on stdout: the
#                       status line, the FIELDs, an empty line, FILE
# warc_fixture [CMD]    write t/data/owt-small.warc.gz's records on
#                       stdout, each compressed alone by CMD (gzip -n: the
#                       same bytes every time; 'cat': a plain WARC); the
#                       pages are built here too
# warc_page TITLE WORD  a page of six paragraphs on WORD

warc_n=0

warc_record() {
	wtype=$1 wuri=$2 wblock=$3
	shift 3
	printf 'WARC/1.0\r\nWARC-Type: %s\r\n' "$wtype"
	[ "$wuri" = - ] || printf 'WARC-Target-URI: %s\r\n' "$wuri"
	printf 'WARC-Date: 2026-12-01T10:00:%02dZ\r\n' $((warc_n % 60))
	printf 'WARC-Record-ID: <urn:uuid:00000000-0000-4000-8000-%012d>\r\n' "$warc_n"
	for f in "$@"; do
		printf '%s\r\n' "$f"
	done
	printf 'Content-Length: %d\r\n\r\n' "$(wc -c <"$wblock")"
	cat "$wblock"
	printf '\r\n\r\n'
}

http_block() {
	hstatus=$1 hfile=$2
	shift 2
	printf 'HTTP/1.1 %s\r\n' "$hstatus"
	for f in "$@"; do
		printf '%s\r\n' "$f"
	done
	printf '\r\n'
	cat "$hfile"
}

# One paragraph-rich page: TITLE WORD (WORD varies the sentences).
warc_page() {
	printf '<html><head><title>%s</title></head><body><div class="article">\n' "$1"
	for i in 1 2 3 4 5 6; do
		printf '<p>The %s story, part %d, tells of a long day by the sea, with boats, nets, gulls and a storm that came late, as storms do.</p>\n' "$2" "$i"
	done
	printf '</div></body></html>\n'
}

# The crawl tests' site in DIR: three article pages, one in latin1 (served
# so with ?ct=...), and with LINKS an index.html that links them and a 404
# (what wget -r follows).
warc_site() {
	for p in harbour mountain forest; do
		warc_page "The $p page" "$p" >"$1/$p.html"
	done
	printf '<html><body><p>Caf\351 cr\350me br\373l\351e, served as latin1, with enough words to be an article here.</p></body></html>' >"$1/latin1.html"
	[ "${2:-}" = links ] || return 0
	cat >"$1/index.html" <<'HTML'
<html><head><title>Index</title></head><body>
<a href="harbour.html">harbour</a> <a href="mountain.html">mountain</a>
<a href="forest.html">forest</a>
<a href="latin1.html?ct=text/html%3Bcharset%3Diso-8859-1">latin1</a>
<a href="/__owt/status/404">gone</a>
</body></html>
HTML
}

# One record compressed alone by $warc_zip, the next number:
# warc_gz TYPE URI BLOCK [FIELD...]
warc_gz() {
	warc_n=$((warc_n + 1))
	warc_record "$@" | $warc_zip
}

warc_fixture() {
	warc_zip=${1:-gzip -n}
	warc_n=0
	wd=${TMPDIR:-/tmp}/warc-fixture.$$
	mkdir -p "$wd" || return 1
	printf 'software: owt t/warc.sh\r\nformat: WARC File Format 1.0\r\n' >"$wd/info"
	warc_gz warcinfo - "$wd/info" 'Content-Type: application/warc-fields'
	printf 'GET /a.html HTTP/1.1\r\nHost: example.test\r\n\r\n' >"$wd/req"
	warc_gz request http://example.test/a.html "$wd/req" \
	    'Content-Type: application/http; msgtype=request'
	warc_page 'Plain page' harbour >"$wd/a.html"
	http_block '200 OK' "$wd/a.html" 'Content-Type: text/html' >"$wd/b"
	warc_gz response '<http://example.test/a.html>' "$wd/b" \
	    'Content-Type: application/http; msgtype=response'
	# gzip content coding under chunked transfer coding
	warc_page 'Gzip chunked page' mountain | gzip -n >"$wd/g"
	{ printf '%x\r\n' 100; head -c 100 "$wd/g"; printf '\r\n'
	  printf '%x;ext=1\r\n' $(($(wc -c <"$wd/g") - 100)); tail -c +101 "$wd/g"
	  printf '\r\n0\r\nX-Trailer: 1\r\n\r\n'; } >"$wd/gc"
	http_block '200 OK' "$wd/gc" 'Content-Type: text/html; charset=utf-8' \
	    'Content-Encoding: gzip' 'Transfer-Encoding: chunked' >"$wd/b"
	warc_gz response http://example.test/gz.html "$wd/b" \
	    'Content-Type: application/http; msgtype=response'
	http_block '404 Not Found' "$wd/a.html" 'Content-Type: text/html' >"$wd/b"
	warc_gz response http://example.test/missing.html "$wd/b" \
	    'Content-Type: application/http; msgtype=response'
	printf '\211PNG\r\n\032\n' >"$wd/png"
	http_block '200 OK' "$wd/png" 'Content-Type: image/png' >"$wd/b"
	warc_gz response http://example.test/img.png "$wd/b" \
	    'Content-Type: application/http; msgtype=response'
	printf 'HTTP/1.1 200 OK\r\n\r\n' >"$wd/rv"
	warc_gz revisit http://example.test/a.html "$wd/rv" \
	    'Content-Type: application/http; msgtype=response' \
	    'WARC-Profile: http://netpreserve.org/warc/1.0/revisit/identical-payload-digest'
	printf 'outcome: ok\r\n' >"$wd/md"
	warc_gz metadata http://example.test/a.html "$wd/md" \
	    'Content-Type: application/warc-fields'
	warc_page 'Resource page' forest >"$wd/r.html"
	warc_gz resource http://example.test/r.html "$wd/r.html" \
	    'Content-Type: text/html'
	printf 'A converted page\nIts text, as Common Crawl WET files hold it: caf\303\251.\n' >"$wd/wet"
	warc_gz conversion http://example.test/wet.html "$wd/wet" \
	    'Content-Type: text/plain'
	# The archive's payload type wins over a wrong HTTP type.
	warc_page 'Identified page' valley >"$wd/i.html"
	http_block '200 OK' "$wd/i.html" 'Content-Type: application/octet-stream' >"$wd/b"
	warc_gz response http://example.test/id.html "$wd/b" \
	    'Content-Type: application/http; msgtype=response' \
	    'WARC-Identified-Payload-Type: text/html'
	# Common Crawl, August 2018: an extra CRLF before the payload.
	warc_page 'August 2018 page' river >"$wd/c.html"
	{ printf 'HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: %d\r\n\r\n\r\n' \
	    "$(wc -c <"$wd/c.html")"; cat "$wd/c.html"; } >"$wd/b"
	warc_gz response http://example.test/cc2018.html "$wd/b" \
	    'Content-Type: application/http; msgtype=response'
	# The charset of the HTTP header.
	printf '<html><head><title>Latin page</title></head><body><p>Caf\351 cr\350me br\373l\351e, served as latin1, with enough words to be an article of its own here.</p></body></html>' >"$wd/l.html"
	http_block '200 OK' "$wd/l.html" 'Content-Type: text/html; charset=iso-8859-1' >"$wd/b"
	warc_gz response http://example.test/latin1.html "$wd/b" \
	    'Content-Type: application/http; msgtype=response'
	# deflate content coding, raw (no zlib header), as some servers send it
	warc_page 'Deflate page' meadow >"$wd/d.html"
	gzip -n -c <"$wd/d.html" | tail -c +11 | head -c -8 >"$wd/dz"
	http_block '200 OK' "$wd/dz" 'Content-Type: text/html' \
	    'Content-Encoding: deflate' >"$wd/b"
	warc_gz response http://example.test/deflate.html "$wd/b" \
	    'Content-Type: application/http; msgtype=response'
	# br content coding (brotli(1) is needed to write the fixture only)
	warc_page 'Brotli page' island >"$wd/br.html"
	brotli -c <"$wd/br.html" >"$wd/brz" || return 1
	http_block '200 OK' "$wd/brz" 'Content-Type: text/html' \
	    'Content-Encoding: br' >"$wd/b"
	warc_gz response http://example.test/br.html "$wd/b" \
	    'Content-Type: application/http; msgtype=response'
	rm -rf "$wd"
}
