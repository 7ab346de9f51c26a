#!/bin/sh
# owt-fetch --filter-only: every drop reason with its count, URL lines and
# JSONL records kept byte for byte, --blacklist, --shard, --log, and the
# bad-input paths with their exit status and message.
. "${OWT_SRC:-.}/t/lib.sh"

cd "$T" || exit 3
cat >urls.txt <<'IN'
http://example.com/story
  https://news.example.co.uk/a/b?c=d  

http://x
http://example.com/story
ftp://example.com/file.html
http://www.youtube.com/watch?v=1
http://maps.google.co.uk/maps
http://someone.github.io/post
http://example.com/archive.7z
http://example.com/logo.ai
http://example.com/photo.JPG?size=2
not a url at all
http://example.com:99999/
http://blocked.example.org/page
IN
printf '{"url":"http://example.net/x","id":7}\n{"id":8,"url":"http://imgur.com/a"}\n' >recs.jsonl
printf '# mine\nblocked.example.org\n' >bl.txt

run owt-fetch --filter-only --blacklist bl.txt --log log.jsonl urls.txt recs.jsonl
is "$rc" 0 "--filter-only exits 0"
cat >want <<'OUT'
http://example.com/story
https://news.example.co.uk/a/b?c=d
http://someone.github.io/post
{"url":"http://example.net/x","id":7}
OUT
same want out "kept URLs trimmed, in input order; records byte for byte"
cat >want <<'OUT'
{"url":"http://x","outcome":"filtered","http_status":0,"error":"short","bytes":0,"ms":0}
{"url":"http://example.com/story","outcome":"filtered","http_status":0,"error":"repeat","bytes":0,"ms":0}
{"url":"ftp://example.com/file.html","outcome":"filtered","http_status":0,"error":"scheme","bytes":0,"ms":0}
{"url":"http://www.youtube.com/watch?v=1","outcome":"filtered","http_status":0,"error":"domain","bytes":0,"ms":0}
{"url":"http://maps.google.co.uk/maps","outcome":"filtered","http_status":0,"error":"domain","bytes":0,"ms":0}
{"url":"http://example.com/archive.7z","outcome":"filtered","http_status":0,"error":"extension","bytes":0,"ms":0}
{"url":"http://example.com/logo.ai","outcome":"filtered","http_status":0,"error":"extension","bytes":0,"ms":0}
{"url":"http://example.com/photo.JPG?size=2","outcome":"filtered","http_status":0,"error":"extension","bytes":0,"ms":0}
{"url":"not a url at all","outcome":"filtered","http_status":0,"error":"malformed","bytes":0,"ms":0}
{"url":"http://example.com:99999/","outcome":"filtered","http_status":0,"error":"malformed","bytes":0,"ms":0}
{"url":"http://blocked.example.org/page","outcome":"filtered","http_status":0,"error":"domain","bytes":0,"ms":0}
{"url":"http://imgur.com/a","outcome":"filtered","http_status":0,"error":"domain","bytes":0,"ms":0}
OUT
same want log.jsonl "--log has every dropped URL once, with its reason"
like err '^owt-fetch: 16 URLs in ' "the summary counts every URL"
like err '^owt-fetch: outcomes: 4 ok, 12 filtered$' "the summary counts kept and filtered"
like err '^owt-fetch: filtered: 1 short, 2 malformed, 1 scheme, 4 domain, 3 extension, 1 repeat$' \
    "the summary counts each reason"

# Repeats are compared in normal form (what is fetched): scheme and host
# lower-cased, no default port, no fragment, "/" for an empty path, an IDN
# host in punycode. Kept lines are written as given. Hosts may have '_'.
{
	printf 'http://example.com/story\nHTTP://EXAMPLE.com/story\n'
	printf 'http://example.com/story#frag\nhttp://example.com:80/story\n'
	printf 'http://Example.com:8080/story\nhttps://example.com\n'
	printf 'https://example.com:443/\nhttps://example.com/#top\n'
	printf 'http://my_blog.example.com/post\nhttp://bad_host.example.net/x\n'
	printf 'http://b\303\274cher.example/page\nhttp://xn--bcher-kva.example/page\n'
	printf 'http://B\303\234CHER.example/page\nhttp://b\374cher.example/page\n'
	printf 'http://bad\342\200\256name.example/page\n'
} >norm.txt
printf 'bad_host.example.net\n' >bl2.txt
run owt-fetch --filter-only --blacklist bl2.txt --log norm.jsonl norm.txt
is "$rc" 0 "--filter-only on URLs that differ in form only exits 0"
{
	printf 'http://example.com/story\nhttp://Example.com:8080/story\n'
	printf 'https://example.com\nhttp://my_blog.example.com/post\n'
	printf 'http://b\303\274cher.example/page\n'
} >want
same want out "one URL of each normal form is kept, as given"
like err '^owt-fetch: filtered: 2 malformed, 1 domain, 7 repeat$' \
    "case, default port, fragment, empty path and punycode make repeats"
for u in 'HTTP://EXAMPLE.com/story' 'http://example.com/story#frag' \
    'http://example.com:80/story' 'https://example.com:443/' \
    'https://example.com/#top' 'http://xn--bcher-kva.example/page' \
    'http://BÜCHER.example/page'; do
	like norm.jsonl "^\\{\"url\":\"$u\",\"outcome\":\"filtered\",\"http_status\":0,\"error\":\"repeat\"" \
	    "$u is a repeat, logged as given"
done
like norm.jsonl '^\{"url":"http://bad_host.example.net/x","outcome":"filtered","http_status":0,"error":"domain"' \
    "a --blacklist entry may have '_'"
like norm.jsonl '^\{"url":"http://bad.*name.example/page","outcome":"filtered","http_status":0,"error":"malformed"' \
    "a host that is no IDN (a bidi control) is malformed"
is "$(grep -c '"error":"malformed"' norm.jsonl)" 2 "so is a host that is not UTF-8"

run owt-fetch --filter-only -q urls.txt
is "$(cat err)" "" "-q: no warnings, no summary"
run owt-fetch --filter-only urls.txt
like err '^owt-fetch: ftp://example.com/file.html: filtered: scheme$' \
    "without --log, each drop is a warning"

# --shard k/n takes input lines k, k+n, ... (blank ones count too).
awk 'BEGIN { for (i = 0; i < 10; i++) printf "http://example.com/%d\n", i }' >ten.txt
run owt-fetch --filter-only -q --shard 1/3 ten.txt
printf 'http://example.com/1\nhttp://example.com/4\nhttp://example.com/7\n' >want
same want out "--shard 1/3 takes lines 1, 4, 7"
: >all
for k in 0 1 2; do
	owt-fetch --filter-only -q --shard $k/3 ten.txt >>all
done
sort all >a; sort ten.txt >b
same b a "the three shards together are the input, once"

gzip -c ten.txt >ten.txt.gz
run owt-fetch --filter-only -q - <ten.txt.gz
same ten.txt out "gzip input on standard input"

# Bad input.
printf 'http://example.com/1\n{"url":"http://example.com/2"\n{"id":3}\n{"url":4}\nhttp://example.com/5\n' >bad.txt
run owt-fetch --filter-only bad.txt
is "$rc" 1 "invalid JSON exits 1"
like err '^owt-fetch: bad.txt:2: invalid JSON' "invalid JSON names file and line"
printf 'http://example.com/1\n' >want
same want out "records before the bad one are written"
run owt-fetch --filter-only -k bad.txt
is "$rc" 1 "-k still exits 1"
like err "^owt-fetch: bad.txt:3: missing 'url' field$" "a record without url is reported"
like err "^owt-fetch: bad.txt:4: non-string 'url' field$" "a non-string url is reported"
like err '3 bad input lines' "the summary counts bad lines"
printf 'http://example.com/1\nhttp://example.com/5\n' >want
same want out "-k goes on after bad lines"
run owt-fetch --filter-only nosuch.txt
is "$rc" 1 "a missing input file exits 1"
like err "^owt-fetch: cannot open 'nosuch.txt': No such file or directory$" "it is named"

# Control bytes of input lines are escaped in messages: ESC, SOH and C1's
# CSI (U+009B) cannot drive the terminal.
printf 'http://a.example/\033[31mred\nhttp://b.example/x\001y\302\233z\t\001\n' >ctl.txt
run owt-fetch --filter-only ctl.txt
cat >want <<'ERR'
owt-fetch: http://a.example/\x1b[31mred: filtered: malformed
owt-fetch: http://b.example/x\x01y\xc2\x9bz\t\x01: filtered: malformed
ERR
head -n 2 err >got
same want got "control bytes of a URL are escaped in its warning"

# A reader that goes away: SIGPIPE's default, as the other programs (no
# message, status 141), though owt-fetch ignores SIGPIPE for its sockets.
# 300 KB of output cannot all go into the pipe before head exits.
awk 'BEGIN { for (i = 0; i < 5000; i++)
	printf "http://h%d.example.com/a/long/path/to/page/%d.html\n", i, i }' >many.txt
{ owt-fetch --filter-only many.txt 2>pipe.err; echo $? >pipe.rc; } | head -c 1 >/dev/null
is "$(cat pipe.rc)" 141 "a closed output pipe ends owt-fetch by SIGPIPE"
is "$(cat pipe.err)" "" "quietly"

printf 'ok.com\nbad domain\n' >badbl.txt
run owt-fetch --filter-only --blacklist badbl.txt ten.txt
is "$rc" 1 "a bad --blacklist exits 1"
like err "^owt-fetch: badbl.txt:2: 'bad domain' is not a domain name$" "with file and line"

run owt-fetch --filter-only --shard 3/3 ten.txt
is "$rc" 2 "--shard 3/3 is a usage error"
run owt-fetch --filter-only --extract ten.txt
is "$rc" 2 "--filter-only with --extract is a usage error"
like err "^owt-fetch: --extract and --filter-only exclude each other$" "and says why"
run owt-fetch --connections 0 ten.txt
is "$rc" 2 "--connections 0 is a usage error"
fails 2 "^owt-fetch: --json-keys: 'a,b' is not one field name$" \
    "--json-keys a,b" owt-fetch --filter-only --json-keys a,b ten.txt
# 128 extraction threads of a 32 MB stack in 3 GB: exit 3, not a crawl.
no_threads 128 "no room for 128 extraction threads" \
    owt-fetch -q --workers 128 ten.txt
done_testing
