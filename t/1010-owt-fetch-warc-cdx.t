#!/bin/sh
# owt-fetch --warc-cdx and --warc-max-size: Debian's wget 1.21 and
# owt-fetch crawl the same loopback URLs with --warc-cdx; the header line
# is wget's, and each response's URL, MIME type, status, payload digest
# (of the pages) and Location are the fields wget writes. Each line's
# offset, file and record id name the response record there (owt-fetch
# --extract gives them back). --warc-max-size rotates into PREFIX-NNNNN
# files, each with its warcinfo record first, an item's records never
# split, none lost.
. "${OWT_SRC:-.}/t/lib.sh"
. "$OWT_SRC/t/httpd.sh"
. "$OWT_SRC/t/warc.sh"

cd "$T" || exit 3
mkdir www
for p in harbour mountain forest lake river; do
	warc_page "The $p page" "$p" >"www/$p.html"
done
httpd_start www
printf '%s\n' "$B/harbour.html" "$B/__owt/redirect?to=/mountain.html" \
    "$B/forest.html" "$B/lake.html?ct=text/html%3Bcharset%3Diso-8859-1" \
    "$B/river.html" "$B/__owt/status/404" >urls

flags="--allow-private --ignore-robots --delay 0 --ordered"
run owt-fetch $flags --warc-file site --warc-cdx urls
is "$rc" 0 "a crawl with --warc-cdx exits 0"
mv out crawl.jsonl
is "$(head -n 1 site.cdx)" " CDX a b a m s k r M V g u" "wget's CDX header line"
is "$(sed 1d site.cdx | wc -l | tr -d ' ')" 7 "a line a response: 6 URLs, a redirect hop"
like site.cdx '^http://127\.0\.0\.1:[0-9]+/harbour\.html 20[0-9]{12} http://127\.0\.0\.1:[0-9]+/harbour\.html text/html 200 [A-Z2-7]{32} - - [0-9]+ site\.warc\.gz <urn:uuid:[0-9a-f-]{36}>$' \
    "a page's line: a b a m s k r M V g u"
like site.cdx '/__owt/redirect\?to=/mountain\.html 20[0-9]{12} .* text/html 302 - /mountain\.html - [0-9]+ site\.warc\.gz ' \
    "a redirect hop: its status and Location as received"

# The response at each 200 line's offset, as --extract reads it.
run owt-fetch --extract site.warc.gz
is "$rc" 0 "--extract reads the archive"
sed -n 's/^{"url":"\([^"]*\)".*"warc_record_id":"\([^"]*\)","warc_file":"\([^"]*\)","warc_offset":\([0-9]*\)}$/\1 \4 \3 \2/p' out |
    sort >ours.rec
awk 'NR > 1 && $5 == 200 { print $1, $9, $10, $11 }' site.cdx | sort >cdx.rec
is "$(wc -l <cdx.rec | tr -d ' ')" 5 "5 pages in the CDX"
same cdx.rec ours.rec "each line's offset, file and id are its response record's"

if command -v wget >/dev/null; then
	mkdir w
	(cd w && wget -q -i ../urls --warc-file=site --warc-cdx >/dev/null 2>&1)
	# a m s r of every line, and k of the pages (owt-fetch gives no
	# payload digest where it did not read the body: a 302, a 404)
	fields() {
		awk 'NR > 1 { print $1, $4, $5, ($5 == 200 ? $6 : "x"), $7, $8 }' "$1" | sort
	}
	fields w/site.cdx >wget.f
	fields site.cdx >ours.f
	is "$(wc -l <wget.f | tr -d ' ')" 7 "wget indexes the same 7 responses"
	same wget.f ours.f "URL, MIME type, status, payload digest, Location as wget's"
	is "$(head -n 1 w/site.cdx)" "$(head -n 1 site.cdx)" "the same header line"
else
	skip "no wget"
fi

run owt-fetch $flags --warc-file x --warc-max-size 1000 urls
is "$rc" 2 "--warc-max-size under 1024 is a usage error"
run owt-fetch $flags --warc-cdx urls
is "$rc" 2 "--warc-cdx without --warc-file is a usage error"
like err '^owt-fetch: --warc-cdx needs --warc-file$' "and says so"

# Rotation: every item is bigger than 1 KB, so a file an item.
run owt-fetch $flags --warc-file rot --warc-max-size 1024 --warc-cdx urls
is "$rc" 0 "a crawl with --warc-max-size exits 0"
ls rot* >files
printf '%s\n' rot-00000.warc.gz rot-00001.warc.gz rot-00002.warc.gz \
    rot-00003.warc.gz rot-00004.warc.gz rot-00005.warc.gz rot.cdx >want
same want files "6 files, numbered from 00000, no .open left"

for f in rot-0000?.warc.gz; do
	gzip -dc "$f" | sed -n 2p | tr -d '\r'
done | sort | uniq -c | sed 's/^ *//' >types
is "$(cat types)" "6 WARC-Type: warcinfo" "each file starts with its warcinfo record"
is "$(gzip -dc rot-00000.warc.gz | grep -c '^WARC-Filename: rot-00000.warc.gz')" 1 \
    "which names its file"
big=yes
for f in rot-00000.warc.gz rot-00001.warc.gz rot-00002.warc.gz rot-00003.warc.gz rot-00004.warc.gz; do
	[ "$(wc -c <"$f")" -ge 1024 ] || big=no
done
is "$big" yes "a file ends once it has passed 1024 bytes"
is "$(gzip -dc rot-00001.warc.gz | grep -c '^WARC-Type: ')" 6 \
    "a redirect's item stays in one file: warcinfo, 2 requests, 2 responses, metadata"
run owt-fetch --extract rot-0000?.warc.gz
tt() {
	sed -E 's/^\{"url":"[^"]*","title":("([^"\\]|\\.)*"),"text":("([^"\\]|\\.)*").*/\1 \3/' "$1" | sort
}
tt crawl.jsonl >want
tt out >got
same want got "the files together give the crawl's pages"
sed -n 's/^{"url":"\([^"]*\)".*"warc_record_id":"\([^"]*\)","warc_file":"\([^"]*\)","warc_offset":\([0-9]*\)}$/\1 \4 \3 \2/p' out |
    sort >ours.rec
awk 'NR > 1 && $5 == 200 { print $1, $9, $10, $11 }' rot.cdx | sort >cdx.rec
same cdx.rec ours.rec "the CDX names each page's file and offset"

# As if killed while writing the last file: --resume recovers the
# numbered .open file (a partial member cut), reads the closed ones,
# fetches nothing again and goes on in rot-00006.
cp rot-00005.warc.gz whole5
cp rot.cdx cdx.before
mv rot-00005.warc.gz rot-00005.warc.gz.open
head -c 100 rot-00000.warc.gz >>rot-00005.warc.gz.open
: >empty.log
m=$(wc -l <"$T/req.log")
run owt-fetch $flags --warc-file rot --warc-max-size 1024 --warc-cdx \
    --resume empty.log urls
is "$rc" 0 "a resumed rotating crawl exits 0"
like err "^owt-fetch: --resume: 100 bytes of partial records cut from 'rot' files$" \
    "the partial member is cut off"
same whole5 rot-00005.warc.gz "rot-00005 is whole again, closed"
is "$(sed -n "$((m + 1)),\$p" "$T/req.log" | grep -c -v robots.txt)" 0 \
    "no URL is fetched again: the archive holds them all"
ok_file=no
[ -s rot-00006.warc.gz ] && [ ! -e rot-00006.warc.gz.open ] && ok_file=yes
is "$ok_file" yes "the run went on in rot-00006.warc.gz"
sort cdx.before >want
sort rot.cdx >got
same want got "the CDX: rot-00005's lines rewritten, the same"
done_testing
