#!/bin/sh
# gpt-sample --listen's continuous batching with chunked prefill: 32
# concurrent seeded requests (--parallel 32), prompts of 2 to 6 chunks of
# 64 tokens among short ones, get the answers of the same requests sent
# one by one, streamed or not, to the last bit of their logprobs; so do
# 64 at once with --parallel 64; the log gives the key/value cache of a
# slot and of all slots.
. "${OWT_SRC:-.}/t/lib.sh"
. "$OWT_SRC/t/serve.sh"

cd "$T" || exit 3
command -v curl >/dev/null || skip_all "no curl"
serve_model 1024

# body I: request I's JSON. Every fourth prompt is long: 70 to 350
# tokens (2 to 6 chunks), 70 + 10 I; the others 1 to 9 tokens. Odd ones
# stream; even ones ask for logprobs, whose 9 digits show a logit that
# differs in its last bit.
body() {
	awk -v i="$1" 'BEGIN {
		n = i % 4 ? 1 + i % 9 : 70 + i * 10
		printf "{\"prompt\":["
		for (j = 0; j < n; j++)
			printf "%s%d", j ? "," : "", (i * 7919 + j * 104729) % 50000
		printf "],\"max_tokens\":%d,\"seed\":%d,\"top_k\":40%s}", 8 + (i * 5) % 41, i,
		    i % 2 ? ",\"stream\":true" : ",\"logprobs\":1"
	}'
}
# The answer without its id and time: what a seed decides.
choices() {
	sed 's/"id":"cmpl-[0-9a-f]*","object":"text_completion","created":[0-9]*,//' "$1"
}
post() {	# post NAME I
	body "$2" | curl -s -o "$1" -w '%{http_code}' -X POST "$url/v1/completions" \
	    -H 'Content-Type: application/json' --data-binary @- >"$1.code"
}
# batch N: N requests one by one, then at once; the differences
batch() {
	i=0
	while [ $i -lt "$1" ]; do
		post alone$i $i
		i=$((i + 1))
	done
	i=0 jobs=
	while [ $i -lt "$1" ]; do
		post busy$i $i &
		jobs="$jobs $!"
		i=$((i + 1))
	done
	wait $jobs	# not the server
	i=0 diff=0
	while [ $i -lt "$1" ]; do
		choices alone$i >x
		choices busy$i >y
		{ cmp -s x y && [ -s x ]; } || diff=$((diff + 1))
		[ "$(cat alone$i.code) $(cat busy$i.code)" = "200 200" ] || diff=$((diff + 1))
		i=$((i + 1))
	done
}

serve_start p32 --parallel 32
like p32.log '^gpt-sample: 32 slots of 1024 positions, 1\.0 MB of key/value cache each, 33\.6 MB in all; ready as' \
    "the log: the key/value cache of a slot and in all"
batch 32
is $diff 0 "32 concurrent seeded requests, long prompts among them: the answers of each sent alone"
like busy1 '^data: \[DONE\]$' "a streamed answer among them"
like busy0 '"usage":\{"prompt_tokens":70,' "a prompt of 70 tokens among them"
like busy28 '"usage":\{"prompt_tokens":350,' "a prompt of 350 tokens (6 chunks) among them"
serve_stop

serve_start p64 --parallel 64
like p64.log '^gpt-sample: 64 slots of 1024 positions, 1\.0 MB of key/value cache each, 67\.1 MB in all; ready as' \
    "--parallel 64: the log"
batch 64
is $diff 0 "--parallel 64: 64 concurrent seeded requests, the answers of each sent alone"
serve_stop
is "$serve_rc" 0 "SIGTERM: exit 0"

done_testing
