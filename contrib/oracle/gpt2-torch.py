#!/usr/bin/python3
"""gpt2-torch.py - the PyTorch reference for gpt-train's GPT-2.

usage: gpt2-torch.py check DIR
       gpt2-torch.py bench [--layers n] [--hidden n] [--heads n] [--vocab n]
                           [--seq n] [--batch n] [--steps n] [--threads n]
       gpt2-torch.py greedy MODEL FILE
       gpt2-torch.py score MODEL FILE STRIDE
       gpt2-torch.py hfdir MODEL DIR
       gpt2-torch.py eod MODEL DIR
       gpt2-torch.py bench-sample [--layers n] [--hidden n] [--heads n]
                           [--batch n] [--prompt n] [--tokens n] [--threads n]

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

greedy: FILE is gpt-sample's JSONL output with --greedy --ids for the
model in MODEL (a directory with model.safetensors and config.json). Each
record's prompt and continuation are run through the model at once, and
each continuation token must be the model's most likely one at its
position, except where the two most likely logits are within 1e-4 (a
near-tie that fp32 rounding may decide either way); a record that ended
at <|endoftext|> must have it most likely next. Output is TAP.

score: FILE is gpt-sample --score --ids output; each record's nll must
equal the mean cross-entropy PyTorch computes over the same windows
(STRIDE tokens apart) to 1e-5. Output is TAP.

hfdir: write MODEL's weights to DIR as a Hugging Face download lays them
out: names without "transformer.", the causal-mask buffers
"h.N.attn.bias" and "h.N.attn.masked_bias", F16 where asked by
OWT_HF_DTYPE=F16, and a complete GPT2Config config.json.

eod: write a copy of MODEL to DIR whose most likely next token is always
<|endoftext|> (50256), by a large final LayerNorm bias along its embedding.

bench-sample: tokens per second of generation with a key/value cache
(preallocated, written in place) for a batch of prompts, greedy, on a
randomly initialised model; prints the median of 3 runs.

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
        mask = torch.tril(torch.ones(T, T, dtype=torch.bool, device=x.device))
        for b in self.h:
            C = x.shape[-1]
            q, k, v = (b.ln_1(x) @ b.c_attn_w + b.c_attn_b).split(C, dim=2)
            q, k, v = (t.view(B, T, self.nh, C // self.nh).transpose(1, 2) for t in (q, k, v))
            if x.is_cuda:	# the GPU benchmark's reference: fused attention
                y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            else:
                att = (q @ k.transpose(-2, -1)) / math.sqrt(C // self.nh)
                y = att.masked_fill(~mask, float("-inf")).softmax(dim=-1) @ v
            y = y.transpose(1, 2).reshape(B, T, C)
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


def options(argv, o):
    """--name n pairs over the defaults in o."""
    while argv:
        k = argv.pop(0)
        if not k.startswith("--") or k[2:] not in o or not argv:
            raise SystemExit(__doc__)
        o[k[2:]] = int(argv.pop(0))
    return o


def bench(argv):
    o = options(argv, {"layers": 4, "hidden": 128, "heads": 4, "vocab": 50257,
                       "seq": 64, "batch": 4, "steps": 10, "threads": 2,
                       "cuda": 0, "bf16": 0})
    dev = "cuda" if o["cuda"] else "cpu"
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
    model.to(dev)
    opt = model.optimizer(6e-4, 0.1, (0.9, 0.95), 1e-8)
    # --cuda 1 --bf16 1: autocast to bf16 on the GPU, fp32 master weights
    amp = torch.autocast(dev, dtype=torch.bfloat16, enabled=bool(o["bf16"]))
    times = []
    for _ in range(o["steps"]):
        tok = torch.randint(0, o["vocab"], (o["batch"], o["seq"] + 1), device=dev)
        if o["cuda"]:
            torch.cuda.synchronize()
        t0 = time.perf_counter()
        opt.zero_grad(set_to_none=True)
        with amp:
            _, loss = model(tok[:, :-1], tok[:, 1:])
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if o["cuda"]:
            torch.cuda.synchronize()
        times.append(time.perf_counter() - t0)
    steady = sorted(times[1:] if len(times) > 1 else times)
    ms = steady[len(steady) // 2] * 1e3
    print(f"ms_per_step {ms:.1f}")
    print(f"tokens_per_s {o['batch'] * o['seq'] / ms * 1e3:.0f}")
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads, BLAS {blas_library()}")
    return 0


def load_model(d):
    cfg = json.load(open(f"{d}/config.json"))
    if "n_positions" not in cfg:
        cfg["n_positions"] = cfg["n_ctx"]
    cfg.setdefault("layer_norm_epsilon", 1e-5)
    model = GPT2(cfg)
    t = read_safetensors(f"{d}/model.safetensors")
    t = {(k if k.startswith("transformer.") else "transformer." + k): v for k, v in t.items()}
    model.load(t)
    return model


def greedy(d, path):
    model = load_model(d)
    tap = Tap()
    checked = skipped = 0
    with torch.no_grad():
        for n, line in enumerate(open(path), 1):
            r = json.loads(line)
            p, g = r["prompt_ids"], r["ids"]
            seq = p + g
            logits, _ = model(torch.tensor([seq]))
            logits = logits[0]
            bad = None
            want = g + ([50256] if r["finished"] else [])
            for j, tok in enumerate(want):
                row = logits[len(p) - 1 + j]
                top = torch.topk(row, 2)
                if top.values[0] - top.values[1] < 1e-4:
                    skipped += 1
                    break
                checked += 1
                if top.indices[0].item() != tok:
                    bad = (j, tok, top.indices[0].item())
                    break
            tap.ok(bad is None, f"record {n}: {len(g)} greedy tokens are PyTorch's argmax" +
                   (f" (token {bad[0]}: {bad[1]}, PyTorch {bad[2]})" if bad else ""))
    print(f"# {checked} tokens checked, {skipped} records cut at a near-tie")
    return tap.done()


def score(d, path, stride):
    model = load_model(d)
    T = model.wpe.shape[0]
    tap = Tap()
    with torch.no_grad():
        for n, line in enumerate(open(path), 1):
            r = json.loads(line)
            ids = r["ids"]
            losses = []
            s, done = 0, 1
            while done < len(ids):
                e = min(len(ids), s + T)
                if e > done:
                    x = torch.tensor([ids[s:e - 1]])
                    logits, _ = model(x)
                    lp = F.cross_entropy(logits[0], torch.tensor(ids[s + 1:e]), reduction="none")
                    losses += lp[done - s - 1:].tolist()
                    done = e
                s += stride
            want = sum(losses) / len(losses) if losses else None
            if want is None:
                tap.ok(r["nll"] is None and r["tokens"] == 0, f"record {n}: no tokens, nll null")
                continue
            tap.ok(abs(r["nll"] - want) <= 1e-5 and r["tokens"] == len(losses),
                   f"record {n}: nll {r['nll']:.7f}, PyTorch {want:.7f} over {len(losses)} tokens")
    return tap.done()


def write_safetensors(path, tensors, dtype="F32"):
    header, blobs, off = {"__metadata__": {"format": "pt"}}, [], 0
    for name, t in tensors.items():
        t = t.contiguous()
        if dtype == "F16" and t.dtype == torch.float32:
            t = t.half()
        raw = t.numpy().tobytes() if t.dtype != torch.bool else bytes(t.numpy().astype("uint8"))
        dt = {torch.float32: "F32", torch.float16: "F16", torch.bool: "BOOL"}[t.dtype]
        header[name] = {"dtype": dt, "shape": list(t.shape), "data_offsets": [off, off + len(raw)]}
        blobs.append(raw)
        off += len(raw)
    h = json.dumps(header).encode()
    h += b" " * (-len(h) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + b"".join(blobs))


def hfdir(src, dst):
    import os
    model = load_model(src)
    cfg = json.load(open(f"{src}/config.json"))
    T, L = cfg["n_positions"], cfg["n_layer"]
    out = {}
    for name, p in model.named_hf():
        out[name[len("transformer."):]] = p.detach()
    for i in range(L):
        out[f"h.{i}.attn.bias"] = torch.tril(torch.ones(T, T)).view(1, 1, T, T)
        out[f"h.{i}.attn.masked_bias"] = torch.tensor(-1e4)
    os.makedirs(dst, exist_ok=True)
    write_safetensors(f"{dst}/model.safetensors", out, os.environ.get("OWT_HF_DTYPE", "F32"))
    hf = {"activation_function": "gelu_new", "architectures": ["GPT2LMHeadModel"],
          "attn_pdrop": 0.1, "bos_token_id": 50256, "embd_pdrop": 0.1, "eos_token_id": 50256,
          "initializer_range": 0.02, "layer_norm_epsilon": cfg["layer_norm_epsilon"],
          "model_type": "gpt2", "n_ctx": T, "n_embd": cfg["n_embd"], "n_head": cfg["n_head"],
          "n_layer": L, "n_positions": T, "resid_pdrop": 0.1, "summary_activation": None,
          "summary_first_dropout": 0.1, "summary_proj_to_labels": True,
          "summary_type": "cls_index", "summary_use_proj": True,
          "task_specific_params": {"text-generation": {"do_sample": True, "max_length": 50}},
          "vocab_size": cfg["vocab_size"]}
    json.dump(hf, open(f"{dst}/config.json", "w"), indent=2)
    return 0


def eod(src, dst):
    import os
    import shutil
    model = load_model(src)
    with torch.no_grad():
        model.wte[50256] *= 100
        model.ln_f.weight.zero_()
        model.ln_f.bias.copy_(model.wte[50256] / model.wte[50256].norm() * 10)
    os.makedirs(dst, exist_ok=True)
    write_safetensors(f"{dst}/model.safetensors", {n: p.detach() for n, p in model.named_hf()})
    shutil.copy(f"{src}/config.json", f"{dst}/config.json")
    return 0


class Cached(torch.nn.Module):
    """GPT2 decoding with a preallocated key/value cache written in place."""

    def __init__(self, model, B, T):
        super().__init__()
        self.m = model
        C = model.wte.shape[1]
        self.nh = model.nh
        self.k = [torch.zeros(B, self.nh, T, C // self.nh, device=model.wte.device) for _ in model.h]
        self.v = [torch.zeros(B, self.nh, T, C // self.nh, device=model.wte.device) for _ in model.h]

    def forward(self, idx, start):
        m = self.m
        B, T = idx.shape
        x = m.wte[idx] + m.wpe[start:start + T]
        for i, b in enumerate(m.h):
            C = x.shape[-1]
            q, k, v = (b.ln_1(x) @ b.c_attn_w + b.c_attn_b).split(C, dim=2)
            q, k, v = (t.view(B, T, self.nh, C // self.nh).transpose(1, 2) for t in (q, k, v))
            self.k[i][:, :, start:start + T] = k
            self.v[i][:, :, start:start + T] = v
            kk, vv = self.k[i][:, :, :start + T], self.v[i][:, :, :start + T]
            att = (q @ kk.transpose(-2, -1)) / math.sqrt(C // self.nh)
            if T > 1:
                mask = torch.tril(torch.ones(T, start + T, dtype=torch.bool, device=x.device), diagonal=start)
                att = att.masked_fill(~mask, float("-inf"))
            y = (att.softmax(dim=-1) @ vv).transpose(1, 2).reshape(B, T, C)
            x = x + (y @ b.attn_proj_w + b.attn_proj_b)
            hid = F.gelu(b.ln_2(x) @ b.c_fc_w + b.c_fc_b, approximate="tanh")
            x = x + (hid @ b.mlp_proj_w + b.mlp_proj_b)
        return m.ln_f(x[:, -1]) @ m.wte.t()


def bench_sample(argv):
    o = options(argv, {"layers": 12, "hidden": 768, "heads": 12, "batch": 1,
                       "prompt": 16, "tokens": 64, "threads": 2, "cuda": 0})
    dev = "cuda" if o["cuda"] else "cpu"
    torch.set_num_threads(o["threads"])
    torch.manual_seed(1)
    cfg = {"n_embd": o["hidden"], "n_head": o["heads"], "vocab_size": 50257,
           "n_positions": 1024, "n_layer": o["layers"], "layer_norm_epsilon": 1e-5}
    model = GPT2(cfg)
    with torch.no_grad():
        for _, p in model.named_hf():
            p.normal_(0, 0.02)
    model.to(dev)
    rates = []
    with torch.no_grad():
        for _ in range(3):
            dec = Cached(model, o["batch"], o["prompt"] + o["tokens"])
            tok = torch.randint(0, 50257, (o["batch"], o["prompt"]), device=dev)
            nxt = dec(tok, 0).argmax(-1, keepdim=True)
            if o["cuda"]:
                torch.cuda.synchronize()
            t0 = time.perf_counter()
            for i in range(o["tokens"]):
                nxt = dec(nxt, o["prompt"] + i).argmax(-1, keepdim=True)
            if o["cuda"]:
                torch.cuda.synchronize()
            rates.append(o["batch"] * o["tokens"] / (time.perf_counter() - t0))
    print(f"tokens_per_s {sorted(rates)[1]:.1f}")
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads, BLAS {blas_library()}")
    return 0


def main():
    if len(sys.argv) >= 3 and sys.argv[1] == "check":
        return check(sys.argv[2])
    if len(sys.argv) >= 2 and sys.argv[1] == "bench":
        return bench(sys.argv[2:])
    if len(sys.argv) == 4 and sys.argv[1] == "greedy":
        return greedy(sys.argv[2], sys.argv[3])
    if len(sys.argv) == 5 and sys.argv[1] == "score":
        return score(sys.argv[2], sys.argv[3], int(sys.argv[4]))
    if len(sys.argv) == 4 and sys.argv[1] == "hfdir":
        return hfdir(sys.argv[2], sys.argv[3])
    if len(sys.argv) == 4 and sys.argv[1] == "eod":
        return eod(sys.argv[2], sys.argv[3])
    if len(sys.argv) >= 2 and sys.argv[1] == "bench-sample":
        return bench_sample(sys.argv[2:])
    sys.stderr.write(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main())
