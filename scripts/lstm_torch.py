#!/usr/bin/python3
"""PyTorch's run of `gotrain lm lstm train`'s default model, for a wall-clock budget.

The same model, data and training as gotrain's defaults (docs/LSTM.md), so that
validation-loss curves against wall-clock time can be put side by side (issue #22
item 5; scripts/lstm_hour_vs_torch.sh runs both):

  - the text split as models/text.Split does: the last int(len * 0.1) characters
    held out; training windows of 100 characters every 3 (text.Windows), shuffled
    each epoch; validation windows of 100 every 100, batches of 64, the loss the
    mean over windows of each window's mean cross-entropy (charlstm.Evaluate);
  - characters one-hot into 2 LSTM layers of 512 (gates i, f, g, o; weights
    uniform in +-1/sqrt(512), forget-gate bias 1, other biases 0) and a linear
    layer to the vocabulary (weights uniform in +-1/sqrt(512), bias 0), zero
    initial states for every window;
  - mean cross-entropy per character, AdamW (betas 0.9, 0.999, epsilon 1e-7 as
    GoMLX's Adam, decoupled weight decay 0.004 scaled by the learning rate, as
    gotrain's --weight-decay), constant learning rate, gradients clipped to a
    global norm of 5.

It logs JSON lines (--log): {"step", "loss", "elapsed", "wall"} every --log-every
steps and {"step", "val_loss", "elapsed", "wall"} every --eval-every steps, where
"wall" counts seconds since the training loop started (evaluations included) and
"elapsed" the training steps alone, as gotrain's metrics log does. It stops after
the step that ends past --minutes of wall time.

Needs Debian's python3-torch:

    /usr/bin/python3 scripts/lstm_torch.py --data ../shared/data/text/moby-dick.txt \
        --minutes 60 --log torch.jsonl
"""
import argparse
import json
import math
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F


class CharLSTM(nn.Module):
    def __init__(self, vocab, hidden, layers):
        super().__init__()
        self.vocab = vocab
        self.lstm = nn.LSTM(vocab, hidden, num_layers=layers, batch_first=True)
        self.out = nn.Linear(hidden, vocab)
        lim = 1 / math.sqrt(hidden)
        with torch.no_grad():
            for name, p in self.lstm.named_parameters():
                if name.startswith("weight"):
                    p.uniform_(-lim, lim)
                elif name.startswith("bias_ih"):
                    p.zero_()
                    p[hidden:2 * hidden] = 1  # forget gate (PyTorch's order is i, f, g, o)
                else:
                    p.zero_()  # bias_hh: gotrain has one bias per gate
            self.out.weight.uniform_(-lim, lim)
            self.out.bias.zero_()

    def forward(self, ids):
        x = F.one_hot(ids, self.vocab).float()
        h, _ = self.lstm(x)
        return self.out(h)


def windows(ids, seq, step):
    n = (len(ids) - (seq + 1)) // step + 1
    if n < 1:
        sys.exit(f"{len(ids)} characters are too short for one window of {seq + 1}")
    idx = torch.arange(n).unsqueeze(1) * step + torch.arange(seq + 1).unsqueeze(0)
    w = ids[idx]
    return w[:, :-1].contiguous(), w[:, 1:].contiguous()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", required=True)
    ap.add_argument("--minutes", type=float, default=60)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--lr", type=float, default=0.002)
    ap.add_argument("--hidden", type=int, default=512)
    ap.add_argument("--layers", type=int, default=2)
    ap.add_argument("--seq", type=int, default=100)
    ap.add_argument("--step", type=int, default=3)
    ap.add_argument("--val-fraction", type=float, default=0.1)
    ap.add_argument("--eval-every", type=int, default=200)
    ap.add_argument("--eval-batch", type=int, default=64)
    ap.add_argument("--log-every", type=int, default=10)
    ap.add_argument("--clip", type=float, default=5)
    ap.add_argument("--weight-decay", type=float, default=0.004)
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--threads", type=int, default=0, help="torch.set_num_threads (0: PyTorch's default)")
    ap.add_argument("--log", default="-")
    args = ap.parse_args()

    if args.threads > 0:
        torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    with open(args.data, encoding="utf-8", newline="") as f:
        text = f.read()
    chars = sorted(set(text))
    code = {c: i for i, c in enumerate(chars)}
    ids = torch.tensor([code[c] for c in text], dtype=torch.long)
    nv = int(len(ids) * args.val_fraction)
    train_ids, val_ids = ids[:len(ids) - nv], ids[len(ids) - nv:]
    tx, ty = windows(train_ids, args.seq, args.step)
    vx, vy = windows(val_ids, args.seq, args.seq)

    model = CharLSTM(len(chars), args.hidden, args.layers)
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, betas=(0.9, 0.999), eps=1e-7,
                            weight_decay=args.weight_decay)
    try:  # a log is never overwritten: another run made it
        out = sys.stdout if args.log == "-" else open(args.log, "x")
    except FileExistsError:
        sys.exit(f"{args.log}: exists; choose another --log")

    def emit(rec):
        out.write(json.dumps(rec) + "\n")
        out.flush()

    def evaluate():
        model.eval()
        total = 0.0
        with torch.no_grad():
            for s in range(0, len(vx), args.eval_batch):
                logits = model(vx[s:s + args.eval_batch])
                nll = F.cross_entropy(logits.transpose(1, 2), vy[s:s + args.eval_batch], reduction="none")
                total += nll.mean(1).sum().item()
        model.train()
        return total / len(vx)

    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads; vocabulary {len(chars)}, "
          f"{len(train_ids)} training and {len(val_ids)} validation characters, {len(tx)} windows",
          file=sys.stderr)
    budget = args.minutes * 60
    start = time.perf_counter()
    elapsed, step = 0.0, 0
    while True:
        perm = torch.randperm(len(tx))
        for b in range(0, len(perm) - args.batch + 1, args.batch):
            t0 = time.perf_counter()
            sel = perm[b:b + args.batch]
            opt.zero_grad(set_to_none=True)
            logits = model(tx[sel])
            loss = F.cross_entropy(logits.reshape(-1, len(chars)), ty[sel].reshape(-1))
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), args.clip)
            opt.step()
            lv = loss.item()
            elapsed += time.perf_counter() - t0
            step += 1
            wall = time.perf_counter() - start
            if step % args.log_every == 0 or step == 1:
                emit({"step": step, "loss": lv, "elapsed": elapsed, "wall": wall})
            if step % args.eval_every == 0:
                v = evaluate()
                emit({"step": step, "val_loss": v, "elapsed": elapsed, "wall": time.perf_counter() - start})
                print(f"step {step}: val_loss {v:.4f} at {wall / 60:.1f} min", file=sys.stderr)
            if wall >= budget:
                print(f"stopped after step {step}: {wall / 60:.1f} min", file=sys.stderr)
                return


if __name__ == "__main__":
    main()
