#!/bin/sh
# owt-fetch --extract on WARC archives: t/data/owt-small.warc.gz (made by
# t/warc.sh) plain, gzipped per record or whole, zstd per record, whole,
# --long=31 and with an IIPC dictionary; the records' fields and offsets,
# the same texts as the pages saved as files, --shard by record, files
# named on standard input, and every hostile archive with its exit status
# and message.
. "${OWT_SRC:-.}/t/lib.sh"
. "$OWT_SRC/t/warc.sh"

cd "$T" || exit 3
fix=$OWT_SRC/t/data/owt-small.warc.gz
cp "$fix" s.warc.gz

if command -v brotli >/dev/null; then
	warc_fixture >regen.warc.gz
	same "$fix" regen.warc.gz "t/warc.sh writes the committed fixture"
else
	skip "no brotli(1) to write the fixture again"
fi

# title and text of each record, as one line
texts() {
	sed -E 's/^\{"url":("[^"]*"),"title":("([^"\\]|\\.)*"),"text":("([^"\\]|\\.)*").*/\1 \2 \4/' "$1"
}

run owt-fetch --extract s.warc.gz
is "$rc" 0 "a WARC operand exits 0"
is "$(wc -l <out | tr -d ' ')" 9 "9 records with text"
cat >want <<'EOF'
owt-fetch: http://example.test/missing.html: http: HTTP 404
owt-fetch: http://example.test/img.png: not-html: content type image/png
owt-fetch: outcomes: 9 ok, 1 http, 1 not-html
owt-fetch: WARC records skipped: 1 warcinfo, 1 request, 1 metadata, 1 revisit
EOF
grep -v ' URLs in ' err >got
same want got "404 and image records are outcomes; the other types are counted"
cut -d' ' -f1 out >/dev/null
sed -n 's/^{"url":"\([^"]*\)".*/\1/p' out >urls
cat >want <<'EOF'
http://example.test/a.html
http://example.test/gz.html
http://example.test/r.html
http://example.test/wet.html
http://example.test/id.html
http://example.test/cc2018.html
http://example.test/latin1.html
http://example.test/deflate.html
http://example.test/br.html
EOF
same want urls "records in archive order, WARC 1.0's <uri> unbracketed"
like out '^\{"url":"http://example.test/a.html","title":"Plain page",.*,"charset":"UTF-8","bytes":885,"http_status":200,"fetched_at":"2026-12-01T10:00:03Z","warc_record_id":"<urn:uuid:00000000-0000-4000-8000-000000000003>","warc_file":"s.warc.gz","warc_offset":411\}$' \
    "a response's record: status, WARC-Date, record id, file, offset"
like out '^\{"url":"http://example.test/wet.html","title":"","text":"A converted page\\nIts text, as Common Crawl WET files hold it: café.\\n","charset":"UTF-8","bytes":69,"fetched_at":"2026-12-01T10:00:10Z",' \
    "a WET conversion record's text passes through"
like out '"url":"http://example.test/gz.html","title":"Gzip chunked page",.*"bytes":898,' \
    "chunked and gzip are undone"
like out '"url":"http://example.test/cc2018.html",.*"bytes":879,' \
    "August 2018's extra CRLF is not part of the page"
like out '"text":"Café crème brûlée, served as latin1,.*"charset":"WINDOWS-1252"' \
    "the charset of the record's HTTP header"

# The same pages as saved files: the same titles and texts.
mkdir pages
warc_page 'Plain page' harbour >pages/a.html
warc_page 'Gzip chunked page' mountain >pages/gz.html
warc_page 'Resource page' forest >pages/r.html
warc_page 'Identified page' valley >pages/id.html
warc_page 'August 2018 page' river >pages/cc2018.html
warc_page 'Deflate page' meadow >pages/deflate.html
warc_page 'Brotli page' island >pages/br.html
for p in a gz r id cc2018 deflate br; do
	echo "pages/$p.html"
done >list
run owt-fetch -q --extract list
texts out | sed 's/^"pages\/\([^"]*\)"/"http:\/\/example.test\/\1"/' >want
texts "$T/out" >/dev/null
run owt-fetch -q --extract s.warc.gz
texts out | grep -v -e wet.html -e latin1.html >got
same want got "each page's title and text as from the saved file"

# Every record at its offset: the gzip member that starts with it.
sed -n 's/.*"warc_record_id":"\([^"]*\)".*"warc_offset":\([0-9]*\)}$/\2 \1/p' out >offs
n=0
while read -r off id; do
	tail -c +$((off + 1)) s.warc.gz | gzip -dc 2>/dev/null | head -c 400 |
	    grep -q "^WARC-Record-ID: $id" && n=$((n + 1))
done <offs
is "$n" 9 "warc_offset is the file offset of each record's gzip member"

# Other compressions: the same records.
texts out >want
zcat s.warc.gz >s.warc
gzip -n <s.warc >whole.warc.gz
warc_fixture 'zstd -q' >rec.warc.zst
zstd -q <s.warc >whole.warc.zst
zstd -q --long=31 <s.warc >long.warc.zst
for f in s.warc whole.warc.gz rec.warc.zst whole.warc.zst long.warc.zst; do
	run owt-fetch -q --extract "$f"
	texts out >got
	is "$rc" 0 "$f: exit 0"
	same want got "$f: the same titles and texts"
done
run owt-fetch -q --extract s.warc
like out '"url":"http://example.test/a.html",.*"warc_offset":541\}$' \
    "plain: the offset in the file"
sed -n 's/.*"warc_offset":\([0-9]*\)}$/\1/p' out >plain.offs
run owt-fetch -q --extract whole.warc.gz
sed -n 's/.*"warc_offset":\([0-9]*\)}$/\1/p' out >whole.offs
same plain.offs whole.offs "gzipped whole: the offsets in the decompressed data"
run owt-fetch -q --extract rec.warc.zst
sed -n 's/.*"warc_record_id":"\([^"]*\)".*"warc_offset":\([0-9]*\)}$/\2 \1/p' out >offs
n=0
while read -r off id; do
	tail -c +$((off + 1)) rec.warc.zst | zstd -dc 2>/dev/null | head -c 400 |
	    grep -q "^WARC-Record-ID: $id" && n=$((n + 1))
done <offs
is "$n" 9 "zstd per record: warc_offset is each record's frame"

# IIPC warc-zstd: a dictionary in a skippable frame, then frames that use it.
warc_page 'Plain page' harbour >dict
warc_fixture "zstd -q -D dict" >frames
size=$(wc -c <dict)
{ printf '\135\052\115\030'
  printf "\\$(printf %o $((size & 255)))\\$(printf %o $((size >> 8 & 255)))\\$(printf %o $((size >> 16 & 255)))\\000"
  cat dict frames; } >dict.warc.zst
run owt-fetch -q --extract dict.warc.zst
texts out >got
is "$rc" 0 "a dictionary-prefixed warc-zstd file exits 0"
same want got "and gives the same records"

# A file named on standard input; a JSON line's file too.
printf 'whole.warc.gz\n{"file":"s.warc"}\n' >names
run owt-fetch -q --extract names
is "$(wc -l <out | tr -d ' ')" 18 "archives named by lines: all their records"
like out '"warc_file":"whole.warc.gz"' "warc_file names the archive"

# --shard: an operand's records count as lines (15 records, then 15).
run owt-fetch -q --extract --shard 0/2 s.warc.gz s.warc
sed -n 's/^{"url":"\([^"]*\)".*"warc_offset":\([0-9]*\)}$/\1/p' out >got
cat >want <<'EOF'
http://example.test/a.html
http://example.test/r.html
http://example.test/id.html
http://example.test/latin1.html
http://example.test/br.html
http://example.test/gz.html
http://example.test/wet.html
http://example.test/cc2018.html
http://example.test/deflate.html
EOF
same want got "--shard 0/2 takes records 0, 2, 4, ... of the operands in turn"

# --max-bytes: a page over it is too-large; a block over it is not read.
warc_page 'Big page' harbour >big.html
cat big.html big.html >big2.html
http_block '200 OK' big2.html 'Content-Type: text/html' >big.http
{ warc_record resource http://x.test/r big2.html 'Content-Type: text/html'
  warc_record response http://x.test/p big.http 'Content-Type: application/http'
  warc_record resource http://x.test/small big.html 'Content-Type: text/html'
} >big.warc
run owt-fetch --extract --max-bytes 1K big.warc
like err '^owt-fetch: http://x.test/r: too-large: record over 1024 bytes$' \
    "a block over --max-bytes is too-large"
like err '^owt-fetch: http://x.test/p: too-large: body over 1024 bytes$' \
    "a payload over --max-bytes is too-large"
like err '^owt-fetch: outcomes: 1 ok, 2 too-large$' "and counted"

# ---- hostile archives ----
# A truncated gzip member: the records before it, then FILE:OFFSET.
head -c 1700 s.warc.gz >cut.warc.gz
fails 1 '^owt-fetch: cut.warc.gz:1327: truncated gzip data$' \
    "a truncated gzip member: exit 1, FILE:OFFSET" owt-fetch -q --extract cut.warc.gz
run owt-fetch -k --extract cut.warc.gz s.warc.gz
is "$rc" 1 "-k: still exit 1"
is "$(wc -l <out | tr -d ' ')" 11 "-k: the records before the cut, and the next archive"
like err '^owt-fetch: 1 WARC files cut short at a bad record$' "-k: the cut archive is counted"
like err '^owt-fetch: WARC records skipped: 2 warcinfo, 2 request, 1 metadata, 1 revisit$' \
    "-k: the records read before the cut are counted"

# A corrupt gzip member.
{ head -c 600 s.warc.gz; printf 'garbagegarbage'; tail -c +615 s.warc.gz; } >bad.warc.gz
fails 1 '^owt-fetch: bad.warc.gz:411: corrupt gzip data: ' \
    "a corrupt gzip member: exit 1" owt-fetch -q --extract bad.warc.gz

# A wrong Content-Length, short and long.
printf '<p>x</p>' >blk
warc_record resource http://x.test/ blk 'Content-Type: text/html' |
    sed 's/^Content-Length: 8/Content-Length: 6/' >short.warc
fails 1 '^owt-fetch: short.warc:0: no CRLF CRLF after the block \(a wrong Content-Length\?\)$' \
    "a Content-Length too short" owt-fetch -q --extract short.warc
{ warc_record resource http://x.test/ blk 'Content-Type: text/html' |
    sed 's/^Content-Length: 8/Content-Length: 11/'; cat s.warc; } >long.warc
fails 1 '^owt-fetch: long.warc:0: no CRLF CRLF after the block \(a wrong Content-Length\?\)$' \
    "a Content-Length too long" owt-fetch -q --extract long.warc
warc_record resource http://x.test/ blk 'Content-Type: text/html' | head -c -6 >trunc.warc
fails 1 '^owt-fetch: trunc.warc:0: truncated record: 2 bytes of the block missing$' \
    "a record cut in its block" owt-fetch -q --extract trunc.warc

# Not WARC after a record; a header without Content-Length.
{ cat s.warc; printf 'HTTP/1.1 200 OK\r\n\r\n'; } >tail.warc
fails 1 "^owt-fetch: tail.warc:$(wc -c <s.warc | tr -d ' '): no WARC record here\$" \
    "bytes that are not a record after the last" owt-fetch -q --extract tail.warc
printf 'WARC/1.0\r\nWARC-Type: resource\r\n\r\n' >nolen.warc
fails 1 '^owt-fetch: nolen.warc:0: WARC header without Content-Length$' \
    "a header without Content-Length" owt-fetch -q --extract nolen.warc

# An endless header line: refused at 64 KB, not read into memory.
{ printf 'WARC/1.0\r\nWARC-Type: resource\r\nX-Long: '; head -c 3000000 /dev/zero | tr '\0' a; } | gzip >endless.warc.gz
fails 1 '^owt-fetch: endless.warc.gz:0: WARC header longer than 65536 bytes$' \
    "an endless header line" owt-fetch -q --extract endless.warc.gz

# A record that declares 1 GiB: read through, not kept; here it is cut.
{ printf 'WARC/1.0\r\nWARC-Type: resource\r\nWARC-Target-URI: http://x.test/\r\nContent-Type: text/html\r\nContent-Length: 1073741824\r\n\r\n'
  head -c 100000 /dev/zero; } >huge.warc
fails 1 '^owt-fetch: huge.warc:0: truncated record: 1073641824 bytes of the block missing$' \
    "a record declaring 1 GiB, cut: truncated" owt-fetch -q --extract huge.warc
# A payload that inflates to 1 GiB: decoding stops at --max-bytes.
head -c 1073741824 /dev/zero | gzip -1 >bomb.gz
http_block '200 OK' bomb.gz 'Content-Type: text/html' 'Content-Encoding: gzip' >bomb.http
warc_record response http://x.test/bomb bomb.http \
    'Content-Type: application/http; msgtype=response' >bomb.warc
run /usr/bin/time -f '%M' owt-fetch --extract bomb.warc
is "$rc" 0 "a gzip bomb in a record exits 0"
like err '^owt-fetch: http://x.test/bomb: too-large: body over 10485760 bytes$' \
    "and is too-large at --max-bytes"
is "$(tail -n 1 err | awk '$1 < 100000 { print "small" }')" small \
    "in less than 100 MB of memory"

# A non-WARC file is read as a list of saved pages, as before.
printf 'WARX/1.0\n' >notwarc.txt
fails 1 "^owt-fetch: cannot open 'WARX/1.0'" "a file that is not WARC is a list of pages" \
    owt-fetch -q --extract notwarc.txt

done_testing
