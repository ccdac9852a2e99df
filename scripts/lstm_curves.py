#!/usr/bin/python3
"""Validation loss against wall-clock time, side by side, from metrics logs.

usage: lstm_curves.py [--minutes 60] [--every 10] [--plot out.png] NAME=LOG.jsonl ...

Each LOG is a JSON-lines metrics log with validation records holding "step",
"val_loss" and "wall" (seconds since the run's first step, evaluations
included): gotrain's --metrics-log or scripts/lstm_torch.py's --log. Prints, as
Markdown, every run's latest validation loss at each --every minutes up to
--minutes, then each run's last validation within the budget, its best, and the
steps it made. With --plot and matplotlib, draws the curves.
"""
import argparse
import json
import sys


def read(path):
    vals, steps = [], 0
    with open(path) as f:
        for n, line in enumerate(f, 1):
            line = line.strip()
            if not line:
                continue
            try:
                rec = json.loads(line)
            except json.JSONDecodeError as e:
                sys.exit(f"{path}:{n}: not JSON: {e}")
            if "step" in rec:
                steps = max(steps, int(rec["step"]))
            if "val_loss" in rec:
                if "wall" not in rec:
                    sys.exit(f"{path}:{n}: a validation record without \"wall\"")
                vals.append((float(rec["wall"]), int(rec["step"]), float(rec["val_loss"])))
    return vals, steps


def latest(vals, seconds):
    got = [v for v in vals if v[0] <= seconds]
    return got[-1] if got else None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--minutes", type=float, default=60)
    ap.add_argument("--every", type=float, default=10)
    ap.add_argument("--plot", default="")
    ap.add_argument("runs", nargs="+", help="NAME=LOG.jsonl")
    a = ap.parse_args()
    runs = []
    for r in a.runs:
        name, sep, path = r.partition("=")
        if not sep:
            sys.exit(f"{r}: want NAME=LOG.jsonl")
        vals, steps = read(path)
        runs.append((name, vals, steps))
    names = [n for n, _, _ in runs]
    print("| minutes | " + " | ".join(f"{n} val loss (step)" for n in names) + " |")
    print("|---:|" + "---:|" * len(names))
    m = a.every
    while m <= a.minutes + 1e-9:
        cells = []
        for _, vals, _ in runs:
            v = latest(vals, m * 60)
            cells.append(f"{v[2]:.3f} ({v[1]})" if v else "—")
        print(f"| {m:g} | " + " | ".join(cells) + " |")
        m += a.every
    print()
    print("| run | last validation in the budget | at | best | steps logged |")
    print("|---|---:|---:|---:|---:|")
    for name, vals, steps in runs:
        inb = [v for v in vals if v[0] <= a.minutes * 60]
        if not inb:
            print(f"| {name} | — | — | — | {steps} |")
            continue
        last, best = inb[-1], min(inb, key=lambda v: v[2])
        print(f"| {name} | {last[2]:.4f} (step {last[1]}) | {last[0] / 60:.1f} min | {best[2]:.4f} | {steps} |")
    if a.plot:
        try:
            import matplotlib
            matplotlib.use("Agg")
            import matplotlib.pyplot as plt
        except ImportError:
            print("no matplotlib: no plot", file=sys.stderr)
            return
        fig, ax = plt.subplots(figsize=(7, 4.2))
        for name, vals, _ in runs:
            ax.plot([v[0] / 60 for v in vals], [v[2] for v in vals], marker=".", label=name)
        ax.axhline(1.55, color="grey", linestyle=":", label="1.55 nats/char")
        ax.set_xlabel("wall-clock minutes")
        ax.set_ylabel("validation loss (nats/char)")
        ax.set_xlim(0, a.minutes)
        ax.grid(alpha=0.3)
        ax.legend()
        fig.tight_layout()
        fig.savefig(a.plot, dpi=110)
        print(f"plot: {a.plot}", file=sys.stderr)


if __name__ == "__main__":
    main()
