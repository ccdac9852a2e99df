#!/usr/bin/python3
"""Peak resident memory of a whole forest fit, gotrain against scikit-learn.

Issue #19 asks for the peak resident set of each whole process (GNU time's
"Maximum resident set size", /usr/bin/time -v), both systems on the same
data: MNIST's 60,000 training rows (100 trees, default classification
options) and make_regression 100,000 x 20 (100 trees, depth 16). Each
process loads its data, fits once and exits; the figure includes the
interpreter or runtime and the data.

    /usr/bin/python3 scripts/bench_forest_memory.py --gotrain /tmp/gotrain [--trees 100]
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def peak_kib(cmd):
    """Runs cmd under /usr/bin/time -v; returns (max RSS in KiB, seconds)."""
    out = subprocess.run(["/usr/bin/time", "-v", *cmd], capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"{cmd[0]} failed ({out.returncode}):\n{out.stderr[-2000:]}")
    rss = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", out.stderr).group(1))
    wall = re.search(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): (\S+)", out.stderr).group(1)
    secs = sum(float(x) * 60 ** i for i, x in enumerate(reversed(wall.split(":"))))
    return rss, secs


SK_MNIST = r'''
import sys, gzip, numpy as np
from sklearn.ensemble import RandomForestClassifier
def idx(p):
    d = gzip.open(p).read(); nd = d[3]
    dims = [int.from_bytes(d[4+4*i:8+4*i], "big") for i in range(nd)]
    return np.frombuffer(d, dtype=np.uint8, offset=4+4*nd).reshape(dims)
X = idx(sys.argv[1] + "/train-images-idx3-ubyte.gz").reshape(60000, -1); y = idx(sys.argv[1] + "/train-labels-idx1-ubyte.gz")
RandomForestClassifier(n_estimators=int(sys.argv[2]), random_state=0, n_jobs=-1).fit(X, y)
'''

SK_LARGE = r'''
import sys, numpy as np
from sklearn.ensemble import RandomForestRegressor
d = np.loadtxt(sys.argv[1], delimiter=",", skiprows=1)
RandomForestRegressor(n_estimators=int(sys.argv[2]), max_depth=16, random_state=0, n_jobs=-1).fit(d[:, :-1], d[:, -1])
'''


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--gotrain", required=True)
    ap.add_argument("--trees", type=int, default=100)
    ap.add_argument("--mnist-dir", default=os.path.join(ROOT, "..", "shared", "data", "mnist"))
    args = ap.parse_args()
    py = "/usr/bin/python3"
    rows = []
    t = str(args.trees)
    rows.append(("MNIST fit", peak_kib([py, "-c", SK_MNIST, args.mnist_dir, t]),
                 peak_kib([args.gotrain, "--log-level", "warn", "forest", "train", "--dataset", "mnist",
                           "--data-dir", args.mnist_dir, "--trees", t, "--no-oob"])))
    tmp = tempfile.mkdtemp(prefix="gotrain-mem-")
    csv = os.path.join(tmp, "large.csv")
    subprocess.run([py, "-c", r'''
import sys, numpy as np
from sklearn.datasets import make_regression
X, y = make_regression(n_samples=100000, n_features=20, noise=10, random_state=0)
X = X.astype(np.float32)
names = [f"f{j}" for j in range(20)] + ["target"]
with open(sys.argv[1], "w") as f:
    f.write(",".join(names) + "\n"); np.savetxt(f, np.column_stack([X, y]), delimiter=",", fmt="%.17g")
''', csv], check=True)
    rows.append(("make_regression 100k x 20 fit (depth 16)", peak_kib([py, "-c", SK_LARGE, csv, t]),
                 peak_kib([args.gotrain, "--log-level", "warn", "forest", "train", "--train", csv, "--holdout", "0",
                           "--trees", t, "--max-depth", "16", "--no-oob"])))
    print(f"| process ({args.trees} trees) | scikit-learn peak RSS | gotrain peak RSS | ratio | scikit-learn wall s | gotrain wall s |")
    print("|---|---:|---:|---:|---:|---:|")
    for name, (sr, ss), (gr, gs) in rows:
        print(f"| {name} | {sr / 1024:.0f} MiB | {gr / 1024:.0f} MiB | {gr / sr:.2f}x | {ss:.1f} | {gs:.1f} |")


if __name__ == "__main__":
    main()
