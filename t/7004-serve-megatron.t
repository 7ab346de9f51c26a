#!/bin/sh
# gpt-sample --listen as Megatron-LM's text generation server (23.04):
# PUT /api sent as tools/text_generation_cli.py sends it (python3-requests,
# json.dumps and its header), the answer's text, segments and logprobs,
# scoring with tokens_to_generate 0 against the generation's own
# log-probabilities, random_seed, add_BOS, Megatron's budget (every prompt
# may grow to the longest plus tokens_to_generate), stop_on_eol, greedy
# top_k 1, and each bad field's 400 with Megatron's words.
. "${OWT_SRC:-.}/t/lib.sh"
. "$OWT_SRC/t/serve.sh"

cd "$T" || exit 3
py=/usr/bin/python3
[ -x "$py" ] || skip_all "no /usr/bin/python3"
"$py" -c 'import requests' 2>/dev/null ||
    skip_all "no python3-requests (apt-get install python3-requests)"
serve_model 256
serve_start mt --parallel 4

cat >mt.py <<'PY'
import json, sys, requests

url = sys.argv[1] + "/api"
out = open("results", "w")

def put(data, raw=None):
    # as tools/text_generation_cli.py sends it
    headers = {'Content-Type': 'application/json; charset=UTF-8'}
    return requests.put(url, data=raw if raw is not None else json.dumps(data),
                        headers=headers)

def check(cond, desc, detail=""):
    out.write("%d|%s|%s\n" % (1 if cond else 0, desc, str(detail)[:300].replace("\n", " ")))

r = put({"prompts": ["And the LORD said unto"], "tokens_to_generate": 8})
a = r.json()
check(r.status_code == 200, "the CLI's request: 200", r.status_code)
check(a["text"][0].startswith("And the LORD said unto"), "text[0] holds the prompt", a)
check(len(a["segments"][0]) == 5 + 8, "segments: 5 prompt and 8 generated tokens", a["segments"])
check("".join(a["segments"][0]) == a["text"][0], "segments make the text", a)
check(a["logprobs"] is None, "logprobs null unless asked", a)

g = put({"prompts": ["In the beginning God created"], "tokens_to_generate": 6,
         "logprobs": True, "random_seed": 5}).json()
n = len(g["segments"][0])
check(len(g["logprobs"][0]) == n - 1, "logprobs: one a token after the first", g)
s = put({"prompts": ["In the beginning God created"], "tokens_to_generate": 0,
         "logprobs": True}).json()
check(s["text"][0] == "In the beginning God created" and len(s["segments"][0]) == 5,
      "tokens_to_generate 0: the prompt alone, scored", s)
check(len(s["logprobs"][0]) == 4 and all(abs(x - y) < 1e-4 for x, y in
      zip(s["logprobs"][0], g["logprobs"][0][:4])),
      "scores are the generation's prompt log-probabilities", (s["logprobs"], g["logprobs"]))
check(all(x <= 0 for x in g["logprobs"][0]), "log-probabilities are at most 0", g["logprobs"])
g2 = put({"prompts": ["In the beginning God created"], "tokens_to_generate": 6,
          "logprobs": True, "random_seed": 5}).json()
check(g2["text"] == g["text"], "random_seed: the same text again", (g, g2))

b = put({"prompts": ["And it came to pass that the", "And"], "tokens_to_generate": 4}).json()
la, lb = len(b["segments"][0]), len(b["segments"][1])
check(la == lb == 7 + 4, "a shorter prompt grows to the longest plus tokens_to_generate", (la, lb))

e = put({"prompts": [""], "add_BOS": True, "tokens_to_generate": 3}).json()
check(e["text"][0].startswith("<|endoftext|>") and e["segments"][0][0] == "<|endoftext|>",
      "add_BOS: <|endoftext|> first", e)

k1 = put({"prompts": ["The"], "top_k": 1, "tokens_to_generate": 10}).json()
k2 = put({"prompts": ["The"], "top_k": 1, "tokens_to_generate": 10, "temperature": 50.0}).json()
check(k1["text"] == k2["text"], "top_k 1: greedy, whatever the temperature", (k1, k2))

l = put({"prompts": ["And", "The", "In"], "stop_on_eol": True, "tokens_to_generate": 40,
         "random_seed": 3}).json()
ok = all("\n" not in "".join(seg[1:-1]) for seg in l["segments"])
check(ok, "stop_on_eol: no line break before the last token", l["segments"])

bw = put({"prompts": ["The"], "beam_width": 1, "tokens_to_generate": 4})
check(bw.status_code == 200 and "scores" in bw.json(), "beam_width 1: greedy with scores", bw.text)

bad = [
    ({"tokens_to_generate": 4}, "prompts argument required"),
    ({"prompts": ["a"], "max_len": 4}, "max_len is no longer used.  Replace with tokens_to_generate"),
    ({"prompts": ["a"], "sentences": ["a"]}, "sentences is no longer used.  Replace with prompts"),
    ({"prompts": "a"}, "prompts is not a list of strings"),
    ({"prompts": []}, "prompts is empty"),
    ({"prompts": ["a"] * 129}, "Maximum number of prompts is 128"),
    ({"prompts": ["a"], "tokens_to_generate": 2.5}, "tokens_to_generate must be an integer greater than 0"),
    ({"prompts": ["a"], "tokens_to_generate": -1}, "tokens_to_generate must be an integer greater than or equal to 0"),
    ({"prompts": ["a"], "logprobs": 1}, "logprobs must be a boolean value"),
    ({"prompts": ["a"], "tokens_to_generate": 0}, "tokens_to_generate=0 implies logprobs should be True"),
    ({"prompts": ["a"], "temperature": 0}, "temperature must be a positive number less than or equal to 100.0"),
    ({"prompts": ["a"], "top_k": 1001}, "top_k must be equal to or greater than 0 and less than or equal to 1000"),
    ({"prompts": ["a"], "top_k": 5, "top_p": 0.5}, "cannot set both top-k and top-p samplings."),
    ({"prompts": ["a"], "top_p": 1.5}, "top_p must be less than or equal to 1.0"),
    ({"prompts": ["a"], "top_p_decay": 0.5}, "top_p_decay cannot be set without top_p"),
    ({"prompts": ["a"], "top_p": 0.5, "top_p_bound": 0.9}, "top_p_bound must be greater than 0 and less than top_p"),
    ({"prompts": [""]}, "Empty prompts require add_BOS=true"),
    ({"prompts": ["a"], "stop_on_eol": "yes"}, "stop_on_eol must be a boolean value"),
    ({"prompts": ["a"], "random_seed": -1}, "random_seed must be a positive integer"),
    ({"prompts": ["a"], "beam_width": 0}, "beam_width must be an integer > 1"),
    ({"prompts": ["a", "b"], "beam_width": 2}, "When doing beam_search, batch size must be 1"),
    ({"prompts": ["a"], "beam_width": 2}, "beam_width > 1 is not supported: beam search is not built"),
    ({"prompts": ["a"], "stop_token": "x"}, "stop_token must be an integer"),
    ({"prompts": ["a"], "length_penalty": "x"}, "length_penalty must be a float"),
    ({"prompts": ["a"], "tokens_to_generate": 300}, "Length of prompt + tokens_to_generate longer than allowed"),
]
for data, words in bad:
    r = put(data)
    check(r.status_code == 400 and r.json() == words, "400: " + words, (r.status_code, r.text))
r = put(None, raw="{")
check(r.status_code == 400, "bad JSON: 400", r.status_code)
PY
run "$py" mt.py "$url"
is "$rc" 0 "the client ran"
while IFS='|' read -r good desc detail; do
	if [ "$good" = 1 ]; then
		ok "$desc"
	else
		not_ok "$desc"
		echo "# $detail"
	fi
done <results
serve_stop
is "$serve_rc" 0 "SIGTERM: exit 0"
done_testing
