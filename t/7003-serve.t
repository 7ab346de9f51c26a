#!/bin/sh
# gpt-sample --listen with curl: the options it refuses and their exit
# status, a port in use (3), /health and /v1/models, OpenAI's
# /v1/completions answered and streamed (the stream's text is the
# answer's), errors in OpenAI's form, continuous batching that does not
# change a seeded answer (16 concurrent requests against the same sent
# one by one), the queue's 429, a client that hangs up mid-stream
# freeing its slot, and SIGTERM's drain (queued 503, running finished,
# exit 0).
. "${OWT_SRC:-.}/t/lib.sh"
. "$OWT_SRC/t/serve.sh"

cd "$T" || exit 3
command -v curl >/dev/null || skip_all "no curl"
serve_model 1024

fails 2 "^gpt-sample: --temperature and --listen exclude each other: requests choose$" \
    "--temperature with --listen" gpt-sample --load ck --listen 0 --temperature 0.5
fails 2 "^gpt-sample: --sample-input-file and --listen exclude each other" \
    "--sample-input-file with --listen" gpt-sample --load ck --listen 0 --sample-input-file x
fails 2 "^gpt-sample: --parallel needs --listen$" \
    "--parallel without --listen" gpt-sample --load ck --parallel 2
fails 2 "^gpt-sample: --listen: 'a:b:c' is not \[ADDR:\]PORT$" \
    "a bad --listen" gpt-sample --load ck --listen a:b:c
fails 2 "^gpt-sample: --parallel: '65' is out of range 1\.\.64$" \
    "--parallel 65" gpt-sample --load ck --listen 0 --parallel 65

serve_start main --parallel 4
port=${url##*:}
fails 3 "^gpt-sample: cannot listen on '127\.0\.0\.1:$port': Address already in use$" \
    "a port in use" gpt-sample --load ck --listen "127.0.0.1:$port"

post() {	# post NAME JSON: the body in NAME, the status in NAME.code
	curl -s -o "$1" -w '%{http_code}' -X POST "$url/v1/completions" \
	    -H 'Content-Type: application/json' -d "$2" >"$1.code"
}
# The answer without its id and time: what a seed decides.
choices() {
	sed 's/^{"id":"cmpl-[0-9a-f]*","object":"text_completion","created":[0-9]*,//' "$1"
}

run curl -s -i "$url/health"
like out '^HTTP/1.1 200' "/health: 200 once ready"
like out '^\{"status":"ok"\}$' "/health: status ok"
run curl -s "$url/v1/models"
is "$(cat out)" '{"object":"list","data":[{"id":"ck","object":"model","created":0,"owned_by":"owt","max_model_len":1024}]}' \
    "/v1/models: the name is --load's last component"

post a '{"model":"ck","prompt":"And the LORD said","max_tokens":20,"seed":7}'
is "$(cat a.code)" 200 "a completion: 200"
like a '"finish_reason":"length"}\],"usage":\{"prompt_tokens":4,"completion_tokens":20,"total_tokens":24\}\}$' \
    "a completion: finish_reason and usage"
post b '{"model":"ck","prompt":"And the LORD said","max_tokens":20,"seed":7}'
choices a >a.c
choices b >b.c
same a.c b.c "the same seed twice: the same text"
post s '{"model":"ck","prompt":"And the LORD said","max_tokens":20,"seed":7,"stream":true,"stream_options":{"include_usage":true}}'
is "$(cat s.code)" 200 "a stream: 200"
sed -n 's/^data: {.*"choices":\[{"text":"\(.*\)","index":0,"logprobs":null,"finish_reason":[a-z"]*}\],"usage":null}$/\1/p' s |
    tr -d '\n' >s.text
sed -n 's/.*"choices":\[{"text":"\(.*\)","index":0,"logprobs".*/\1/p' a | tr -d '\n' >a.text
same a.text s.text "the stream's text is the answer's"
like s '^data: .*"choices":\[\],"usage":\{"prompt_tokens":4,"completion_tokens":20,"total_tokens":24\}\}$' \
    "a stream: usage with include_usage"
is "$(tail -n 2 s | head -n 1)" "data: [DONE]" "a stream ends with data: [DONE]"

# Long streams of a barely trained model, which draws tokens of
# characters of several bytes: the pieces make the answer's text (t/7006
# holds back half a character token by token).
i=0 diff=0 multi=0
while [ $i -lt 6 ]; do
	post u$i "{\"prompt\":\"The\",\"max_tokens\":200,\"seed\":$((100 + i))}"
	post us$i "{\"prompt\":\"The\",\"max_tokens\":200,\"seed\":$((100 + i)),\"stream\":true}"
	sed -n 's/.*"choices":\[{"text":"\(.*\)","index":0,"logprobs".*/\1/p' u$i | tr -d '\n' >x
	sed -n 's/^data: {.*"choices":\[{"text":"\(.*\)","index":0,"logprobs":null,"finish_reason":[a-z"]*}\]}$/\1/p' us$i |
	    tr -d '\n' >y
	cmp -s x y || diff=$((diff + 1))
	LC_ALL=C grep -q "$(printf '[\200-\377]')" x && multi=$((multi + 1))
	i=$((i + 1))
done
is "$diff" 0 "6 streams of 200 tokens: the pieces make the answers' texts"
[ "$multi" -ge 1 ] && ok "$multi of the 6 texts hold characters of several bytes" ||
    not_ok "none of the 6 texts holds characters of several bytes"

# Continuous batching: the same answers alone and 16 at once.
i=0 jobs=
while [ $i -lt 16 ]; do
	post alone$i "{\"prompt\":\"In the beginning $i\",\"max_tokens\":$((8 + i * 3)),\"seed\":$i,\"n\":$((1 + i % 2))}"
	i=$((i + 1))
done
i=0
while [ $i -lt 16 ]; do
	post busy$i "{\"prompt\":\"In the beginning $i\",\"max_tokens\":$((8 + i * 3)),\"seed\":$i,\"n\":$((1 + i % 2))}" &
	jobs="$jobs $!"
	i=$((i + 1))
done
wait $jobs	# not the server
i=0 diff=0
while [ $i -lt 16 ]; do
	choices alone$i >x
	choices busy$i >y
	cmp -s x y || diff=$((diff + 1))
	[ "$(cat busy$i.code)" = 200 ] || diff=$((diff + 1))
	i=$((i + 1))
done
is $diff 0 "16 concurrent seeded requests: the answers of each sent alone"

# /tokenize and /detokenize, vLLM's.
run curl -s -X POST "$url/tokenize" -d '{"prompt":"And the LORD said"}'
is "$(cat out)" '{"count":4,"max_model_len":1024,"tokens":[1870,262,35750,531]}' \
    "/tokenize: GPT-2's ids"
run curl -s -X POST "$url/detokenize" -d '{"tokens":[1870,262,35750,531,38251]}'
is "$(cat out)" "$(printf '{"prompt":"And the LORD said \303\251"}')" "/detokenize: the text"
run curl -s -X POST "$url/detokenize" -d '{"tokens":[1870,127]}'
is "$(cat out)" "$(printf '{"prompt":"And\357\277\275"}')" "/detokenize: half a character as U+FFFD"
run curl -s -o tk -w '%{http_code}' -X POST "$url/tokenize" -d '{"prompt":5}'
is "$(cat out)" 400 "/tokenize: a number, 400"

# Errors, in OpenAI's form.
post e1 '{"prompt":'
is "$(cat e1.code)" 400 "bad JSON: 400"
like e1 '^\{"error":\{"message":"invalid JSON: .*","type":"invalid_request_error","param":null,"code":null\}\}$' \
    "bad JSON: OpenAI's error object"
post e2 '{"prompt":"x","colour":1}'
is "$(cat e2.code)" 400 "an unknown field: 400"
like e2 '"message":"Unrecognized request argument supplied: colour"' "an unknown field is named"
post e3 '{"prompt":"x","max_tokens":5000}'
like e3 "\"message\":\"This model's maximum context length is 1024 tokens, however you requested 5001 tokens \(1 in your prompt; 5000 for the completion\)" \
    "a request beyond the context: 400 with OpenAI's words"
post e4 '{"prompt":"x","temperature":"hot"}'
like e4 '"message":"temperature: must be a number from 0 to 2"' "a string for a number: 400"
post e5 '{"prompt":[]}'
is "$(cat e5.code)" 400 "an empty prompt list: 400"
run curl -s -o e6 -w '%{http_code}' "$url/v2/nothing"
is "$(cat out)" 404 "an unknown path: 404"
run curl -s -o e7 -w '%{http_code}' "$url/v1/completions"
is "$(cat out)" 405 "GET /v1/completions: 405"
serve_stop
is "$serve_rc" 0 "SIGTERM: exit 0"
like main.log '^gpt-sample: POST /v1/completions 200: 1 sample, 4 prompt and 20 generated tokens in ' \
    "a line a request on stderr"

# Hang-ups, the queue and SIGTERM need requests that run a while: a
# model about 4 times slower a token (hidden 256).
serve_model 1024 256 "$T/slow"
serve_ck=$T/slow
# A hang-up frees the slot: with one slot, the next request is answered.
serve_start hup --parallel 1
curl -sN -X POST "$url/v1/completions" -d '{"prompt":"And","max_tokens":1000,"stream":true}' |
    head -c 100 >/dev/null
post after '{"prompt":"And","max_tokens":3}'
is "$(cat after.code)" 200 "after a hang-up mid-stream, the one slot answers"
like hup.log '^gpt-sample: POST /v1/completions 200 \(client gone\): 1 sample, 1 prompt and [0-9]{1,2} generated tokens' \
    "the hung-up stream stopped within steps"
# A queued request whose client gives up is dropped unanswered.
post long '{"prompt":"In","max_tokens":900,"ignore_eos":true}' &
jobs=$!
sleep 0.3
curl -s --max-time 0.3 -X POST "$url/v1/completions" -d '{"prompt":"Queued","max_tokens":5}' >/dev/null
wait $jobs
is "$(cat long.code)" 200 "the running request is answered"
like hup.log '^gpt-sample: POST /v1/completions 200 \(client gone\): 1 sample, [0-9]+ prompt and 0 generated tokens' \
    "the queued request that hung up never ran"
run curl -s "$url/metrics"
cp out metrics
like metrics '^owt_slots_busy 0$' "/metrics: no slot busy after the hang-up"
like metrics '^owt_requests_total\{path="/v1/completions",status="200"\} [0-9]+$' \
    "/metrics: requests by path and status"
like metrics '^owt_generated_tokens_total [0-9]+$' "/metrics: generated tokens"
like metrics '^owt_time_to_first_token_seconds_bucket\{le="\+Inf"\} [0-9]+$' \
    "/metrics: a histogram of the time to the first token"
like metrics '^# TYPE owt_request_duration_seconds histogram$' "/metrics: Prometheus' TYPE lines"

# The queue: one running, one waiting, the rest 429 with Retry-After.
# Each request is long (900 tokens), so that all six meet the full queue
# on a loaded machine too (with 200, the CUDA=0 run of a fresh clone once
# saw too few 429s while other tests ran beside it).
serve_stop
serve_start queue --parallel 1 --queue 1
i=0 jobs=
while [ $i -lt 6 ]; do
	curl -s -D q$i.h -o q$i -X POST "$url/v1/completions" -d '{"prompt":"And","max_tokens":900,"ignore_eos":true}' &
	jobs="$jobs $!"
	i=$((i + 1))
done
wait $jobs
n200=$(cat q?.h | grep -c '^HTTP/1.1 200')
n429=$(cat q?.h | grep -c '^HTTP/1.1 429')
is "$((n200 + n429))" 6 "a full queue: every request 200 or 429"
[ "$n429" -ge 1 ] && [ "$n200" -ge 2 ] && ok "a full queue: $n429 answered 429, $n200 answered" ||
    not_ok "a full queue: $n429 answered 429, $n200 answered (want 429s and at least 2)"
cat q?.h | grep -q '^Retry-After: 1' && ok "429 has Retry-After" || not_ok "429 has Retry-After"

# SIGTERM: the running request finishes, the queued one gets 503.
post first '{"prompt":"And","max_tokens":900,"ignore_eos":true}' &
jobs=$!
sleep 0.5
post second '{"prompt":"And","max_tokens":3}' &
jobs="$jobs $!"
sleep 0.5
serve_stop
wait $jobs
is "$serve_rc" 0 "SIGTERM with requests: exit 0"
is "$(cat first.code) $(cat second.code)" "200 503" "SIGTERM: running finished, queued 503"
like first '"completion_tokens":900,' "SIGTERM: the running request got all its tokens"

serve_ck=
# --api-key-file: Bearer on every path but /health.
fails 2 "^gpt-sample: --api-key-file needs --listen$" "--api-key-file without --listen" \
    gpt-sample --load ck --api-key-file nothing
fails 3 "^gpt-sample: cannot open 'nothing': No such file or directory$" \
    "a missing --api-key-file" gpt-sample --load ck --listen 0 --api-key-file nothing
printf 's3cret\n' >key.txt
serve_start key --api-key-file key.txt
run curl -s -o k1 -w '%{http_code}' "$url/health"
is "$(cat out)" 200 "--api-key-file: /health stays open"
run curl -s -o k2 -w '%{http_code}' "$url/v1/models"
is "$(cat out)" 401 "--api-key-file: no key, 401"
run curl -s -o k3 -w '%{http_code}' -H 'Authorization: Bearer wrong' "$url/v1/models"
is "$(cat out)" 401 "--api-key-file: a wrong key, 401"
like k3 '^\{"error":\{"message":"Incorrect API key provided","type":"authentication_error"' \
    "--api-key-file: OpenAI's error"
run curl -s -o k4 -w '%{http_code}' -H 'Authorization: Bearer s3cret' "$url/v1/models"
is "$(cat out)" 200 "--api-key-file: the key, 200"
serve_stop

# [::1]
if gpt-sample --load ck --workers 1 --listen '[::1]:0' 2>v6.log & v6=$!; await v6.log 'ready as|cannot' 30; grep -q 'ready as' v6.log; then
	u6=http://$(sed -n 's/.*listening on http:\/\/\([^ ]*\)$/\1/p' v6.log)
	run curl -s -g "$u6/health"
	is "$(cat out)" '{"status":"ok"}' "--listen '[::1]:0': /health on IPv6 loopback"
	kill "$v6"
	wait "$v6"
else
	wait "$v6"
	skip "no IPv6 loopback here"
fi
done_testing
