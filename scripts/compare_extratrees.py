#!/usr/bin/python3
"""gotrain's random splitter (--splitter random) against scikit-learn's ExtraTrees.

Extremely randomized trees are random by design, so one fit says little about
quality: each system fits with several seeds on the same splits and the script
reports the mean (and spread) of the hold-out score, plus median fit times.

    /usr/bin/python3 scripts/compare_extratrees.py [--gotrain BINARY] [--seeds 5]

Cases: diabetes 80/20 (random_state=42) and its 5-fold CV (KFold, no shuffle),
regression; digits 80/20 (random_state=42), classification. Both systems use
100 trees, no bootstrap (scikit-learn's ExtraTrees default; gotrain's
--no-bootstrap) and their default max_features (all for regression, sqrt for
classification). gotrain gets the same rows as CSV files (--train/--test) and
times its fit inside the process; scikit-learn times fit() on arrays in memory.
"""
import argparse
import json
import os
import statistics
import subprocess
import tempfile
import time

import numpy as np
import sklearn
from sklearn.datasets import load_diabetes, load_digits
from sklearn.ensemble import ExtraTreesClassifier, ExtraTreesRegressor
from sklearn.metrics import mean_squared_error
from sklearn.model_selection import KFold, train_test_split

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def write_csv(path, X, y):
    names = [f"f{j}" for j in range(X.shape[1])] + ["target"]
    with open(path, "w") as f:
        f.write(",".join(names) + "\n")
        np.savetxt(f, np.column_stack([X, y]), delimiter=",", fmt="%.17g")


def gotrain(binary, *args):
    out = subprocess.run([binary, "--json", "--log-level", "warn", "forest", "train", *args],
                         check=True, capture_output=True, text=True)
    return json.loads(out.stdout)


def go_fit(binary, tr, te, seed, task):
    args = ["--train", tr, "--test", te, "--trees", "100", "--splitter", "random", "--no-bootstrap", "--seed", str(seed)]
    if task == "classification":
        args += ["--task", "classification"]
    r = gotrain(binary, *args)
    score = r["test_accuracy"] if task == "classification" else r["test_mse"]
    return score, r["fit_seconds"]


def sk_fit(model, Xa, ya, Xb, yb, task):
    t0 = time.perf_counter()
    model.fit(Xa, ya)
    t = time.perf_counter() - t0
    p = model.predict(Xb)
    score = float((p == yb).mean()) if task == "classification" else mean_squared_error(yb, p)
    return score, t


def summary(xs):
    return statistics.mean(xs), (statistics.stdev(xs) if len(xs) > 1 else 0.0)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--gotrain", default="", help="gotrain binary (default: build one)")
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--json", default="")
    args = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="gotrain-et-")
    binary = args.gotrain
    if not binary:
        binary = os.path.join(tmp, "gotrain")
        subprocess.run(["go", "build", "-o", binary, "./cmd/gotrain"], cwd=ROOT, check=True)

    X, y = load_diabetes(return_X_y=True)
    Xd, yd = load_digits(return_X_y=True)
    splits = []  # (case, task, Xa, ya, Xb, yb)
    a, b, ya, yb = train_test_split(X, y, test_size=0.2, random_state=42)
    splits.append(("diabetes 80/20 test MSE", "regression", a, ya, b, yb))
    for k, (ia, ib) in enumerate(KFold(5).split(X)):
        splits.append((f"diabetes 5-fold CV MSE (fold {k})", "regression", X[ia], y[ia], X[ib], y[ib]))
    a, b, ya, yb = train_test_split(Xd, yd, test_size=0.2, random_state=42)
    splits.append(("digits 80/20 accuracy", "classification", a, ya, b, yb))

    res = {}
    for n, (case, task, Xa, ya, Xb, yb) in enumerate(splits):
        tr, te = os.path.join(tmp, f"s{n}_train.csv"), os.path.join(tmp, f"s{n}_test.csv")
        write_csv(tr, Xa, ya)
        write_csv(te, Xb, yb)
        go, sk = [], []
        for s in range(args.seeds):
            go.append(go_fit(binary, tr, te, s, task))
            m = (ExtraTreesClassifier if task == "classification" else ExtraTreesRegressor)(
                n_estimators=100, random_state=s, n_jobs=-1)
            sk.append(sk_fit(m, Xa, ya, Xb, yb, task))
        key = case.split(" (fold")[0]
        r = res.setdefault(key, {"go": [], "sk": [], "go_t": [], "sk_t": []})
        r["go"] += [x[0] for x in go]
        r["sk"] += [x[0] for x in sk]
        r["go_t"] += [x[1] for x in go]
        r["sk_t"] += [x[1] for x in sk]

    print(f"scikit-learn {sklearn.__version__}, {os.cpu_count()} CPUs, {args.seeds} seeds per split\n")
    print("| case | gotrain --splitter random (mean ± sd over seeds) | scikit-learn ExtraTrees | ratio | fit s gotrain / sklearn (medians) |")
    print("|---|---:|---:|---:|---:|")
    for case, r in res.items():
        gm, gs = summary(r["go"])
        sm, ss = summary(r["sk"])
        fmt = "{:.4f}" if "accuracy" in case else "{:.0f}"
        print(f"| {case} | {fmt.format(gm)} ± {fmt.format(gs)} | {fmt.format(sm)} ± {fmt.format(ss)} | {gm / sm:.3f} | "
              f"{statistics.median(r['go_t']):.4f} / {statistics.median(r['sk_t']):.4f} |")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(res, f, indent=1)


if __name__ == "__main__":
    main()
