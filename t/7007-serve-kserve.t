#!/bin/sh
# gpt-sample --listen's Triton (KServe v2) protocol with curl: every /v2
# path and its answer (the health paths 503 while the model loads), generate's fields at the top level (TensorRT-LLM),
# as lists of one, under parameters and in sampling_parameters (vLLM)
# giving the same seeded text, text_output with and without the prompt,
# generate_stream's pieces making generate's text, infer's tensors, log
# probabilities against /v1/completions' for the same seed, stop words,
# end_id, every bad request class with its status and message, the API
# key (the health paths open), /metrics by path and status, and
# --log-json's lines.
. "${OWT_SRC:-.}/t/lib.sh"
. "$OWT_SRC/t/serve.sh"

cd "$T" || exit 3
command -v curl >/dev/null || skip_all "no curl"
py=/usr/bin/python3
[ -x "$py" ] || skip_all "no /usr/bin/python3 (the JSON checks)"
serve_model 256

fails 3 "^gpt-sample: cannot create 'no/such/log\.jsonl': No such file or directory$" \
    "--log-json in a missing folder" gpt-sample --load ck --listen 0 --log-json no/such/log.jsonl
fails 2 "^gpt-sample: --log-json needs --listen$" \
    "--log-json without --listen" gpt-sample --load ck --log-json x.jsonl

# --- while the model loads, the health paths answer 503: a checkpoint
# whose model.safetensors is a FIFO that no one writes holds the load
# (config.json, read for the tokenizer before the port is bound, is not).
it=iter_$(printf %07d "$(cat ck/latest_checkpointed_iteration.txt)")
mkdir -p slow/$it && cp ck/latest_checkpointed_iteration.txt slow/ &&
    cp ck/$it/config.json slow/$it/ &&
    mkfifo slow/$it/model.safetensors
gpt-sample --load slow --workers 1 --listen 0 2>slow.log &
serve_pid=$!
await slow.log "listening on" 20
url=http://$(sed -n 's/.*listening on http:\/\/\([^ ]*\)$/\1/p' slow.log)
for p in /v2/health/ready /v2/models/slow/ready /health /v2/health/live; do
	curl -s -w ' %{http_code}' "$url$p"
done >got
curl -s -w ' %{http_code}' "$url/v2/models/slow/generate" -d '{"text_input":"a"}' >>got
is "$(cat got)" '{"ready":false}
 503{"ready":false}
 503{"status":"loading"}
 503{"live":true}
 200{"error":"the model is loading"}
 503' "while the model loads: ready 503, live 200, generate 503"
kill -KILL "$serve_pid"
wait "$serve_pid" 2>/dev/null
serve_pid=

serve_start main --parallel 4 --log-json log.jsonl
m=$url/v2/models/ck

get() {		# get NAME PATH: the body in NAME, the status in NAME.code
	curl -s -o "$1" -w '%{http_code}' "$url$2" >"$1.code"
}
post() {	# post NAME PATH JSON
	curl -s -o "$1" -w '%{http_code}' -X POST "$url$2" -d "$3" >"$1.code"
}
# answer NAME CODE BODY DESC: NAME's status and body, exactly
answer() {
	is "$(cat "$1.code") $(cat "$1")" "$2 $3" "$4"
}
# field NAME KEY: a member of the JSON answer in NAME, as JSON
field() {
	"$py" -c 'import json, sys; print(json.dumps(json.load(open(sys.argv[1]))[sys.argv[2]]))' "$1" "$2"
}

# --- the paths without a body.
get a /v2
answer a 200 '{"name":"owt","version":"0.1.0","extensions":["generate"]}' "GET /v2: the server's metadata"
get a /v2/health/live
answer a 200 '{"live":true}' "GET /v2/health/live"
get a /v2/health/ready
answer a 200 '{"ready":true}' "GET /v2/health/ready once the model is loaded"
get a /v2/models/ck/ready
answer a 200 '{"ready":true}' "GET /v2/models/ck/ready"
get a /v2/models/ck
is "$(cat a.code) $(field a name) $(field a versions) $(field a max_model_len)" '200 "ck" ["1"] 256' \
    "GET /v2/models/ck: its name, version and context"
"$py" -c '
import json, sys
d = json.load(open("a"))
print(" ".join(t["name"] + ":" + t["datatype"] for t in d["inputs"] + d["outputs"]))' >got
is "$(cat got)" "text_input:BYTES max_tokens:INT32 temperature:FP32 top_k:INT32 top_p:FP32 random_seed:UINT64 stop_words:BYTES bad_words:BYTES end_id:INT32 beam_width:INT32 ignore_eos:BOOL exclude_input_in_output:BOOL return_log_probs:BOOL return_finish_reason:BOOL return_num_input_tokens:BOOL return_num_output_tokens:BOOL text_output:BYTES cum_log_probs:FP32 output_log_probs:FP32 finish_reason:BYTES num_input_tokens:INT32 num_output_tokens:INT32" \
    "the model's metadata: its inputs and outputs"
get b /v2/models/ck/versions/1
same a b "/v2/models/ck/versions/1 is the same model"
get a /v2/models/gpt2/ready
answer a 404 '{"error":"Request for unknown model: '"'gpt2'"' is not found"}' "another model's name: 404 in Triton's words"
get a /v2/models/ck/versions/2/ready
answer a 404 '{"error":"Request for unknown model: '"'ck'"' is not found"}' "another version: 404"
get a /v2/repository/index
answer a 404 '{"error":"no such path: /v2/repository/index"}' "a path of none: 404"
get a /v2/models/ck/generate
answer a 405 '{"error":"the method is not allowed here"}' "GET of generate: 405"
post a /v2/health/ready '{}'
answer a 405 '{"error":"the method is not allowed here"}' "POST of a health path: 405"

# --- generate: the same seeded text however the fields come.
P='"text_input":"And the LORD said"'
post g "/v2/models/ck/generate" "{$P,\"max_tokens\":24,\"random_seed\":7}"
is "$(cat g.code)" 200 "generate: 200"
like g '^\{"model_name":"ck","model_version":"1","text_output":"And the LORD said[^"]' \
    "generate: text_output holds the prompt, then the text"
field g text_output >g.text
post b /v2/models/ck/generate "{\"text_input\":[\"And the LORD said\"],\"max_tokens\":[24],\"random_seed\":[7]}"
field b text_output >b.text
same g.text b.text "TensorRT-LLM's lists of one: the same text"
post b /v2/models/ck/generate "{$P,\"parameters\":{\"max_tokens\":24,\"seed\":7}}"
field b text_output >b.text
same g.text b.text "vLLM's parameters: the same text"
post b /v2/models/ck/generate "{$P,\"sampling_parameters\":\"{\\\"max_tokens\\\":24,\\\"seed\\\":7}\"}"
field b text_output >b.text
same g.text b.text "vLLM's sampling_parameters as JSON text: the same text"
post b /v2/models/ck/generate "{$P,\"max_tokens\":24,\"random_seed\":7,\"exclude_input_in_output\":true,\"id\":\"r1\"}"
"$py" -c 'import json, sys; print(json.dumps("And the LORD said" + json.load(open("b"))["text_output"]))' >b.text
same g.text b.text "exclude_input_in_output: the text without the prompt"
like b '^\{"model_name":"ck","model_version":"1","id":"r1","text_output":' "the request's id answered back"

# log probabilities: /v1/completions' for the same seed and sampling
post lp /v2/models/ck/generate "{$P,\"max_tokens\":8,\"random_seed\":5,\"return_log_probs\":true,\"return_finish_reason\":true,\"return_num_input_tokens\":true,\"return_num_output_tokens\":true}"
curl -s -o oa "$url/v1/completions" -d '{"prompt":"And the LORD said","max_tokens":8,"seed":5,"logprobs":0}'
"$py" -c '
import json
g = json.load(open("lp"))
o = json.load(open("oa"))["choices"][0]
ok = g["output_log_probs"] == o["logprobs"]["token_logprobs"]
ok = ok and abs(g["cum_log_probs"] - sum(g["output_log_probs"])) < 1e-4
ok = ok and g["text_output"] == "And the LORD said" + o["text"]
print(ok, g["finish_reason"], g["num_input_tokens"], g["num_output_tokens"])' >got
is "$(cat got)" "True length 4 8" \
    "return_log_probs: /v1/completions' token log-probabilities, their sum; finish_reason and counts"

# stop words: the text cut before the first, finish_reason stop
post s /v2/models/ck/generate "{$P,\"max_tokens\":24,\"random_seed\":7,\"exclude_input_in_output\":true}"
stop=$("$py" -c '
import json
t = json.load(open("s"))["text_output"]
print(json.dumps(t[6:9]), json.dumps(t[:t.index(t[6:9])]))')
w=${stop%% *}
post s2 /v2/models/ck/generate "{$P,\"max_tokens\":24,\"random_seed\":7,\"exclude_input_in_output\":true,\"stop_words\":[\"zzzz\",$w],\"return_finish_reason\":true}"
is "$(field s2 text_output) $(field s2 finish_reason)" "${stop#* } \"stop\"" \
    "stop_words: the text cut before the stop word, finish_reason stop"
post s3 /v2/models/ck/generate "{$P,\"parameters\":{\"max_tokens\":24,\"seed\":7,\"stop\":$w},\"exclude_input_in_output\":true}"
is "$(field s3 text_output)" "${stop#* }" "vLLM's stop: the same"

# end_id: the first token drawn ends the text at once, itself not in it
# (as TensorRT-LLM leaves the end token out)
post e1 /v2/models/ck/generate "{$P,\"max_tokens\":1,\"random_seed\":7,\"exclude_input_in_output\":true}"
id=$(curl -s "$url/tokenize" -d "{\"prompt\":$(field e1 text_output)}" |
    "$py" -c 'import json, sys; print(json.load(sys.stdin)["tokens"][0])')
post e2 /v2/models/ck/generate "{$P,\"max_tokens\":24,\"random_seed\":7,\"end_id\":$id,\"return_finish_reason\":true,\"return_num_output_tokens\":true}"
is "$(field e2 finish_reason) $(field e2 num_output_tokens) $(field e2 text_output)" '"stop" 0 "And the LORD said"' \
    "end_id: the token ends the text (finish_reason stop, no token)"

# --- generate_stream: its pieces make generate's text_output.
i=0 diff=0
while [ $i -lt 4 ]; do
	body="{\"text_input\":\"The\",\"max_tokens\":150,\"random_seed\":$((40 + i))}"
	post u$i /v2/models/ck/generate "$body"
	post us$i /v2/models/ck/generate_stream "$body"
	field u$i text_output >x
	"$py" -c '
import json, sys
t = ""
for l in open(sys.argv[1]):
    if l.startswith("data: "):
        t += json.loads(l[6:])["text_output"]
    elif l != "\n":
        sys.exit("not an event: " + l)
print(json.dumps(t))' us$i >y
	cmp -s x y || diff=$((diff + 1))
	i=$((i + 1))
done
is "$diff" 0 "generate_stream: the pieces make generate's text (4 seeds, 150 tokens)"
is "$(head -n 1 us0)" 'data: {"model_name":"ck","model_version":"1","text_output":"The"}' \
    "generate_stream: the prompt first, as an event"
# with stop words, which a stream holds back until they cannot match
body="{$P,\"max_tokens\":24,\"random_seed\":7,\"stop_words\":[\"zzzz\",$w]}"
post ss /v2/models/ck/generate_stream "$body"
post sg /v2/models/ck/generate "$body"
"$py" -c '
import json, sys
print(json.dumps("".join(json.loads(l[6:])["text_output"] for l in open("ss") if l.startswith("data: "))))' >x
field sg text_output >y
same x y "generate_stream with stop_words: the pieces make generate's text"
# an empty text_input: the text from <|endoftext|>, no prompt echoed
post em /v2/models/ck/generate '{"text_input":"","max_tokens":5,"random_seed":2}'
post ems /v2/models/ck/generate '{"text_input":"","max_tokens":5,"random_seed":2,"exclude_input_in_output":true}'
same em ems "an empty text_input: text_output is the text alone"
post ems /v2/models/ck/generate_stream '{"text_input":"","max_tokens":5,"random_seed":2}'
"$py" -c '
import json, sys
print(json.dumps("".join(json.loads(l[6:])["text_output"] for l in open("ems") if l.startswith("data: "))))' >x
field em text_output >y
same x y "an empty text_input streamed: the same text"
post us /v2/models/ck/generate_stream "{$P,\"max_tokens\":3,\"random_seed\":7,\"exclude_input_in_output\":true,\"return_finish_reason\":true,\"return_num_output_tokens\":true}"
is "$(cat us.code)" 200 "generate_stream: 200"
like us '^data: \{"model_name":"ck","model_version":"1","text_output":"[^"]*","finish_reason":"length","num_output_tokens":3\}$' \
    "generate_stream: the last event carries the outputs asked for"
is "$(grep -c '^data: ' us) $(grep -c '^$' us)" "4 4" "generate_stream: server-sent events, each ended by a blank line"

# --- infer: KServe v2 tensors.
post i /v2/models/ck/infer '{"id":"7","inputs":[{"name":"text_input","datatype":"BYTES","shape":[2,1],"data":[["And the LORD said"],["In the"]]},{"name":"max_tokens","datatype":"INT32","shape":[1],"data":[24]},{"name":"random_seed","datatype":"UINT64","shape":[1],"data":[7]}],"outputs":[{"name":"text_output"},{"name":"num_output_tokens"}]}'
is "$(cat i.code)" 200 "infer: 200"
"$py" -c '
import json
d = json.load(open("i"))
t, n = d["outputs"]
print(d["model_name"], d["id"], t["name"], t["datatype"], t["shape"], len(t["data"]), n["name"], n["datatype"], n["shape"], n["data"])
print(json.dumps(t["data"][0]))
print(t["data"][1].startswith("In the"))' >got
is "$(head -n 1 got)" "ck 7 text_output BYTES [2, 1] 2 num_output_tokens INT32 [2] [24, 24]" \
    "infer: the outputs asked for, as tensors of the prompts' shape"
sed -n 2p got >x
same g.text x "infer: the first prompt's text is generate's for the same seed"
is "$(sed -n 3p got)" True "infer: the second prompt's text starts with it"
post i /v2/models/ck/infer '{"inputs":[{"name":"text_input","datatype":"BYTES","shape":[1],"data":["And the LORD said"]},{"name":"max_tokens","datatype":"INT32","shape":[1],"data":[8]},{"name":"return_log_probs","datatype":"BOOL","shape":[1],"data":[true]}],"parameters":{"random_seed":5}}'
"$py" -c '
import json
d = {o["name"]: o for o in json.load(open("i"))["outputs"]}
g = json.load(open("lp"))
print(sorted(d), d["output_log_probs"]["shape"], d["output_log_probs"]["data"] == g["output_log_probs"])' >got
is "$(cat got)" "['cum_log_probs', 'output_log_probs', 'text_output'] [1, 8] True" \
    "infer: return_log_probs as tensors, generate's numbers; parameters as generate's"

post i /v2/models/ck/infer '{"inputs":[{"name":"text_input","datatype":"BYTES","shape":[1],"data":["And"]},{"name":"max_tokens","datatype":"INT32","shape":[1],"data":[2]},{"name":"return_log_probs","datatype":"BOOL","shape":[1],"data":[true]}],"outputs":[{"name":"finish_reason"}]}'
is "$(cat i.code) $(cat i)" '200 {"model_name":"ck","model_version":"1","outputs":[{"name":"finish_reason","datatype":"BYTES","shape":[1],"data":["length"]}]}' \
    "infer: outputs choose the answer's tensors, whatever return_log_probs says"

# --- bad requests: status and KServe's {"error": ...}.
bad() {		# bad PATH JSON CODE MESSAGE
	post a "$1" "$2"
	answer a "$3" "{\"error\":\"$4\"}" "$1 $2: $3"
}
G=/v2/models/ck/generate
bad $G '{"text_input":' 400 'invalid JSON: byte 15: expected a value'
bad $G '[1]' 400 'the request body must be a JSON object'
bad $G '{"max_tokens":4}' 400 'text_input: required'
bad $G '{"text_input":["a","b"]}' 400 'text_input: must be one string'
bad $G '{"text_input":7}' 400 'text_input: must be a string or a list of them'
bad $G '{"text_input":"a","prompt":"b"}' 400 "unexpected inference input 'prompt'"
bad $G '{"text_input":"a","max_tokens":"4"}' 400 'max_tokens: must be an integer'
bad $G '{"text_input":"a","max_tokens":2.5}' 400 'max_tokens: must be an integer'
bad $G '{"text_input":"a","max_tokens":-1}' 400 'max_tokens: must be an integer of at least 0'
bad $G '{"text_input":"a","max_tokens":1e300}' 400 'max_tokens: must be an integer of at least 0'
bad $G '{"text_input":"a","max_tokens":300}' 400 'text_input and max_tokens: 1 and 300 tokens, over the model'"'"'s context of 256'
bad $G '{"text_input":"a","temperature":101}' 400 'temperature: must be a number from 0 to 100'
bad $G '{"text_input":"a","top_p":1.5}' 400 'top_p: must be a number from 0 to 1; 0 or 1: all'
bad $G '{"text_input":"a","top_k":-2}' 400 'top_k: must be an integer; -1 or 0: all'
bad $G '{"text_input":"a","random_seed":-1}' 400 'random_seed: must be an integer from 0 to 2^64-1'
bad $G '{"text_input":"a","random_seed":1,"parameters":{"seed":2}}' 400 'random_seed and seed: give one'
bad $G '{"text_input":"a","max_tokens":4,"parameters":{"max_tokens":4}}' 400 'max_tokens is given twice'
bad $G '{"text_input":"a","parameters":[1]}' 400 'parameters: must be an object'
bad $G '{"text_input":"a","sampling_parameters":"{x"}' 400 'sampling_parameters: must be an object as JSON text'
bad $G '{"text_input":"a","stream":true}' 400 'stream: must be false here, or absent: use generate_stream'
bad $G '{"text_input":"a","stop_words":["a","b","c","d","e"]}' 400 'stop_words: at most 4 strings'
bad $G '{"text_input":"a","bad_words":["x"]}' 400 'bad_words: not supported'
bad $G '{"text_input":"a","beam_width":2}' 400 'beam_width: only 1 is supported: beam search is not built'
bad $G '{"text_input":"a","end_id":50257}' 400 'end_id: must be a token id from 0 to 50256'
bad $G '{"text_input":"a","end_id":1,"ignore_eos":true}' 400 'end_id and ignore_eos: give one'
bad $G '{"text_input":"a","ignore_eos":1}' 400 'ignore_eos: must be a boolean'
bad $G '{"text_input":"a","id":1}' 400 'id: must be a string'
bad /v2/models/ck/generate_stream '{"text_input":"a","return_log_probs":true}' 400 \
    'return_log_probs: not supported with generate_stream'
I=/v2/models/ck/infer
bad $I '{"text_input":"a"}' 400 "unexpected member 'text_input' of an inference request"
bad $I '{"inputs":{}}' 400 'inputs: must be a list of tensors'
bad $I '{"inputs":[{"name":"text_input","datatype":"BYTES","data":["a"]}]}' 400 \
    'inputs: each a tensor of name, datatype, shape (of one or two dimensions) and data'
bad $I '{"inputs":[{"name":"text_input","datatype":"BYTES","shape":[2],"data":["a"]}]}' 400 \
    'text_input: its data does not fill its shape'
bad $I '{"inputs":[{"name":"text_input","datatype":"BYTES","shape":[1,2],"data":[["a","b"]]}]}' 400 \
    'text_input: shape [N, 1] or [N] only'
bad $I '{"inputs":[{"name":"text_input","datatype":"BYTES","shape":[1],"data":["a"]},{"name":"max_tokens","datatype":"BYTES","shape":[1],"data":["4"]}]}' 400 \
    'max_tokens: datatype BYTES does not hold an integer'
bad $I '{"inputs":[{"name":"text_input","datatype":"BYTES","shape":[1],"data":["a"]},{"name":"max_tokens","datatype":"INT32","shape":[2],"data":[4,5]}]}' 400 \
    'max_tokens: must be one value'
bad $I '{"inputs":[{"name":"text_input","datatype":"BYTES","shape":[1],"data":["a"]}],"outputs":[{"name":"logits"}]}' 400 \
    'outputs: each names an output: text_output, cum_log_probs, output_log_probs, finish_reason, num_input_tokens or num_output_tokens'
bad $I '{"inputs":[{"name":"text_input","datatype":"BYTES","shape":[1],"data":["a"]}],"parameters":{"stream":true}}' 400 \
    'stream: not supported by infer: use generate_stream'
head -c 1100000 /dev/zero | tr '\0' 'a' >big
curl -s -o a -w '%{http_code}' -X POST "$url$G" --data-binary @big >a.code
answer a 413 '{"error":"the request body is over 1 MiB"}' "a body over 1 MiB: 413"

# --- /metrics: the /v2 paths by status.
get a /metrics
like a '^owt_requests_total\{path="/v2/models/\{name\}/generate",status="200"\} [0-9]+$' "/metrics: generate's 200s"
like a '^owt_requests_total\{path="/v2/models/\{name\}/generate",status="400"\} 2[0-9]$' "/metrics: generate's 400s"
like a '^owt_requests_total\{path="/v2/models/\{name\}/infer",status="400"\} 9$' "/metrics: infer's 400s"
like a '^owt_requests_total\{path="/v2/models/\{name\}/generate_stream",status="200"\} 7$' "/metrics: generate_stream's 200s"
like a '^owt_requests_total\{path="/v2/health/live",status="200"\} 1$' "/metrics: /v2/health/live"
like a '^owt_requests_total\{path="other",status="404"\} 3$' "/metrics: the 404s as other"
serve_stop
is "$serve_rc" 0 "SIGTERM: exit 0"

# --- --log-json: a line for each request, as JSON.
json_lines log.jsonl "--log-json: every line is JSON"
"$py" -c '
import json
rows = [json.loads(l) for l in open("log.jsonl")]
r = [x for x in rows if x["request"] == "POST /v2/models/ck/generate" and x["status"] == 200][0]
print(len(rows), sorted(r), r["samples"], r["prompt_tokens"], r["generated_tokens"], r["client_gone"])
e = [x for x in rows if x["status"] == 404][0]
print(e["request"], sorted(e))' >got
n=$(grep -c '' log.jsonl)
is "$(sed -n 1p got)" "$n ['client_gone', 'generated_tokens', 'prompt_tokens', 'request', 'samples', 'seconds', 'status', 'time'] 1 4 24 False" \
    "--log-json: a generation's line, its samples and tokens"
is "$(sed -n 2p got)" "GET /v2/models/gpt2/ready ['request', 'seconds', 'status', 'time']" \
    "--log-json: an error's line"
# the requests sent above, each once, health probes aside
is "$(grep -vc '"GET /health"' log.jsonl)" "$(grep -c '"request"' log.jsonl)" "--log-json: only this test's requests"

# --- --api-key-file: Bearer on /v2 too; the health paths open.
echo s3cret >key
serve_start auth --api-key-file key
get a /v2/health/live
answer a 200 '{"live":true}' "with a key: /v2/health/live needs none"
get a /v2/health/ready
answer a 200 '{"ready":true}' "with a key: /v2/health/ready needs none"
get a /v2/models/ck/ready
answer a 401 '{"error":"no API key: send Authorization: Bearer KEY"}' "with a key: /v2/models/ck/ready needs it"
get a /v2
answer a 401 '{"error":"no API key: send Authorization: Bearer KEY"}' "with a key: /v2 needs it"
curl -s -o a -w '%{http_code}' -H 'Authorization: Bearer wrong' "$url$G" -d "{$P}" >a.code
answer a 401 '{"error":"Incorrect API key provided"}' "a wrong key: 401"
curl -s -o a -w '%{http_code}' -H 'Authorization: Bearer s3cret' "$url$G" -d "{$P,\"max_tokens\":24,\"random_seed\":7}" >a.code
field a text_output >a.text
is "$(cat a.code)" 200 "the key: 200"
same g.text a.text "the key: the same seeded text"
serve_stop
done_testing
