#!/usr/bin/env python3
"""Compare the loss curves of two gotrain metrics logs (JSON lines).

usage: compare_loss_curves.py A.jsonl B.jsonl [--rel 1e-3] [--steps N]

Every step that logged a loss in A must have logged one in B (and the
other way round), at least --steps of them, and each pair must agree within
--rel relative difference. Prints the worst difference; exits 1 when a
check fails. .ci/run uses it for the data-parallel MoE and char-LSTM runs
across MPI processes against one process (docs/DISTRIBUTED.md).
"""
import argparse
import json
import sys


def losses(path):
    out = {}
    with open(path) as f:
        for n, line in enumerate(f, 1):
            line = line.strip()
            if not line:
                continue
            try:
                rec = json.loads(line)
            except json.JSONDecodeError as e:
                sys.exit(f"{path}:{n}: not JSON: {e}")
            if "loss" in rec and "step" in rec:
                out[int(rec["step"])] = float(rec["loss"])
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("a")
    ap.add_argument("b")
    ap.add_argument("--rel", type=float, default=1e-3)
    ap.add_argument("--steps", type=int, default=1)
    args = ap.parse_args()
    a, b = losses(args.a), losses(args.b)
    if sorted(a) != sorted(b):
        sys.exit(f"the logs hold losses of different steps: {len(a)} in {args.a}, {len(b)} in {args.b}")
    if len(a) < args.steps:
        sys.exit(f"{len(a)} steps logged a loss, want at least {args.steps}")
    worst, at = 0.0, None
    for step in sorted(a):
        rel = abs(a[step] - b[step]) / max(abs(a[step]), 1e-30)
        if rel > worst:
            worst, at = rel, step
    print(f"  {len(a)} steps; largest relative loss difference {worst:.3g} (step {at})")
    if worst > args.rel:
        sys.exit(f"step {at}: loss {a[at]!r} in {args.a}, {b[at]!r} in {args.b}: relative {worst:.3g} > {args.rel}")


if __name__ == "__main__":
    main()
