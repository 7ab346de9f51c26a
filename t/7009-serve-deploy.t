#!/bin/sh
# owt(7)'s serving recipes as the page writes them: the systemd unit
# passes systemd-analyze verify (gpt-sample's path made this build's),
# and the nginx server block (a loopback port for its TLS address)
# proxies all three protocols to gpt-sample --listen: streams arrive
# whole and as events, the body limit is the server's, and a client that
# hangs up mid-stream through nginx frees its slot (read in /metrics).
# Each part is skipped without its program.
. "${OWT_SRC:-.}/t/lib.sh"
. "$OWT_SRC/t/serve.sh"

cd "$T" || exit 3
command -v curl >/dev/null || skip_all "no curl"
py=/usr/bin/python3
[ -x "$py" ] || skip_all "no /usr/bin/python3"

# block FIRST: the literal block of owt(7) that begins with line FIRST
block() {
	awk -v first="$1" '
	/^\.Bd -literal/ { getline; on = $0 == first }
	/^\.Ed/ { on = 0 }
	on { gsub(/\\e/, "\\"); print }' "$OWT_SRC/man/owt.7"
}

# --- systemd
block '# /etc/systemd/system/owt-gpt2.service' >unit
[ -s unit ] && ok "owt(7) has the unit file" || not_ok "owt(7) has the unit file"
if command -v systemd-analyze >/dev/null; then
	mkdir sd
	sed "s|/usr/local/bin/gpt-sample|$OWT_BUILD/bin/gpt-sample|" unit >sd/owt-gpt2.service
	run timeout 60 systemd-analyze verify sd/owt-gpt2.service
	is "$rc" 0 "systemd-analyze verify: the unit is valid"
	is "$(cat err)" "" "systemd-analyze verify: no warning"
	like sd/owt-gpt2.service '^KillSignal=SIGTERM$' "the unit stops it with SIGTERM"
	stop=$(sed -n 's/^TimeoutStopSec=//p' unit)
	drain=$(sed -n 's/.*--drain-timeout \([0-9]*\).*/\1/p' unit)
	[ "$stop" -gt "$drain" ] && ok "TimeoutStopSec ($stop) outlasts --drain-timeout ($drain)" ||
	    not_ok "TimeoutStopSec ($stop) outlasts --drain-timeout ($drain)"
	# its options are gpt-sample's: the same line parses here
	sed -n '/^ExecStart=/,/[^\\]$/p' unit | tr -d '\\\n' | sed 's/^ExecStart=[^ ]*//' >args
	run sh -c "gpt-sample $(cat args) --version"
	is "$rc" 0 "the unit's gpt-sample options parse"
else
	skip "no systemd-analyze"
fi

# --- nginx in front of gpt-sample
command -v nginx >/dev/null || { done_testing; exit; }
serve_model 1024
serve_start main --parallel 2
port=$("$py" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
block 'upstream owt_gpt2 {' >site
[ -s site ] && ok "owt(7) has the nginx block" || not_ok "owt(7) has the nginx block"
mkdir -p nginx/logs nginx/tmp
sed -e "s|server 127.0.0.1:8000;|server ${url#http://};|" \
    -e "s|listen 443 ssl;|listen 127.0.0.1:$port;|" -e '/ssl_certificate/d' site >nginx/site
cat >nginx/nginx.conf <<EOF
daemon off;
master_process off;
pid $T/nginx/nginx.pid;
error_log $T/nginx/logs/error.log;
events { worker_connections 64; }
http {
    access_log $T/nginx/logs/access.log;
    client_body_temp_path $T/nginx/tmp/body;
    proxy_temp_path $T/nginx/tmp/proxy;
    fastcgi_temp_path $T/nginx/tmp/fcgi;
    uwsgi_temp_path $T/nginx/tmp/uwsgi;
    scgi_temp_path $T/nginx/tmp/scgi;
    include $T/nginx/site;
}
EOF
nginx -p "$T/nginx" -c "$T/nginx/nginx.conf" 2>nginx.err &
nginx_pid=$!
trap 'kill $nginx_pid 2>/dev/null; [ -n "$serve_pid" ] && kill "$serve_pid" 2>/dev/null; rm -rf "$T"' EXIT
i=0
until curl -sf -o /dev/null "http://127.0.0.1:$port/health" || [ $i -ge 50 ]; do
	sleep 0.2
	i=$((i + 1))
done
px=http://127.0.0.1:$port
run curl -s "$px/health"
is "$(cat out)" '{"status":"ok"}' "through nginx: /health"

for p in v1 v2; do
	if [ $p = v1 ]; then
		path=/v1/completions
		body='{"prompt":"And the LORD said","max_tokens":40,"seed":3,"stream":true}'
	else
		path=/v2/models/ck/generate_stream
		body='{"text_input":"And the LORD said","max_tokens":40,"random_seed":3}'
	fi
	curl -sN "$url$path" -d "$body" | sed 's/"id":"cmpl-[0-9a-f]*","object":"text_completion","created":[0-9]*,//' >direct
	curl -sN "$px$path" -d "$body" | sed 's/"id":"cmpl-[0-9a-f]*","object":"text_completion","created":[0-9]*,//' >proxied
	[ -s direct ] && same direct proxied "through nginx: $path streams the same events" ||
	    not_ok "through nginx: $path streams the same events"
done
curl -s -o a -X PUT "$px/api" -d '{"prompts":["And the LORD said"],"tokens_to_generate":8,"random_seed":3}'
curl -s -o b -X PUT "$url/api" -d '{"prompts":["And the LORD said"],"tokens_to_generate":8,"random_seed":3}'
same a b "through nginx: Megatron's PUT /api, the same answer"
head -c 1048577 /dev/zero | tr '\0' 'a' >big
run curl -s -o /dev/null -w '%{http_code}' "$px/v1/completions" --data-binary @big
is "$(cat out)" 413 "through nginx: a body over 1 MiB is 413, as the server's limit"
run curl -s -D - -o /dev/null "$url/v2/models/ck/generate_stream" -d '{"text_input":"a","max_tokens":1}'
like out '^X-Accel-Buffering: no' "a stream tells nginx not to buffer it"

# A client of nginx hangs up mid-stream: nginx closes upstream, the
# stream stops long before its 1000 tokens, the slot frees.
curl -sN "$px/v2/models/ck/generate_stream" \
    -d '{"text_input":"The","max_tokens":1000,"random_seed":1,"ignore_eos":true}' |
    head -c 300 >/dev/null
busy=1 i=0
while [ "$busy" != 0 ] && [ $i -lt 50 ]; do
	busy=$(curl -s "$url/metrics" | sed -n 's/^owt_slots_busy //p')
	sleep 0.1
	i=$((i + 1))
done
is "$busy" 0 "a client that hangs up on nginx frees its slot"
like main.log '^gpt-sample: POST /v2/models/\{name\}/generate_stream 200 \(client gone\): 1 sample, 1 prompt and [0-9]{1,3} generated tokens' \
    "the stream stopped when nginx's client went away"
kill "$nginx_pid"
wait "$nginx_pid" 2>/dev/null
serve_stop
is "$serve_rc" 0 "SIGTERM: exit 0"
done_testing
