#!/bin/sh
# kill -9 during an owt-fetch --warc-file crawl of a slow loopback site,
# then --resume LOG: the .open file is cut back to its last whole item (a
# partial gzip member is added after the first kill, as a kill in the
# middle of a write leaves it), closed, and the crawl goes on in
# PREFIX-00001, killed again, then PREFIX-00002. In the end warcio reads
# every record of the three files and every digest verifies; every URL is
# archived exactly once; a resumed run requests none of the URLs the
# archive held (t/httpd's access log), the last one exactly the others;
# the log names no URL that the archive lacks, and the output holds every
# page archived. The CDX (--warc-cdx) loses the lines of what was cut
# off and names each page's record. A URL given in another form than
# the one fetched is found by the form given.
. "${OWT_SRC:-.}/t/lib.sh"
. "$OWT_SRC/t/httpd.sh"

cd "$T" || exit 3
mkdir www
httpd_start www
i=0
while [ $i -lt 40 ]; do
	echo "$B/__owt/slow/150/200?n=$i"
	i=$((i + 1))
done >urls
flags="-q --allow-private --ignore-robots --delay 0 --connections 2 --per-host 2 --warc-cdx"

# metadata URLs FILE...: the URL of each metadata record (input-url, else
# WARC-Target-URI), as read here with gzip and awk.
meta_urls() {
	for f in "$@"; do
		gzip -dc "$f" 2>/dev/null
	done | tr -d '\r' | awk '
		/^WARC\/1\.[01]$/ { if (t == "metadata") print u; t = ""; u = "" }
		/^WARC-Type: / { t = $2 }
		/^WARC-Target-URI: / && u == "" { u = $2 }
		/^input-url: / { u = $2 }
		END { if (t == "metadata") print u }'
}
# wait until FILE holds N metadata records, at most 30 s
await_meta() {
	w=0
	while [ "$(meta_urls "$1" | wc -l)" -lt "$2" ] && [ $w -lt 300 ]; do
		sleep 0.1
		w=$((w + 1))
	done
}
requested() {	# URLs of the access log's lines after line $1 (to line $2)
	sed -n "$(($1 + 1)),${2:-\$}p" "$T/req.log" | sed "s#^[^ ]* #$B#" | sort
}

owt-fetch $flags --warc-file site --log log urls >out1 2>err1 &
pid=$!
await_meta site.warc.gz.open 6
kill -9 $pid
wait $pid
is "$?" 137 "the first crawl is killed (SIGKILL)"
ok_file=no
[ -s site.warc.gz.open ] && [ ! -e site.warc.gz ] && ok_file=yes
is "$ok_file" yes "it left site.warc.gz.open"
# What a kill in the middle of a write leaves: a gzip member cut short.
head -c 150 site.warc.gz.open >part
cat part >>site.warc.gz.open
# And a kill between the archive's write and the log's: the log's last
# 3 lines lost, their URLs are in the archive only.
n=$(wc -l <log)
head -n $((n - 3)) log >l && mv l log
mark1=$(wc -l <"$T/req.log")
cp log log1

owt-fetch $flags --warc-file site --log log --resume log urls >out2 2>err2 &
pid=$!
w=0
while [ ! -e site-00001.warc.gz.open ] && [ $w -lt 300 ]; do
	sleep 0.1
	w=$((w + 1))
done
# The first file is recovered before the second is created.
held1=$(meta_urls site.warc.gz | sort)
await_meta site-00001.warc.gz.open 5
kill -9 $pid
wait $pid
is "$?" 137 "the second crawl (resumed) is killed"
mark2=$(wc -l <"$T/req.log")
cp log log2
ok_file=no
[ -s site.warc.gz ] && [ ! -e site.warc.gz.open ] && [ -e site-00001.warc.gz.open ] &&
    ok_file=yes
is "$ok_file" yes "the resumed crawl closed site.warc.gz and went on in site-00001"
is "$(gzip -dc site.warc.gz >/dev/null 2>&1; echo $?)" 0 \
    "the partial member is cut off: site.warc.gz is whole gzip"
n1=$(printf '%s\n' "$held1" | wc -l)
is "$([ "$n1" -ge 6 ] && echo yes)" yes "it keeps at least the 6 items seen before the kill"
requested "$mark1" "$mark2" >req2
printf '%s\n' "$held1" >held1
is "$(comm -12 req2 held1 | wc -l | tr -d ' ')" 0 \
    "the resumed crawl requests none of the URLs site.warc.gz holds"
is "$(sed 's/.*"url":"\([^"]*\)".*/\1/' log1 | sort | comm -23 - held1 | wc -l | tr -d ' ')" 0 \
    "the log names no URL that the archive lacks"

noidx=$(echo "$flags" | sed 's/ --warc-cdx//')
fails 2 "^owt-fetch: --resume: 'site.cdx' exists: give --warc-cdx to keep it whole \\(or remove it\\)$" \
    "--resume without --warc-cdx where the archive has a CDX" \
    owt-fetch $noidx --warc-file site --log log --resume log urls
run owt-fetch $flags --warc-file site --log log --resume log urls
is "$rc" 0 "the third crawl (resumed again) ends"
mv out out3
held2=$(meta_urls site.warc.gz site-00001.warc.gz | sort)
printf '%s\n' "$held2" >held2
requested "$mark2" >req3
sort urls | comm -23 - held2 >want3
same want3 req3 "it requests exactly the URLs the archive lacked, each once"
ls site* >files
printf '%s\n' site-00001.warc.gz site-00002.warc.gz site.cdx site.warc.gz >want
same want files "three files and the CDX, none left .open"
meta_urls site.warc.gz site-00001.warc.gz site-00002.warc.gz | sort >archived
sort urls >all
same all archived "every URL archived exactly once"
cat out1 out2 out3 | sed 's/^{"url":"\([^"]*\)".*/\1/' | sort -u >output
is "$(comm -23 archived output | wc -l | tr -d ' ')" 0 "the output has every page archived"
is "$(sed 's/.*"url":"\([^"]*\)".*/\1/' log | sort | uniq -d | wc -l | tr -d ' ')" 0 \
    "the log names no URL twice"

run owt-fetch --extract site.warc.gz site-00001.warc.gz site-00002.warc.gz
sed -n 's/^{"url":"\([^"]*\)".*"warc_record_id":"\([^"]*\)","warc_file":"\([^"]*\)","warc_offset":\([0-9]*\)}$/\1 \4 \3 \2/p' out |
    sort >ours.rec
awk 'NR > 1 && $5 == 200 { print $1, $9, $10, $11 }' site.cdx | sort >cdx.rec
is "$(wc -l <cdx.rec | tr -d ' ')" 40 "site.cdx: a line a page, those cut off gone"
same ours.rec cdx.rec "each line's offset, file and id are its response record's"

# What --resume says and does with what a kill can leave, on an empty URL list.
: >none
: >ylog
cp site-00002.warc.gz y.warc.gz.open
cat part >>y.warc.gz.open
run owt-fetch --allow-private --warc-file y --resume ylog none
is "$rc" 0 "a resume with nothing to fetch exits 0"
like err "^owt-fetch: --resume: 150 bytes of partial records cut from 'y' files$" \
    "and counts the bytes cut off"
same site-00002.warc.gz y.warc.gz "the cut file is what was whole"
ok_file=no
[ -s y-00001.warc.gz ] && [ ! -e y.warc.gz.open ] && ok_file=yes
is "$ok_file" yes "the run goes on in y-00001.warc.gz"
: >e.warc.gz.open
run owt-fetch -q --allow-private --warc-file e --resume ylog none
is "$rc" 0 "an empty .open file (killed before its first write)"
ls e.warc* >files
is "$(cat files)" "e.warc.gz" "is removed, and the run begins e.warc.gz again"
printf 'not an archive\n' >z.warc.gz.open
run owt-fetch -q --allow-private --warc-file z --resume ylog none
is "$rc" 1 "a .open file that is not gzip exits 1"
like err "^owt-fetch: z\.warc\.gz\.open:0: not a WARC file of owt-fetch: remove it, or give another prefix$" \
    "and names it"
is "$(cat z.warc.gz.open)" "not an archive" "and leaves it"
printf 'a gzip file, not a WARC\n' | gzip >z2.warc.gz.open
run owt-fetch -q --allow-private --warc-file z2 --resume ylog none
is "$rc" 1 "nor one whose first member is whole but not a record"

# A URL fetched in another form (its fragment dropped): the metadata
# record keeps it as given, and --resume finds it by that name.
printf '%s\n' "$B/__owt/slow/1/200?n=frag#part" >fragurl
run owt-fetch -q --allow-private --ignore-robots --delay 0 --warc-file f fragurl
is "$(gzip -dc f.warc.gz | tr -d '\r' | grep -c -F -x "input-url: $B/__owt/slow/1/200?n=frag#part")" 1 \
    "the metadata record has input-url, the URL as given"
mv f.warc.gz f.warc.gz.open
: >flog
m=$(wc -l <"$T/req.log")
run owt-fetch -q --allow-private --ignore-robots --delay 0 --warc-file f \
    --resume flog fragurl
is "$rc" 0 "a resume of it exits 0"
is "$(sed -n "$((m + 1)),\$p" "$T/req.log" | wc -l | tr -d ' ')" 0 \
    "and does not fetch it again"

# warcio, from the registry (t/warcio/package-lock.json); skipped offline.
if npm_pinned warcio warcio check.mjs; then
	warcio=$OWT_BUILD/t/npm-warcio
	: >all.chk
	bad=0
	for f in site.warc.gz site-00001.warc.gz site-00002.warc.gz; do
		node "$warcio/check.mjs" "$f" >>all.chk || bad=1
	done
	is "$bad" 0 "warcio reads every record of the three files"
	grep -v '^records' all.chk >recs
	is "$(grep -c ' block=ok ' recs)" "$(wc -l <recs | tr -d ' ')" \
	    "every WARC-Block-Digest verifies"
	is "$(grep -c ' payload=ok ' recs)" 40 "every page's WARC-Payload-Digest verifies"
	unlike recs ' (block|payload|pair)=bad' "no digest or pairing is wrong"
	is "$(grep -c '^warcinfo' recs)" 3 "a warcinfo record a file"
else
	skip "warcio: $npm_why"
fi
done_testing
