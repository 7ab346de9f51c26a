#!/bin/sh
# owt-fetch --ordered against t/httpd, whose pages answer after different
# delays: records and log lines in input order whatever order the pages
# finish in; a slow URL holding the window stops the reading (the URLs
# past the window are never requested when a signal comes meanwhile); a
# signal cuts the output at the first URL not started, and --resume goes
# on from there in order; a bad line without -k abandons the transfers
# (with --ordered, after the URLs before it).
. "${OWT_SRC:-.}/t/lib.sh"
. "$OWT_SRC/t/httpd.sh"

cd "$T" || exit 3
mkdir www
httpd_start www
F="--allow-private --ignore-robots --delay 0"

# The "url" of each line of a record or log file.
urls() {
	sed 's/^{"url":"\([^"]*\)".*/\1/' "$1"
}

# Input order against finishing order: the first URL answers last, the
# fast pages first; a 404, a filtered URL and a redirect between them.
cat >urls.txt <<URLS
$B/__owt/slow/900/200?n=0
$B/__owt/page/p1
$B/__owt/slow/600/200?n=2
$B/__owt/page/p3
$B/__owt/slow/300/404?n=4
$B/photo.jpg
$B/__owt/slow/450/200?n=6
$B/__owt/redirect?to=/__owt/page/p7
$B/__owt/page/p8
$B/__owt/slow/150/200?n=9
URLS
# (the 404 and the jpg by their paths: the port may hold the digits 404)
grep -v -e '/404?n=' -e 'photo\.jpg' urls.txt >want.out
run owt-fetch $F --ordered --connections 16 --per-host 16 --workers 2 \
    --log log.jsonl urls.txt
is "$rc" 0 "ordered: exit 0"
urls "$T/out" >got
same got want.out "ordered: records in input order"
urls log.jsonl >got
same got urls.txt "ordered: log lines in input order, every outcome"
sed 's/.*"outcome":"\([a-z]*\)".*/\1/' log.jsonl | tr '\n' ' ' >got
is "$(cat got)" "ok ok ok ok http filtered ok ok ok ok " "ordered: outcomes"
run owt-fetch $F --ordered --connections 16 --per-host 16 --workers 0 urls.txt
urls "$T/out" >got
same got want.out "ordered, extraction inline: records in input order"

# Two input files, the first with a bad line, -k: the order runs across
# the files, and the warning comes in its place.
printf '%s\n{"url":\n%s\n' "$B/__owt/slow/400/200?f=0" "$B/__owt/page/f1" >a.jsonl
printf '%s\n' "$B/__owt/page/f2" >b.txt
run owt-fetch $F --ordered -k -q --connections 8 --per-host 8 a.jsonl b.txt
is "$rc" 1 "ordered -k, bad line: exit 1"
printf '%s\n' "$B/__owt/slow/400/200?f=0" "$B/__owt/page/f1" "$B/__owt/page/f2" >want
urls "$T/out" >got
same got want "ordered: records in the order of the files given"
like "$T/err" "a.jsonl:2: invalid JSON" "ordered: the bad line is warned"

# The owt-fetch just started in the background: once the request log has
# its slow URL and then ERE $1, SIGTERM; it dies of it ($2: the case).
term_after() {
	pid=$!
	await req.log 'slow/4000'
	await req.log "$1"
	kill -TERM $pid
	wait $pid 2>/dev/null
	is "$?" 143 "$2: dies of SIGTERM"
}

# A window of 2 held by a slow URL: the next URL is fetched, the ones past
# the window are not read until the slow one ends. SIGTERM meanwhile: they
# are never requested, and what was read is written in order.
: >req.log
printf '%s\n' "$B/__owt/slow/4000/200?w=0" "$B/__owt/page/w1" \
    "$B/__owt/page/w2" "$B/__owt/page/w3" >w.txt
owt-fetch $F --ordered --window 2 --connections 2 --per-host 2 \
    --log wlog.jsonl w.txt >wout 2>werr &
term_after 'page/w1' "window held"
head -2 w.txt >want
urls wout >got
same got want "window held: the two URLs read, in order"
urls wlog.jsonl >got
same got want "window held: logged in order"
is "$(grep -c -e w2 -e w3 req.log)" 0 "window held: the URLs past it never requested"

# A signal with a URL queued (not started) before one fetched: the output
# stops before the queued one, and --resume fetches the rest in order.
: >req.log
R="--resolve a.test:$port:127.0.0.1 --resolve b.test:$port:127.0.0.1"
printf '%s\n' "http://a.test:$port/__owt/slow/4000/200?c=0" \
    "http://a.test:$port/__owt/page/c1" "http://b.test:$port/__owt/page/c2" >c.txt
owt-fetch $F $R --ordered --per-host 1 --log clog.jsonl c.txt >cout 2>cerr &
term_after 'page/c2' "cut"
head -1 c.txt >want
urls cout >got
same got want "cut: only the record before the URL not started"
urls clog.jsonl >got
same got want "cut: only its log line"
like cerr "; 1 not started \(interrupted\); 1 fetched after those, not written$" \
    "cut: the summary counts the URLs not written"
run owt-fetch $F $R --ordered --per-host 1 --resume clog.jsonl \
    --log clog.jsonl c.txt
is "$rc" 0 "cut, resumed: exit 0"
cat "$T/out" >>cout
urls cout >got
same got c.txt "cut, resumed: the output of both runs in input order"
urls clog.jsonl >got
same got c.txt "cut, resumed: the log of both runs in input order"

# A bad line without -k while a slow transfer is in flight ends the run:
# the transfer is neither written nor logged. With --ordered
# the bad line's turn comes after the URLs before it: they are written.
printf '%s\n' "$B/__owt/slow/3000/200?k=0" "$B/__owt/page/k1" '{"url":' >k.txt
run owt-fetch $F --log klog.jsonl k.txt
is "$rc" 1 "bad line, no -k: exit 1"
like "$T/err" "^owt-fetch: k.txt:3: invalid JSON" "bad line, no -k: the message"
is "$(cat klog.jsonl "$T/out" | grep -c 'slow/3000')" 0 \
    "bad line, no -k: the slow URL abandoned"
run owt-fetch $F --ordered --log klog.jsonl k.txt
is "$rc" 1 "bad line, no -k, ordered: exit 1"
like "$T/err" "^owt-fetch: k.txt:3: invalid JSON" \
    "bad line, no -k, ordered: the message"
head -2 k.txt >want
urls "$T/out" >got
same got want "bad line, no -k, ordered: the URLs before it written, in order"
urls klog.jsonl >got
same got want "bad line, no -k, ordered: and logged"

run owt-fetch --window 0 urls.txt
is "$rc" 2 "--window 0: exit 2"
is "$(cat "$T/err")" "owt-fetch: --window: '0' is out of range 1..16777216" \
    "--window 0: message"

# One slow transfer does not hold back what is done: the page finished
# beside it is written (output, then its log line) while the slow one
# still runs, within a second or so, not when the slow one ends.
: >req.log
printf '%s\n' "$B/__owt/slow/20000/200?t=0" "$B/__owt/page/t1" >t.txt
owt-fetch $F --connections 2 --log tlog.jsonl t.txt >tout 2>terr &
pid=$!
# At most 15 s: the slow one ends after 20.
await tlog.jsonl 'page/t1' 15
urls tout >got
printf '%s\n' "$B/__owt/page/t1" >want
same got want "a slow transfer in flight: the page done beside it is written"
urls tlog.jsonl >got
same got want "a slow transfer in flight: and logged, after its record"
kill -TERM $pid
wait $pid 2>/dev/null

done_testing
