#!/usr/bin/env python3
"""hf-check.py - does Hugging Face transformers read an owt checkpoint as owt does?

    python3 contrib/oracle/hf-check.py CKPT SCORED.jsonl

CKPT is a checkpoint directory (model.safetensors + config.json, as
gpt-train saves it); SCORED.jsonl is what `gpt-sample --score --ids` wrote
for texts shorter than the context. The checkpoint is loaded with
transformers.GPT2LMHeadModel.from_pretrained, no tensor may be missing or
left over, and for each record transformers' mean loss over the ids (its
labels shifted by one, as gpt-sample predicts each token from its prefix)
must equal the record's nll within 1e-4 of it. Output is TAP.
"""
import json
import sys

import torch
from transformers import GPT2LMHeadModel


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    ckpt, scored = sys.argv[1], sys.argv[2]
    n = 0
    failed = 0

    def ok(cond, what):
        nonlocal n, failed
        n += 1
        failed += not cond
        print(f"{'ok' if cond else 'not ok'} {n} - {what}")

    model, info = GPT2LMHeadModel.from_pretrained(
        ckpt, torch_dtype=torch.float32, output_loading_info=True)
    model.eval()
    missing = [k for k in info.get("missing_keys", []) if not k.endswith(("attn.bias", "attn.masked_bias"))]
    unexpected = list(info.get("unexpected_keys", []))
    ok(not missing and not unexpected,
       f"from_pretrained: nothing missing {missing[:3]} or unexpected {unexpected[:3]}")
    with open(scored, encoding="utf-8") as f:
        for line in f:
            r = json.loads(line)
            ids = torch.tensor([r["ids"]])
            with torch.no_grad():
                loss = model(ids, labels=ids).loss.item()
            ok(abs(loss - r["nll"]) <= 1e-4 * abs(r["nll"]),
               f"{len(r['ids'])} ids: transformers {loss:.7f}, gpt-sample {r['nll']:.7f}")
    print(f"# transformers {__import__('transformers').__version__}, torch {torch.__version__}")
    print(f"1..{n}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
