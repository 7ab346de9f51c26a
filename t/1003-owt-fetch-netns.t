#!/bin/sh
# The address guard on redirects: in a private network namespace, a test
# host 198.51.100.7 (TEST-NET-2, not private) redirects to 127.0.0.1; without
# --allow-private the first hop is fetched and the redirect is refused.
# Skips where network namespaces cannot be made (not root, no unshare).
. "${OWT_SRC:-.}/t/lib.sh"

cd "$T" || exit 3
command -v unshare >/dev/null && command -v ip >/dev/null ||
	skip_all "no unshare or ip (iproute2)"
unshare -n true 2>/dev/null || skip_all "cannot make a network namespace"

# Everything runs inside the namespace: its only interface is lo, which
# carries 127.0.0.1 and the test host's address; nothing can leave it.
cat >inner.sh <<'SH'
set -u
ip link set lo up && ip addr add 198.51.100.7/32 dev lo || exit 97
"$OWT_BUILD/t/httpd" -a 0.0.0.0 -d . -p port -t 60 &
pid=$!
i=0
while [ ! -s port ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done
p=$(cat port)
H=http://198.51.100.7:$p
printf '%s\n' "$H/__owt/page/direct" \
    "$H/__owt/redirect?to=http://127.0.0.1:$p/__owt/page/inner" \
    "$H/__owt/redirect?to=http://10.0.0.1:$p/x" >urls.txt
owt-fetch --ignore-robots --retries 0 --timeout 5 --log log.jsonl urls.txt >out.jsonl 2>err
echo $? >rc
kill $pid
SH
unshare -n sh inner.sh
[ -f rc ] || skip_all "the namespace could not be set up"
is "$(cat rc)" 0 "owt-fetch exits 0"
sed 's/,"bytes".*//; s/:[0-9][0-9]*\//:P\//g' log.jsonl | sort >got
sort >want <<'WANT'
{"url":"http://198.51.100.7:P/__owt/page/direct","outcome":"ok","http_status":200,"error":null
{"url":"http://198.51.100.7:P/__owt/redirect?to=http://127.0.0.1:P/__owt/page/inner","outcome":"private","http_status":302,"error":"refused to connect to private address 127.0.0.1"
{"url":"http://198.51.100.7:P/__owt/redirect?to=http://10.0.0.1:P/x","outcome":"private","http_status":302,"error":"refused to connect to private address 10.0.0.1"
WANT
same want got "a public address is fetched; redirects to loopback and 10/8 are refused"
like out.jsonl '"text":"This is the article of page direct' "the direct page is written"
unlike out.jsonl 'page inner' "the loopback page never is"
done_testing
