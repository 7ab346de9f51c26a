#!/usr/bin/python3
"""megatron-ckpt.py - Megatron-LM GPT checkpoints for contrib/install/megatron-to-owt's test, and their forward pass.

usage: megatron-ckpt.py make DIR
       megatron-ckpt.py score PT SCORED.jsonl

make: one tiny GPT-2 (2 layers, hidden 64, 4 heads, 64 positions, the
50257 tokens of GPT-2 padded as Megatron pads them) saved as Megatron-LM
saves it, in several of its layouts, under DIR:

  v3/      latest_checkpointed_iteration.txt and iter_0000010/mp_rank_00/
           model_optim_rng.pt: checkpoint_version 3.0, v2.5's names
           (language_model.encoder.layers.N.self_attention...), fp32, with
           args, an optimizer holding an object of a Megatron class and
           numpy's RNG state, as a real one has
  v1/      checkpoint_version 1.0: QKV rows [heads, head_dim, 3], the older
           '.attention.' names
  v0/      no checkpoint_version (Megatron reads 0): QKV rows [3, heads,
           head_dim], 'transformer' for 'encoder', '.attention.', in
           torch's format from before 1.6 (not a zip)
  tp2/     two tensor-parallel ranks, version 3.0, fp16 weights, vocabulary
           padded to 50432
  tp2v0/   two ranks at version 0, whose QKV order is per rank, bfloat16
  pp2/     a pipeline-parallel layout (mp_rank_00_000, mp_rank_00_001)
  bare.pt  the model's state dict alone (version 3.0's order, no args)
  other.pt a torch file that is no checkpoint

and, for the checks that stop before the weights matter, a tiny model
(1 layer, hidden 8, 2 heads, 100 tokens in 128 rows): payload.pt, whose
pickle would create DIR/payload-ran if its code were run; tp2-half/, a
TP=2 checkpoint without mp_rank_01; postln.pt (--apply-residual-
connection-post-layernorm), erf.pt (--no-bias-gelu-fusion), args.pt (args
say 3 layers), tp2.pt (rank 0's file alone), version.pt
(checkpoint_version 1.5), missing.pt (no layers.0.mlp.dense_4h_to_h.bias),
untied.pt (an output_layer).

The GPT-2-sized layouts hold the same weights, all exact in fp16 and in
bfloat16, so each converts
to the same model.safetensors. Their scale makes every part of the model
matter: a wrong QKV order or the padding rows left in the softmax move
the loss by far more than 1e-4.

score: PT is v3's model_optim_rng.pt; SCORED.jsonl is `gpt-sample --score
--ids` output for a conversion of it. The loss of each record's ids is
computed here from Megatron's layout directly (fused QKV rows split per
head, [out, in] weights, pre-LN, tanh GELU, tied embedding, logits over
the first 50257 rows only, as gpt-sample scores the converted vocabulary)
and must equal the record's nll to 1e-4 of it. Prints the largest relative
difference; exits 0 when all agree, 1 otherwise.

Needs Debian's python3-torch (/usr/bin/python3), nothing else.
"""
import argparse
import json
import math
import os
import sys
import types

import numpy as np
import torch
import torch.nn.functional as F

LAYERS, HIDDEN, HEADS, POSITIONS, VOCAB = 2, 64, 4, 64, 50257


def fake_megatron():
    """Megatron classes a real checkpoint's pickle names, in modules of their own."""
    classes = {}
    for mod, name in (("megatron.fp16.loss_scaler", "DynamicLossScaler"),
                      ("megatron.model.enums", "AttnMaskType")):
        parts = mod.split(".")
        for i in range(1, len(parts) + 1):
            sys.modules.setdefault(".".join(parts[:i]),
                                   types.ModuleType(".".join(parts[:i])))
        cls = type(name, (), {"__module__": mod})
        setattr(sys.modules[mod], name, cls)
        classes[name] = cls
    return classes


GPT2 = {"layers": LAYERS, "hidden": HIDDEN, "heads": HEADS,
        "positions": POSITIONS, "vocab": VOCAB}
# For the checks that stop before the weights matter.
TINY = {"layers": 1, "hidden": 8, "heads": 2, "positions": 16, "vocab": 100}


def padded(vocab, tp):
    div = 128 * tp
    return (vocab + div - 1) // div * div


def weights(dims):
    """Megatron's in-memory model: QKV rows [heads, 3, head_dim], weights [out, in]."""
    g = torch.Generator().manual_seed(1234)
    C, V = dims["hidden"], dims["vocab"]

    def r(*shape, std=1.0, mean=0.0):	# exact in bfloat16 and in fp16
        t = (torch.randn(*shape, generator=g) * std + mean).bfloat16().float()
        return t.masked_fill(t.abs() < 2 ** -12, 0.0)

    w = {"word": r(padded(V, 2), C, std=0.3), "pos": r(dims["positions"], C, std=0.3)}
    # The padding rows, large: left in the softmax they would take most of it.
    w["word"][V:] = r(padded(V, 2) - V, C, std=1.5)
    for i in range(dims["layers"]):
        p = f"layers.{i}."
        w[p + "input_layernorm.weight"] = r(C, std=0.2, mean=1.0)
        w[p + "input_layernorm.bias"] = r(C, std=0.1)
        w[p + "self_attention.query_key_value.weight"] = r(3 * C, C, std=0.15)
        w[p + "self_attention.query_key_value.bias"] = r(3 * C, std=0.1)
        w[p + "self_attention.dense.weight"] = r(C, C, std=0.15)
        w[p + "self_attention.dense.bias"] = r(C, std=0.1)
        w[p + "post_attention_layernorm.weight"] = r(C, std=0.2, mean=1.0)
        w[p + "post_attention_layernorm.bias"] = r(C, std=0.1)
        w[p + "mlp.dense_h_to_4h.weight"] = r(4 * C, C, std=0.15)
        w[p + "mlp.dense_h_to_4h.bias"] = r(4 * C, std=0.1)
        w[p + "mlp.dense_4h_to_h.weight"] = r(C, 4 * C, std=0.1)
        w[p + "mlp.dense_4h_to_h.bias"] = r(C, std=0.1)
    w["final_layernorm.weight"] = r(C, std=0.2, mean=1.0)
    w["final_layernorm.bias"] = r(C, std=0.1)
    return w


def stored_qkv(t, version, heads):
    """[heads, 3, head_dim] rows into the order checkpoint_version stored."""
    hd = t.shape[0] // (3 * heads)
    rest = tuple(t.shape[1:])
    t = t.reshape((heads, 3, hd) + rest)
    if version == 0:
        t = t.transpose(0, 1)
    elif version == 1.0:
        t = t.transpose(1, 2)
    return t.reshape((-1,) + rest).contiguous()


def shard(w, dims, tp, rank, version, dtype):
    """Rank rank's tensors, with Megatron's names, as a state dict's 'model'."""
    C, H = dims["hidden"], dims["heads"]
    col = lambda t, n: t.chunk(tp, dim=n)[rank]   # noqa: E731
    word = w["word"][:padded(dims["vocab"], tp)]
    enc = {}
    for k, t in w.items():
        if not k.startswith("layers.") and not k.startswith("final_"):
            continue
        if "query_key_value" in k:
            rest = tuple(t.shape[1:])
            mine = t.reshape((H, 3 * C // H) + rest).chunk(tp)[rank]
            t = stored_qkv(mine.reshape((-1,) + rest), version, H // tp)
        elif "dense_h_to_4h" in k:
            t = col(t, 0)
        elif k.endswith(("attention.dense.weight", "dense_4h_to_h.weight")):
            t = col(t, 1)
        name = k
        if version < 2.0:
            name = name.replace(".self_attention.", ".attention.")
        enc[name] = t.to(dtype).clone()
    emb = {"word_embeddings": {"weight": col(word, 0).to(dtype).clone()},
           "position_embeddings": {"weight": w["pos"].to(dtype).clone()}}
    return {"language_model": {"embedding": emb,
                               "transformer" if version == 0 else "encoder": enc}}


def checkpoint(dims, tp, rank, version, dtype, fake, **over):
    """Rank rank's model_optim_rng.pt contents; over: args to change."""
    args = argparse.Namespace(
        num_layers=dims["layers"], hidden_size=dims["hidden"],
        num_attention_heads=dims["heads"],
        max_position_embeddings=dims["positions"], seq_length=dims["positions"],
        padded_vocab_size=padded(dims["vocab"], tp), tensor_model_parallel_size=tp,
        pipeline_model_parallel_size=1, hidden_dropout=0.1,
        attention_dropout=0.1, layernorm_epsilon=1e-5, bias_gelu_fusion=True,
        openai_gelu=False, apply_residual_connection_post_layernorm=False,
        fp16=dtype == torch.float16, params_dtype=dtype,
        attn_mask_type=fake["AttnMaskType"]())
    for k, v in over.items():
        setattr(args, k, v)
    ck = {"args": args, "iteration": 10,
          "model": shard(weights(dims), dims, tp, rank, version, dtype),
          "optimizer": {"loss_scaler": fake["DynamicLossScaler"](), "state": {}},
          "np_rng_state": np.random.RandomState(1).get_state(),
          "torch_rng_state": torch.get_rng_state()}
    if version != 0:
        ck["checkpoint_version"] = version
    return ck


def save(d, tp, version, dtype, fake, dims=GPT2, ranks=None, legacy=False):
    it = os.path.join(d, "iter_0000010")
    for rank in range(tp) if ranks is None else ranks:
        rd = os.path.join(it, "mp_rank_%02d" % rank)
        os.makedirs(rd)
        torch.save(checkpoint(dims, tp, rank, version, dtype, fake),
                   os.path.join(rd, "model_optim_rng.pt"),
                   _use_new_zipfile_serialization=not legacy)
    with open(os.path.join(d, "latest_checkpointed_iteration.txt"), "w") as f:
        f.write("10")


class Payload:
    """Unpickled by plain pickle, it creates the file it names."""

    def __init__(self, path):
        self.path = path

    def __reduce__(self):
        return (os.system, (f"touch '{self.path}'",))


def tiny(d, name, version=3.0, drop=None, add=None, **over):
    fake = fake_megatron()
    ck = checkpoint(TINY, 1, 0, version, torch.float32, fake, **over)
    enc = ck["model"]["language_model"]["encoder"]
    if drop:
        del enc[drop]
    if add:
        ck["model"]["language_model"][add] = {"weight": torch.zeros(4, 4)}
    torch.save(ck, os.path.join(d, name))


def make(d):
    fake = fake_megatron()
    save(os.path.join(d, "v3"), 1, 3.0, torch.float32, fake)
    save(os.path.join(d, "v1"), 1, 1.0, torch.float32, fake)
    save(os.path.join(d, "v0"), 1, 0, torch.float32, fake, legacy=True)
    save(os.path.join(d, "tp2"), 2, 3.0, torch.float16, fake)
    save(os.path.join(d, "tp2v0"), 2, 0, torch.bfloat16, fake)
    for s in ("000", "001"):
        rd = os.path.join(d, "pp2", "iter_0000010", "mp_rank_00_" + s)
        os.makedirs(rd)
        torch.save({"model": {}}, os.path.join(rd, "model_optim_rng.pt"))
    with open(os.path.join(d, "pp2", "latest_checkpointed_iteration.txt"), "w") as f:
        f.write("10")
    torch.save(shard(weights(GPT2), GPT2, 1, 0, 3.0, torch.float32),
               os.path.join(d, "bare.pt"))
    torch.save({"weights": [torch.zeros(3)]}, os.path.join(d, "other.pt"))
    # First in the pickle, so that a plain torch.load runs it before it
    # stops at the first Megatron class.
    ck = {"payload": Payload(os.path.join(os.path.abspath(d), "payload-ran"))}
    ck.update(checkpoint(TINY, 1, 0, 3.0, torch.float32, fake))
    torch.save(ck, os.path.join(d, "payload.pt"))
    save(os.path.join(d, "tp2-half"), 2, 3.0, torch.float32, fake, TINY, ranks=[0])
    tiny(d, "postln.pt", apply_residual_connection_post_layernorm=True)
    tiny(d, "erf.pt", bias_gelu_fusion=False)
    tiny(d, "args.pt", num_layers=3)
    tiny(d, "tp2.pt", tensor_model_parallel_size=2)
    tiny(d, "version.pt", version=1.5)
    tiny(d, "missing.pt", drop="layers.0.mlp.dense_4h_to_h.bias")
    tiny(d, "untied.pt", add="output_layer")


def forward(m, ids):
    """Logits over the real vocabulary for ids (T,), from Megatron's state dict m."""
    lm = m["language_model"]
    word = lm["embedding"]["word_embeddings"]["weight"].float()
    pos = lm["embedding"]["position_embeddings"]["weight"].float()
    enc = {k: v.float() for k, v in lm["encoder"].items()}
    T, C = len(ids), word.shape[1]
    HEADS, LAYERS, VOCAB = GPT2["heads"], GPT2["layers"], GPT2["vocab"]
    hd = C // HEADS
    x = word[ids] + pos[:T]
    causal = torch.tril(torch.ones(T, T, dtype=torch.bool))

    def ln(x, name):
        return F.layer_norm(x, (C,), enc[name + ".weight"], enc[name + ".bias"], 1e-5)

    def linear(x, name):	# torch Linear: weight [out, in]
        return x @ enc[name + ".weight"].t() + enc[name + ".bias"]

    for i in range(LAYERS):
        p = f"layers.{i}."
        mixed = linear(ln(x, p + "input_layernorm"), p + "self_attention.query_key_value")
        mixed = mixed.view(T, HEADS, 3, hd)	# Megatron: [np, 3 * hn] split in 3
        q, k, v = (mixed[:, :, j, :].transpose(0, 1) for j in range(3))
        s = (q @ k.transpose(1, 2)) / math.sqrt(hd)
        s = s.masked_fill(~causal, -10000.0).softmax(dim=-1)
        y = (s @ v).transpose(0, 1).reshape(T, C)
        x = x + linear(y, p + "self_attention.dense")
        h = linear(ln(x, p + "post_attention_layernorm"), p + "mlp.dense_h_to_4h")
        h = 0.5 * h * (1.0 + torch.tanh(0.7978845608028654 * h * (1.0 + 0.044715 * h * h)))
        x = x + linear(h, p + "mlp.dense_4h_to_h")
    x = ln(x, "final_layernorm")
    return x @ word[:VOCAB].t()


def score(pt, scored):
    fake_megatron()
    kw = {"weights_only": False} if "weights_only" in torch.load.__code__.co_varnames else {}
    ck = torch.load(pt, map_location="cpu", **kw)
    worst, n = 0.0, 0
    with open(scored, encoding="utf-8") as f:
        for line in f:
            r = json.loads(line)
            ids = torch.tensor(r["ids"])
            with torch.no_grad():
                logits = forward(ck["model"], ids)
            nll = F.cross_entropy(logits[:-1], ids[1:]).item()
            worst = max(worst, abs(nll - r["nll"]) / abs(nll))
            n += 1
    print(f"{n} records, largest relative difference {worst:.3g}")
    return 0 if n > 0 and worst <= 1e-4 else 1


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "make":
        make(sys.argv[2])
        return 0
    if len(sys.argv) == 4 and sys.argv[1] == "score":
        return score(sys.argv[2], sys.argv[3])
    sys.exit(__doc__)


if __name__ == "__main__":
    sys.exit(main())
