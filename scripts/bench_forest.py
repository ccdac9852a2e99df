#!/usr/bin/python3
"""Side-by-side random-forest benchmark: gotrain against scikit-learn and XGBoost.

Runs every system on the same CSV files in one session and prints a Markdown
table of times, quality and ratios (gotrain's speed-up = peer time / gotrain
time). Needs Debian's python3-sklearn and python3-xgboost:

    apt-get install -y python3-sklearn python3-xgboost
    /usr/bin/python3 scripts/bench_forest.py [--quick] [--json out.json]

Timing: each system gets a warm-up call, then the median of --runs timed calls
(the same work: no out-of-bag score on either side, scikit-learn's default)
(gotrain times inside the process, so process start and CSV parsing are
excluded; scikit-learn and XGBoost time fit/predict calls on arrays in memory).
"""
import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np
import sklearn
import xgboost as xgb
from sklearn.datasets import load_diabetes, load_digits, make_regression
from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor
from sklearn.metrics import mean_squared_error
from sklearn.model_selection import KFold, train_test_split

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def write_csv(path, X, y, target="target"):
    names = [f"f{j}" for j in range(X.shape[1])] + [target]
    with open(path, "w") as f:
        f.write(",".join(names) + "\n")
        np.savetxt(f, np.column_stack([X, y]), delimiter=",", fmt="%.17g")


def timed(fn, runs):
    fn()  # warm-up
    ts = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts), ts


def gotrain(binary, *args):
    out = subprocess.run([binary, "--json", "--log-level", "warn", "forest", "train", *args],
                         check=True, capture_output=True, text=True)
    return json.loads(out.stdout)


def gotrain_timed(binary, runs, *args):
    """Fit runs+1 times in one process; drop the first (warm-up) run."""
    rep = gotrain(binary, "--repeats", str(runs + 1), *args)
    fits = rep.get("fit_seconds_runs", [rep["fit_seconds"]])[1:] or [rep["fit_seconds"]]
    preds = rep.get("predict_seconds_runs", [])[1:]
    rep["fit_median"] = statistics.median(fits)
    rep["predict_median"] = statistics.median(preds) if preds else rep.get("predict_seconds")
    return rep


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--gotrain", default="", help="gotrain binary (default: build one)")
    ap.add_argument("--quick", action="store_true", help="10k rows instead of 100k for the large set")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--large-runs", type=int, default=3)
    ap.add_argument("--json", default="")
    ap.add_argument("--skip-large", action="store_true", help="skip the make_regression cases (minutes for scikit-learn)")
    ap.add_argument("--large-predict-only", action="store_true", help="on the make_regression set, fit each system once untimed and time predict only")
    ap.add_argument("--mnist-dir", default=os.path.join(ROOT, "..", "shared", "data", "mnist"),
                    help="MNIST IDX files (gzipped) for the MNIST case (default ../shared/data/mnist; skipped when absent)")
    ap.add_argument("--mnist-runs", type=int, default=3)
    ap.add_argument("--mnist-trees", type=int, default=100)
    ap.add_argument("--only", default="", help="comma-separated cases to run: diabetes,digits,large,mnist (default all)")
    args = ap.parse_args()

    tmp = tempfile.mkdtemp(prefix="gotrain-bench-")
    binary = args.gotrain
    if not binary:
        binary = os.path.join(tmp, "gotrain")
        subprocess.run(["go", "build", "-o", binary, "./cmd/gotrain"], cwd=ROOT, check=True)

    rows = []
    res = {"machine": platform.processor() or platform.machine(), "cpus": os.cpu_count(),
           "sklearn": sklearn.__version__, "xgboost": xgb.__version__, "results": rows}

    only = set(filter(None, args.only.split(",")))
    want = lambda c: not only or c in only
    if want("diabetes"):
        diabetes(args, binary, tmp, rows)
    if want("digits"):
        digits(args, binary, tmp, rows)
    # --- make_regression, 100 trees, depth 16
    n = 10000 if args.quick else 100000
    if args.skip_large:
        n = 0
    if n and want("large"):
        large(args, binary, tmp, rows, n)
    if want("mnist"):
        mnist(args, binary, rows)

    report(res, rows, args)


def diabetes(args, binary, tmp, rows):
    # --- diabetes, 80/20 split with random_state=42, 200 trees, depth 16
    X, y = load_diabetes(return_X_y=True)
    Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.2, random_state=42)
    tr, te = os.path.join(tmp, "diab_train.csv"), os.path.join(tmp, "diab_test.csv")
    write_csv(tr, Xtr, ytr)
    write_csv(te, Xte, yte)
    sk = RandomForestRegressor(n_estimators=200, max_depth=16, random_state=0, n_jobs=-1)
    sk_fit, _ = timed(lambda: sk.fit(Xtr, ytr), args.runs)
    sk_mse = mean_squared_error(yte, sk.predict(Xte))
    xr = xgb.XGBRFRegressor(n_estimators=200, max_depth=16, subsample=0.632, colsample_bynode=0.8,
                            tree_method="hist", random_state=0, nthread=os.cpu_count())
    xr_fit, _ = timed(lambda: xr.fit(Xtr, ytr), args.runs)
    xr_mse = mean_squared_error(yte, xr.predict(Xte))
    # --no-oob: scikit-learn's fit computes no out-of-bag score (oob_score=False), so
    # neither does gotrain's here (its default computes one).
    g = gotrain_timed(binary, args.runs, "--train", tr, "--test", te, "--trees", "200", "--max-depth", "16", "--no-oob")
    rows.append({"case": "diabetes fit (200 trees, depth 16)", "gotrain_s": g["fit_median"],
                 "peers": {"sklearn RF n_jobs=-1": sk_fit, "XGBRF hist": xr_fit},
                 "quality": {"gotrain test MSE": g["test_mse"], "sklearn test MSE": sk_mse, "XGBRF test MSE": xr_mse}})

    # 5-fold CV (sklearn's default KFold, no shuffle)
    cv_sk, cv_go = [], []
    for k, (a, b) in enumerate(KFold(5).split(X)):
        fa, fb = os.path.join(tmp, f"cv{k}_train.csv"), os.path.join(tmp, f"cv{k}_test.csv")
        write_csv(fa, X[a], y[a])
        write_csv(fb, X[b], y[b])
        m = RandomForestRegressor(n_estimators=200, max_depth=16, random_state=0, n_jobs=-1).fit(X[a], y[a])
        cv_sk.append(mean_squared_error(y[b], m.predict(X[b])))
        cv_go.append(gotrain(binary, "--train", fa, "--test", fb, "--trees", "200", "--max-depth", "16")["test_mse"])
    rows.append({"case": "diabetes 5-fold CV MSE", "quality": {"gotrain": statistics.mean(cv_go), "sklearn": statistics.mean(cv_sk)}})


def digits(args, binary, tmp, rows):
    # --- digits classification
    Xd, yd = load_digits(return_X_y=True)
    a, b, ya, yb = train_test_split(Xd, yd, test_size=0.2, random_state=42)
    fa, fb = os.path.join(tmp, "digits_train.csv"), os.path.join(tmp, "digits_test.csv")
    write_csv(fa, a, ya)
    write_csv(fb, b, yb)
    skc = RandomForestClassifier(n_estimators=100, random_state=0, n_jobs=-1)
    skc_fit, _ = timed(lambda: skc.fit(a, ya), args.runs)
    skc_acc = float((skc.predict(b) == yb).mean())
    gc = gotrain_timed(binary, args.runs, "--train", fa, "--test", fb, "--task", "classification", "--trees", "100", "--no-oob")
    rows.append({"case": "digits fit (100 trees)", "gotrain_s": gc["fit_median"], "peers": {"sklearn RF n_jobs=-1": skc_fit},
                 "quality": {"gotrain accuracy": gc["test_accuracy"], "sklearn accuracy": skc_acc}})


def read_idx(path):
    """An IDX file (gzipped or not) as a numpy array."""
    import gzip
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        data = f.read()
    ndim = data[3]
    dims = [int.from_bytes(data[4 + 4 * i:8 + 4 * i], "big") for i in range(ndim)]
    return np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * ndim).reshape(dims)


def mnist(args, binary, rows):
    # --- MNIST 60,000 x 784, its own 10,000 test rows, default classification options
    d = args.mnist_dir
    files = [os.path.join(d, f) for f in ("train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz",
                                          "t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz")]
    if not all(os.path.exists(f) for f in files):
        print(f"MNIST case skipped: no IDX files in {d}", file=sys.stderr)
        return
    Xtr, ytr, Xte, yte = (read_idx(f) for f in files)
    Xtr, Xte = Xtr.reshape(len(Xtr), -1), Xte.reshape(len(Xte), -1)
    t = args.mnist_trees
    sk = RandomForestClassifier(n_estimators=t, random_state=0, n_jobs=-1)
    sk_fit, _ = timed(lambda: sk.fit(Xtr, ytr), args.mnist_runs)
    sk_acc = float((sk.predict(Xte) == yte).mean())
    g = gotrain_timed(binary, args.mnist_runs, "--dataset", "mnist", "--data-dir", d, "--trees", str(t), "--no-oob")
    rows.append({"case": f"MNIST fit ({t} trees, sqrt features)", "gotrain_s": g["fit_median"],
                 "peers": {"sklearn RF n_jobs=-1": sk_fit},
                 "quality": {"gotrain accuracy": g["test_accuracy"], "sklearn accuracy": sk_acc}})


def large(args, binary, tmp, rows, n):
    Xl, yl = make_regression(n_samples=n, n_features=20, noise=10, random_state=0)
    Xl = Xl.astype(np.float32)
    full = os.path.join(tmp, "large_full.csv")
    write_csv(full, Xl, yl)
    la, lb, lya, lyb = train_test_split(Xl, yl, test_size=0.2, random_state=42)
    fa, fb = os.path.join(tmp, "large_train.csv"), os.path.join(tmp, "large_test.csv")
    write_csv(fa, la, lya)
    write_csv(fb, lb, lyb)
    skl = RandomForestRegressor(n_estimators=100, max_depth=16, random_state=0, n_jobs=-1)
    if args.large_predict_only:
        skl.fit(Xl, yl)
        skl_pred, _ = timed(lambda: skl.predict(Xl), args.large_runs)
        gl = gotrain_timed(binary, args.large_runs, "--train", full, "--test", full, "--trees", "100", "--max-depth", "16", "--no-oob")
        rows.append({"case": f"make_regression predict {n} rows", "gotrain_s": gl["predict_median"],
                     "peers": {"sklearn RF n_jobs=-1": skl_pred}})
        return
    skl_fit, _ = timed(lambda: skl.fit(Xl, yl), args.large_runs)  # warm-up is a full fit too
    skl_pred, _ = timed(lambda: skl.predict(Xl), args.large_runs)
    sk_hold = RandomForestRegressor(n_estimators=100, max_depth=16, random_state=0, n_jobs=-1).fit(la, lya)
    sk_hold_mse = mean_squared_error(lyb, sk_hold.predict(lb))
    gl = gotrain_timed(binary, args.large_runs, "--train", full, "--test", full, "--trees", "100", "--max-depth", "16", "--no-oob")
    gh = gotrain(binary, "--train", fa, "--test", fb, "--trees", "100", "--max-depth", "16", "--no-oob")
    rows.append({"case": f"make_regression {n}x20 fit (100 trees, depth 16)", "gotrain_s": gl["fit_median"],
                 "peers": {"sklearn RF n_jobs=-1": skl_fit},
                 "quality": {"gotrain hold-out MSE": gh["test_mse"], "sklearn hold-out MSE": sk_hold_mse}})
    rows.append({"case": f"make_regression predict {n} rows", "gotrain_s": gl["predict_median"],
                 "peers": {"sklearn RF n_jobs=-1": skl_pred}})



def report(res, rows, args):
    print(f"machine: {res['machine']}, {res['cpus']} CPUs; scikit-learn {res['sklearn']}, xgboost {res['xgboost']}")
    print()
    print("| case | gotrain s | peer | peer s | speed-up (peer/gotrain) |")
    print("|---|---:|---|---:|---:|")
    for r in rows:
        for peer, t in r.get("peers", {}).items():
            print(f"| {r['case']} | {r['gotrain_s']:.4f} | {peer} | {t:.4f} | {t / r['gotrain_s']:.1f}x |")
    print()
    print("| case | quality |")
    print("|---|---|")
    for r in rows:
        if "quality" in r:
            print(f"| {r['case']} | " + ", ".join(f"{k} {v:.4g}" for k, v in r["quality"].items()) + " |")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(res, f, indent=2)


if __name__ == "__main__":
    sys.exit(main())
