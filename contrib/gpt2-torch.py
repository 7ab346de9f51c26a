#!/usr/bin/python3
"""gpt2-torch.py - the PyTorch reference for gpt-train's GPT-2.

usage: gpt2-torch.py check DIR
       gpt2-torch.py bench [--layers n] [--hidden n] [--heads n] [--vocab n]
                           [--seq n] [--batch n] [--steps n] [--threads n]

check: DIR is what `unit-gpt dump DIR` wrote (t/unit-gpt.c): the initial
weights as owt's model.safetensors and config.json, the token batches and
hyperparameters in spec.json, and owt's results in out.safetensors. The
model is built from those files with plain PyTorch (Hugging Face's GPT-2
layouts: Conv1D weights are (in, out)), run on the same tokens, and every
result is compared: logits, loss, every gradient, and every weight after
two AdamW iterations with gradient accumulation and clipping. A tensor
passes when max |owt - torch| <= 1e-4 * max |torch|. Output is TAP.

bench: time training iterations (forward, backward, clipping, AdamW) of a
randomly initialised model on random tokens, the same work gpt-train
does per iteration; prints the median milliseconds per iteration and the
BLAS library PyTorch loaded.

Needs Debian's python3-torch (/usr/bin/python3), nothing else.
"""
import json
import math
import struct
import sys
import time

import torch
import torch.nn.functional as F

TOL = 1e-4


def read_safetensors(path):
    with open(path, "rb") as f:
        data = f.read()
    n = struct.unpack("<Q", data[:8])[0]
    header = json.loads(data[8:8 + n])
    out = {}
    for name, t in header.items():
        if name == "__metadata__":
            continue
        if t["dtype"] != "F32":
            raise SystemExit(f"{path}: {name}: dtype {t['dtype']} is not F32")
        b, e = t["data_offsets"]
        raw = bytearray(data[8 + n + b:8 + n + e])
        out[name] = torch.frombuffer(raw, dtype=torch.float32).reshape(t["shape"]).clone()
    return out


class Block(torch.nn.Module):
    def __init__(self, c, eps):
        super().__init__()
        self.ln_1 = torch.nn.LayerNorm(c, eps=eps)
        self.ln_2 = torch.nn.LayerNorm(c, eps=eps)
        self.c_attn_w = torch.nn.Parameter(torch.empty(c, 3 * c))
        self.c_attn_b = torch.nn.Parameter(torch.empty(3 * c))
        self.attn_proj_w = torch.nn.Parameter(torch.empty(c, c))
        self.attn_proj_b = torch.nn.Parameter(torch.empty(c))
        self.c_fc_w = torch.nn.Parameter(torch.empty(c, 4 * c))
        self.c_fc_b = torch.nn.Parameter(torch.empty(4 * c))
        self.mlp_proj_w = torch.nn.Parameter(torch.empty(4 * c, c))
        self.mlp_proj_b = torch.nn.Parameter(torch.empty(c))


class GPT2(torch.nn.Module):
    """GPT-2 as owt and Hugging Face define it: pre-LN, tanh GELU, tied output."""

    def __init__(self, cfg):
        super().__init__()
        c = cfg["n_embd"]
        self.nh = cfg["n_head"]
        self.wte = torch.nn.Parameter(torch.empty(cfg["vocab_size"], c))
        self.wpe = torch.nn.Parameter(torch.empty(cfg["n_positions"], c))
        self.h = torch.nn.ModuleList(Block(c, cfg["layer_norm_epsilon"])
                                     for _ in range(cfg["n_layer"]))
        self.ln_f = torch.nn.LayerNorm(c, eps=cfg["layer_norm_epsilon"])

    def named_hf(self):
        """(Hugging Face name, parameter) for every tensor."""
        yield "transformer.wte.weight", self.wte
        yield "transformer.wpe.weight", self.wpe
        for i, b in enumerate(self.h):
            p = f"transformer.h.{i}."
            yield p + "ln_1.weight", b.ln_1.weight
            yield p + "ln_1.bias", b.ln_1.bias
            yield p + "attn.c_attn.weight", b.c_attn_w
            yield p + "attn.c_attn.bias", b.c_attn_b
            yield p + "attn.c_proj.weight", b.attn_proj_w
            yield p + "attn.c_proj.bias", b.attn_proj_b
            yield p + "ln_2.weight", b.ln_2.weight
            yield p + "ln_2.bias", b.ln_2.bias
            yield p + "mlp.c_fc.weight", b.c_fc_w
            yield p + "mlp.c_fc.bias", b.c_fc_b
            yield p + "mlp.c_proj.weight", b.mlp_proj_w
            yield p + "mlp.c_proj.bias", b.mlp_proj_b
        yield "transformer.ln_f.weight", self.ln_f.weight
        yield "transformer.ln_f.bias", self.ln_f.bias

    def load(self, tensors):
        with torch.no_grad():
            for name, p in self.named_hf():
                p.copy_(tensors[name])

    def forward(self, idx, targets=None):
        B, T = idx.shape
        x = self.wte[idx] + self.wpe[:T]
        mask = torch.tril(torch.ones(T, T, dtype=torch.bool))
        for b in self.h:
            C = x.shape[-1]
            q, k, v = (b.ln_1(x) @ b.c_attn_w + b.c_attn_b).split(C, dim=2)
            q, k, v = (t.view(B, T, self.nh, C // self.nh).transpose(1, 2) for t in (q, k, v))
            att = (q @ k.transpose(-2, -1)) / math.sqrt(C // self.nh)
            att = att.masked_fill(~mask, float("-inf")).softmax(dim=-1)
            y = (att @ v).transpose(1, 2).reshape(B, T, C)
            x = x + (y @ b.attn_proj_w + b.attn_proj_b)
            hid = F.gelu(b.ln_2(x) @ b.c_fc_w + b.c_fc_b, approximate="tanh")
            x = x + (hid @ b.mlp_proj_w + b.mlp_proj_b)
        logits = self.ln_f(x) @ self.wte.t()
        loss = None
        if targets is not None:
            loss = F.cross_entropy(logits.reshape(-1, logits.size(-1)), targets.reshape(-1))
        return logits, loss

    def optimizer(self, lr, wd, betas, eps):
        decay = [p for n, p in self.named_hf() if n.endswith(".weight") and "ln_" not in n]
        other = [p for n, p in self.named_hf() if not (n.endswith(".weight") and "ln_" not in n)]
        return torch.optim.AdamW([{"params": decay, "weight_decay": wd},
                                  {"params": other, "weight_decay": 0.0}],
                                 lr=lr, betas=betas, eps=eps)


class Tap:
    def __init__(self):
        self.n = 0
        self.failed = 0

    def ok(self, cond, what):
        self.n += 1
        if not cond:
            self.failed += 1
        print(f"{'ok' if cond else 'not ok'} {self.n} - {what}")

    def close(self, what, got, want):
        diff = (got - want).abs().max().item()
        scale = want.abs().max().item()
        self.ok(diff <= TOL * scale, f"{what}: max diff {diff:.3g} <= 1e-4 * {scale:.3g}")

    def done(self):
        print(f"1..{self.n}")
        return 1 if self.failed else 0


def check(d):
    spec = json.load(open(f"{d}/spec.json"))
    cfg = json.load(open(f"{d}/init/iter_0000000/config.json"))
    owt = read_safetensors(f"{d}/out.safetensors")
    model = GPT2(cfg)
    model.load(read_safetensors(f"{d}/init/iter_0000000/model.safetensors"))
    tap = Tap()
    tok = torch.tensor(spec["tokens"], dtype=torch.long)
    x, y = tok[:, :-1], tok[:, 1:]

    logits, loss = model(x, y)
    tap.close("logits", owt["logits"], logits.detach().reshape(owt["logits"].shape))
    tap.close("loss", owt["loss"], loss.detach().reshape(1))
    loss.backward()
    for name, p in model.named_hf():
        tap.close("gradient " + name, owt["grad." + name], p.grad)

    a = spec["adamw"]
    opt = model.optimizer(0.0, a["weight_decay"], (a["beta1"], a["beta2"]), a["eps"])
    for i, step in enumerate(spec["steps"]):
        opt.zero_grad(set_to_none=False)
        total = 0.0
        for mb in step["micro_batches"]:
            t = torch.tensor(mb, dtype=torch.long)
            _, l = model(t[:, :-1], t[:, 1:])
            (l / len(step["micro_batches"])).backward()
            total += l.item() / len(step["micro_batches"])
        norm = torch.nn.utils.clip_grad_norm_(model.parameters(), spec["clip"])
        for g in opt.param_groups:
            g["lr"] = step["lr"]
        opt.step()
        tap.close(f"iteration {i + 1} loss", torch.tensor([step["loss"]]), torch.tensor([total]))
        tap.close(f"iteration {i + 1} gradient norm", torch.tensor([step["grad_norm"]]),
                  torch.tensor([norm.item()]))
    for name, p in model.named_hf():
        tap.close("after two AdamW iterations " + name, owt["final." + name], p.detach())
    return tap.done()


def blas_library():
    try:
        with open("/proc/self/maps") as f:
            libs = {line.split()[-1] for line in f if "blas" in line}
        return ", ".join(sorted(libs)) or "none found"
    except OSError:
        return "unknown"


def bench(argv):
    o = {"layers": 4, "hidden": 128, "heads": 4, "vocab": 50257, "seq": 64,
         "batch": 4, "steps": 10, "threads": 2}
    while argv:
        k = argv.pop(0)
        if not k.startswith("--") or k[2:] not in o or not argv:
            raise SystemExit(__doc__)
        o[k[2:]] = int(argv.pop(0))
    torch.set_num_threads(o["threads"])
    torch.manual_seed(1)
    cfg = {"n_embd": o["hidden"], "n_head": o["heads"], "vocab_size": o["vocab"],
           "n_positions": max(1024, o["seq"]), "n_layer": o["layers"],
           "layer_norm_epsilon": 1e-5}
    model = GPT2(cfg)
    with torch.no_grad():
        for name, p in model.named_hf():
            if "ln_" in name:
                p.fill_(1.0 if name.endswith("weight") else 0.0)
            elif name.endswith("bias"):
                p.zero_()
            else:
                p.normal_(0, 0.02)
    opt = model.optimizer(6e-4, 0.1, (0.9, 0.95), 1e-8)
    times = []
    for _ in range(o["steps"]):
        tok = torch.randint(0, o["vocab"], (o["batch"], o["seq"] + 1))
        t0 = time.perf_counter()
        opt.zero_grad(set_to_none=True)
        _, loss = model(tok[:, :-1], tok[:, 1:])
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        times.append(time.perf_counter() - t0)
    steady = sorted(times[1:] if len(times) > 1 else times)
    ms = steady[len(steady) // 2] * 1e3
    print(f"ms_per_step {ms:.1f}")
    print(f"tokens_per_s {o['batch'] * o['seq'] / ms * 1e3:.0f}")
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads, BLAS {blas_library()}")
    return 0


def main():
    if len(sys.argv) >= 3 and sys.argv[1] == "check":
        return check(sys.argv[2])
    if len(sys.argv) >= 2 and sys.argv[1] == "bench":
        return bench(sys.argv[2:])
    sys.stderr.write(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main())
