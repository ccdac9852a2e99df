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
  - mean cross-entropy per character, Adam (betas 0.9, 0.999, epsilon 1e-7 as
    GoMLX's Adam; no weight decay, as gotrain's default optimizer "adam"),
    gradients clipped to a global norm of 5;
  - the time limit of `lm lstm train --time-limit` (train.Config.TimeLimit,
    docs/TRAINING.md, "Time-limited runs"): after max(--warmup, 5) steps the run
    times one validation and its steps (the first left out, the median plus
    its share of the time outside steps and validations, plus 2 %), plans the
    last step that leaves time for a validation every 200 steps and one at the
    end, and stops there, or earlier should a step and the final validation no
    longer fit, and validates at the end;
  - a constant learning rate, as `lm lstm train`'s default; --cosine follows
    `--cosine` (a half cosine to --min-lr ending at the planned step) and
    --warmup `--warmup-steps` (the rate times (step+1)/warmup).

It logs JSON lines (--log): {"step", "loss", "lr", "elapsed", "wall"} every
--log-every steps and {"step", "val_loss", "elapsed", "wall"} at every
validation, where "wall" counts seconds since the training loop started
(evaluations included) and "elapsed" the training steps alone, as gotrain's
metrics log does.

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


def plan_steps(done, left, step_time, eval_time, eval_every, limit):
    """train.PlanSteps: the last step that fits in left seconds after done."""
    used = 0.0
    s = done + 1
    while s <= limit:
        used += step_time
        final = eval_time
        if eval_every > 0 and s % eval_every == 0:
            used += eval_time
            final = 0.0
        if used + final > left:
            return s - 1
        s += 1
    return max(limit, done)


def schedule(step, lr, warmup, total, min_lr, cosine):
    """train.ScheduleValue: the learning rate at 0-based step."""
    if cosine:
        span = max(total - warmup, 1)
        frac = min(max((step - warmup) / span, 0.0), 1.0)
        lr = (1 + math.cos(frac * math.pi)) / 2 * (lr - min_lr) + min_lr
    if warmup > 0:
        lr *= min((step + 1) / warmup, 1.0)
    return lr


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
    ap.add_argument("--weight-decay", type=float, default=0.0)
    ap.add_argument("--warmup", type=int, default=0)
    ap.add_argument("--cosine", action="store_true")
    ap.add_argument("--min-lr", type=float, default=0.0)
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
    warmup = args.warmup
    plan_at = max(warmup, 5)  # train.PlanAfterSteps
    total = 1 << 62  # until planned
    step_est = eval_est = eval_plan = eval_total = 0.0
    last_eval_step, last_step_time = -1, 0.0
    durations = []
    start = time.perf_counter()
    deadline = start + budget
    elapsed, step = 0.0, 0

    def validate():
        nonlocal last_eval_step, eval_est, eval_total
        t0 = time.perf_counter()
        v = evaluate()
        eval_est = time.perf_counter() - t0
        eval_total += eval_est
        last_eval_step = step
        wall = time.perf_counter() - start
        emit({"step": step, "val_loss": v, "elapsed": elapsed, "wall": wall})
        print(f"step {step}: val_loss {v:.4f} at {wall / 60:.1f} min", file=sys.stderr)

    while True:
        perm = torch.randperm(len(tx))
        for b in range(0, len(perm) - args.batch + 1, args.batch):
            left = deadline - time.perf_counter()
            fits = left > max(step_est, last_step_time) + max(eval_plan, eval_est * 1.02) if plan_at is None else left > 0
            if step >= total or not fits:
                if last_eval_step != step:
                    validate()
                print(f"stopped after step {step} of {total} planned: {(time.perf_counter() - start) / 60:.1f} min",
                      file=sys.stderr)
                return
            t0 = time.perf_counter()
            lr = schedule(step, args.lr, warmup, total, args.min_lr, args.cosine)
            for g in opt.param_groups:
                g["lr"] = lr
            sel = perm[b:b + args.batch]
            opt.zero_grad(set_to_none=True)
            logits = model(tx[sel])
            loss = F.cross_entropy(logits.reshape(-1, len(chars)), ty[sel].reshape(-1))
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), args.clip)
            opt.step()
            lv = loss.item()
            last_step_time = time.perf_counter() - t0
            elapsed += last_step_time
            step += 1
            if step > 1:
                durations.append(last_step_time)
            wall = time.perf_counter() - start
            if step % args.log_every == 0 or step == 1:
                emit({"step": step, "loss": lv, "lr": lr, "elapsed": elapsed, "wall": wall})
            evaluated = False
            if step % args.eval_every == 0 or step == total:
                validate()
                evaluated = True
            # Harness.planEnd: plan after plan_at steps; without --cosine plan
            # again after each validation.
            first = plan_at is not None and step >= plan_at
            if first or (plan_at is None and not args.cosine and evaluated and step < total):
                if first and last_eval_step != step:
                    validate()
                plan_at = None
                # Perf.SteadyMedian (the upper median) and the share of a step of
                # the time outside steps and validations, plus 2 %.
                outside = max(time.perf_counter() - start - elapsed - eval_total, 0.0) / step
                step_est = ((sorted(durations)[len(durations) // 2] if durations else last_step_time) + outside) * 1.02
                eval_plan = eval_est * 1.02
                left = deadline - time.perf_counter()
                n = plan_steps(step, left, step_est, eval_plan, args.eval_every, 1 << 62)
                if first or n != total:
                    print(f"time limit {args.minutes} min: planned {n} steps ({step_est:.3f} s a step, "
                          f"{eval_plan:.1f} s a validation, {left:.0f} s left after step {step})", file=sys.stderr)
                total = n


if __name__ == "__main__":
    main()
