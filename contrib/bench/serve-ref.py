#!/usr/bin/python3
"""serve-ref.py - the serving benchmark's reference server (contrib/bench/serve.sh)

Built like Megatron-LM's tools/run_text_generation_server.py: Flask, and
one request at a time behind a global lock (Megatron batches only the
prompts of one request). The model is PyTorch GPT-2 with a key/value
cache: contrib/oracle/gpt2-torch.py's GPT2 and its Cached decoder (a cache
preallocated per request and written in place), on owt's checkpoint.
It answers the part of OpenAI's POST /v1/completions the benchmark sends:
a prompt of token ids, max_tokens, greedy (temperature 0), every token
generated (no end of text), streamed as server-sent events, a token an
event, ending with "data: [DONE]", or not streamed. The text is decoded
with GPT-2's byte-level vocabulary (data/gpt2/encoder.json), as owt does.

usage: serve-ref.py CHECKPOINT_DIR THREADS
  CHECKPOINT_DIR holds model.safetensors and config.json (an iter_*
  directory of gpt-train --save). Prints "port N" when it listens on
  127.0.0.1 (a free port).
"""
import importlib.util
import json
import os
import sys
import threading

import torch
from flask import Flask, Response, request
from werkzeug.serving import make_server

HERE = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location(
    "gpt2torch", os.path.join(HERE, "..", "oracle", "gpt2-torch.py"))
gt = importlib.util.module_from_spec(spec)
spec.loader.exec_module(gt)


def byte_decoder():
    """GPT-2's mapping of the vocabulary's characters back to bytes."""
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + \
        list(range(ord("®"), ord("ÿ") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return {chr(c): b for b, c in zip(bs, cs)}


def main():
    if len(sys.argv) != 3:
        sys.stderr.write(__doc__)
        return 2
    torch.set_num_threads(int(sys.argv[2]))
    model = gt.load_model(sys.argv[1])
    model.eval()
    enc = json.load(open(os.path.join(HERE, "..", "..", "data", "gpt2", "encoder.json")))
    bd = byte_decoder()
    token_bytes = {i: bytes(bd[ch] for ch in s) for s, i in enc.items()}
    lock = threading.Lock()
    app = Flask("serve-ref")

    def generate(ids, n):
        """Greedy tokens after ids, n of them, under the lock."""
        with lock, torch.no_grad():
            dec = gt.Cached(model, 1, len(ids) + n)
            logits = dec(torch.tensor([ids]), 0)
            for i in range(n):
                nxt = int(logits[0].argmax())
                yield nxt
                if i + 1 < n:
                    logits = dec(torch.tensor([[nxt]]), len(ids) + i)

    def text(toks):
        return b"".join(token_bytes.get(t, b"") for t in toks).decode("utf-8", "replace")

    @app.route("/health", methods=["GET"])
    def health():
        return {"status": "ok"}

    @app.route("/v1/completions", methods=["POST"])
    def completions():
        r = request.get_json(force=True)
        ids = r.get("prompt")
        n = r.get("max_tokens", 16)
        if not isinstance(ids, list) or not ids or not all(isinstance(i, int) for i in ids) \
                or not isinstance(n, int) or n < 1 or len(ids) + n > model.wpe.shape[0]:
            return {"error": {"message": "prompt: a list of token ids; max_tokens >= 1"}}, 400
        if not r.get("stream"):
            toks = list(generate(ids, n))
            return {"object": "text_completion", "choices": [
                {"text": text(toks), "index": 0, "finish_reason": "length"}],
                "usage": {"prompt_tokens": len(ids), "completion_tokens": n,
                          "total_tokens": len(ids) + n}}

        def events():
            for t in generate(ids, n):
                yield "data: " + json.dumps({"object": "text_completion", "choices": [
                    {"text": text([t]), "index": 0, "finish_reason": None}]}) + "\n\n"
            yield "data: " + json.dumps({"choices": [], "usage": {
                "prompt_tokens": len(ids), "completion_tokens": n,
                "total_tokens": len(ids) + n}}) + "\n\n"
            yield "data: [DONE]\n\n"
        return Response(events(), mimetype="text/event-stream")

    srv = make_server("127.0.0.1", 0, app, threaded=True)
    print(f"port {srv.server_port}", flush=True)
    srv.serve_forever()
    return 0


if __name__ == "__main__":
    sys.exit(main())
