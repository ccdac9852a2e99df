#!/usr/bin/python3
"""PyTorch CPU step time of the transformer of `gotrain lm transformer train` (same shape).

Standalone: /usr/bin/python3 scripts/bench_transformer_torch.py [--batch 16,32] [--threads 1,2]
            [--attention softmax|poly] [--ffn swiglu|richards] [--steps 10] [--json out.json]

The model matches models/transformer (docs/TRANSFORMER.md): vocabulary 91 (Newton's Opticks),
4 blocks of pre-norm (RMSNorm, eps 1e-5) causal multi-head attention (4 heads, width 128, no
biases, separate q/k/v/o projections) and a pre-norm GLU feed-forward (inner width 344:
SwiGLU, or the Richards-gated GLU), learned position embeddings (context 64), a final RMSNorm
and an output head tied to the token embedding (811,520 parameters); AdamW (lr 1e-3,
weight decay 0.004), global-norm clipping 1.0, float32. One step = forward, cross-entropy
over every position, backward, clip, optimizer step.

Timing: 2 warm-up steps, then every step timed with perf_counter; the median is reported.
The share of the CPU that *other* processes used during the timed steps is reported too
(the machine is shared; gotrain's figure should be taken in the same session).
Launch with OMP_WAIT_POLICY=PASSIVE so idle OpenMP workers do not spin.
"""
import argparse
import json
import math
import os
import statistics
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

_CLK = os.sysconf("SC_CLK_TCK")
_NCPU = os.cpu_count()


def _busy_jiffies():
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:9]]
    return sum(v) - v[3] - v[4]


def _self_jiffies():
    with open("/proc/self/stat") as f:
        s = f.read().rsplit(")", 1)[1].split()
    return sum(int(x) for x in s[11:15])


class Contention:
    """CPU used by other processes during the with-block, as a share of all cores."""

    def __enter__(self):
        self.t0, self.b0, self.s0 = time.perf_counter(), _busy_jiffies(), _self_jiffies()
        return self

    def __exit__(self, *exc):
        wall = time.perf_counter() - self.t0
        foreign = max(0, (_busy_jiffies() - self.b0) - (_self_jiffies() - self.s0)) / _CLK
        self.foreign_share = foreign / (_NCPU * max(wall, 1e-9))
        return False


class RMSNorm(nn.Module):
    def __init__(self, d, eps=1e-5):
        super().__init__()
        self.g, self.eps = nn.Parameter(torch.ones(d)), eps

    def forward(self, x):
        return x / torch.sqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.g


def richards(x, beta_raw, nu_raw):
    beta = F.softplus(beta_raw).clamp(0.1, 10.0)
    nu = F.softplus(nu_raw).clamp(0.1, 10.0)
    return torch.exp(-F.softplus(-beta * x) / nu)


class Block(nn.Module):
    def __init__(self, d, heads, hidden, attention, ffn):
        super().__init__()
        self.h, self.attention, self.ffn = heads, attention, ffn
        self.n1, self.n2 = RMSNorm(d), RMSNorm(d)
        self.q, self.k, self.v, self.o = (nn.Linear(d, d, bias=False) for _ in range(4))
        self.w1, self.w3 = nn.Linear(d, hidden, bias=False), nn.Linear(d, hidden, bias=False)
        self.w2 = nn.Linear(hidden, d, bias=False)
        if ffn == "richards":
            init = math.log(math.e - 1)
            self.beta_raw = nn.Parameter(torch.full((hidden,), init))
            self.nu_raw = nn.Parameter(torch.full((hidden,), init))

    def forward(self, x, mask):
        b, t, d = x.shape
        y = self.n1(x)
        q, k, v = (m(y).view(b, t, self.h, d // self.h).transpose(1, 2) for m in (self.q, self.k, self.v))
        s = q @ k.transpose(-1, -2) / math.sqrt(d // self.h)
        if self.attention == "poly":
            phi = (1 + s + s * s / 2) * mask
            w = phi / (phi.sum(-1, keepdim=True) + 1e-6)
        else:
            w = torch.softmax(s.masked_fill(mask == 0, -1e9), -1)
        x = x + self.o((w @ v).transpose(1, 2).reshape(b, t, d))
        y = self.n2(x)
        a = self.w1(y)
        gate = torch.sigmoid(a) if self.ffn == "swiglu" else richards(a, self.beta_raw, self.nu_raw)
        return x + self.w2(a * gate * self.w3(y))


class Transformer(nn.Module):
    def __init__(self, vocab=91, layers=4, heads=4, d=128, context=64, hidden=344, attention="softmax", ffn="swiglu"):
        super().__init__()
        self.tok = nn.Embedding(vocab, d)
        self.pos = nn.Parameter(torch.randn(context, d) * 0.01)
        self.blocks = nn.ModuleList(Block(d, heads, hidden, attention, ffn) for _ in range(layers))
        self.norm = RMSNorm(d)
        self.register_buffer("mask", torch.tril(torch.ones(context, context)))

    def forward(self, idx):
        t = idx.shape[1]
        x = self.tok(idx) + self.pos[:t]
        for blk in self.blocks:
            x = blk(x, self.mask[:t, :t])
        return self.norm(x) @ self.tok.weight.t()


def bench(batch, steps, attention, ffn, vocab=91, context=64, bf16=False):
    torch.manual_seed(0)
    model = Transformer(vocab=vocab, context=context, attention=attention, ffn=ffn)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.004)
    data = torch.randint(0, vocab, (batch, context + 1))
    xb, yb = data[:, :-1].contiguous(), data[:, 1:].contiguous()

    def step():
        opt.zero_grad(set_to_none=True)
        # bf16: PyTorch's mixed precision on the CPU (autocast: bfloat16
        # products, float32 weights), as gotrain's --precision bf16-mixed.
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16):
            loss = F.cross_entropy(model(xb).reshape(-1, vocab), yb.reshape(-1))
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()

    for _ in range(2):
        step()
    ts = []
    with Contention() as c:
        for _ in range(steps):
            t0 = time.perf_counter()
            step()
            ts.append(time.perf_counter() - t0)
    params = sum(p.numel() for p in model.parameters())
    med = statistics.median(ts)
    return {"batch": batch, "attention": attention, "ffn": ffn, "params": params, "median_s": med,
            "min_s": min(ts), "max_s": max(ts), "n": len(ts), "chars_per_s": batch * context / med,
            "foreign_cpu_share": round(c.foreign_share, 3)}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--batch", default="16,32")
    ap.add_argument("--threads", default="1,2", help="torch intra-op thread counts to try")
    ap.add_argument("--attention", default="softmax")
    ap.add_argument("--ffn", default="swiglu")
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--bf16", action="store_true", help="autocast to bfloat16 (mixed precision)")
    ap.add_argument("--json")
    a = ap.parse_args()
    out = {"torch": torch.__version__, "python": sys.version.split()[0], "cpu_count": os.cpu_count(),
           "loadavg_start": os.getloadavg(), "results": []}
    for th in [int(x) for x in a.threads.split(",")]:
        torch.set_num_threads(th)
        for b in [int(x) for x in a.batch.split(",")]:
            r = bench(b, a.steps, a.attention, a.ffn, bf16=a.bf16)
            r["threads"] = th
            out["results"].append(r)
            print(f"threads {th} batch {b:3d} {a.attention}/{a.ffn}: median {r['median_s'] * 1e3:8.1f} ms/step "
                  f"({r['chars_per_s']:.0f} chars/s, params {r['params']}, other processes used "
                  f"{r['foreign_cpu_share']:.0%} of the CPU)", flush=True)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(out, f, indent=2)


if __name__ == "__main__":
    main()
