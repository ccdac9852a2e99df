#!/usr/bin/python3
"""Regenerate the measured sections of docs/BENCHMARKS.md.

1. `gotrain bench --md` (every workload on the CPU path and every available
   device) goes between the markers <!-- bench:begin --> and <!-- bench:end -->.
2. The peers that are installed are run on the same machine in the same session
   and their ratios go between <!-- peers:begin --> and <!-- peers:end -->:
   - scripts/bench_forest.py (scikit-learn, XGBoost; needs python3-sklearn and
     python3-xgboost) for forest fit and predict;
   - numpy's float32 matmul (python3-numpy) beside gotrain's matmul workload;
   - scripts/compare_signal.py (numpy/scipy, the peer's own feature code) for
     signal features, parity and time.
   A peer that is not installed is reported as skipped, never invented.

    /usr/bin/python3 scripts/bench_report.py [--size small|seed] [--skip-large] [--dry-run]
"""
import argparse
import importlib.util
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DOC = os.path.join(ROOT, "docs", "BENCHMARKS.md")


def have(mod):
    return importlib.util.find_spec(mod) is not None


def replace_section(text, name, body):
    begin, end = f"<!-- {name}:begin -->", f"<!-- {name}:end -->"
    block = f"{begin}\n{body.rstrip()}\n{end}"
    if begin in text and end in text:
        return re.sub(re.escape(begin) + ".*?" + re.escape(end), lambda _: block, text, flags=re.S)
    return text.rstrip() + "\n\n" + block + "\n"


def numpy_matmul(n, runs=7):
    import numpy as np
    rng = np.random.default_rng(0)
    a = rng.standard_normal((n, n), dtype=np.float32)
    b = rng.standard_normal((n, n), dtype=np.float32)
    a @ b
    ts = []
    for _ in range(runs):
        t = time.perf_counter()
        a @ b
        ts.append(time.perf_counter() - t)
    return statistics.median(ts)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--size", default="seed")
    ap.add_argument("--repeats", default="5")
    ap.add_argument("--skip-large", action="store_true", help="pass --skip-large to bench_forest.py")
    ap.add_argument("--dry-run", action="store_true", help="print the sections instead of writing the file")
    args = ap.parse_args()

    tmp = tempfile.mkdtemp(prefix="gotrain-report-")
    binary = os.path.join(tmp, "gotrain")
    subprocess.run(["go", "build", "-o", binary, "./cmd/gotrain"], cwd=ROOT, check=True)
    md = os.path.join(tmp, "bench.md")
    out = subprocess.run([binary, "--json", "--log-level", "warn", "bench", "--size", args.size,
                          "--repeats", args.repeats, "--md", md], capture_output=True, text=True)
    if out.returncode != 0:
        # A parity mismatch (or any failure): nothing goes into the document.
        sys.exit(f"gotrain bench exited with status {out.returncode}: {out.stderr.strip()}")
    bench = json.loads(out.stdout)
    stamp = time.strftime("%Y-%m-%d")
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout.strip()
    bench_body = f"Run of {stamp}, commit {commit}:\n\n" + open(md).read()

    peers = [f"Run of {stamp}, commit {commit}, same session as the table above.", ""]
    peers.append("| workload | gotrain (cpu) | peer | peer time | ratio (peer / gotrain) |")
    peers.append("|---|---:|---|---:|---:|")
    res = {(r["workload"], r["device"]): r for r in bench["results"]}
    mm = res.get(("matmul", "cpu"))
    if mm and have("numpy"):
        n = 1024 if args.size == "seed" else 256
        t = numpy_matmul(n)
        best = max((r for r in bench["results"] if r["workload"] == "matmul" and r["available"]), key=lambda r: r["throughput"])
        peers.append(f"| matmul {n}x{n} f32 | {mm['median_ms']:.2f} ms (best device {best['device']}: {best['median_ms']:.2f} ms) | numpy (OpenBLAS) | {t*1e3:.2f} ms | {t*1e3/mm['median_ms']:.3f}x (best device {t*1e3/best['median_ms']:.3f}x) |")
    else:
        peers.append("| matmul | – | numpy | skipped: python3-numpy not installed | – |")
    if have("sklearn") and have("xgboost"):
        cmd = ["/usr/bin/python3", os.path.join(ROOT, "scripts", "bench_forest.py"), "--gotrain", binary]
        if args.skip_large:
            cmd.append("--skip-large")
        fr = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
        peers += ["", "Forests (`scripts/bench_forest.py`):", "", fr.strip()]
    else:
        peers.append("| forest | – | scikit-learn, XGBoost | skipped: python3-sklearn / python3-xgboost not installed | – |")
    if have("scipy") and have("numpy"):
        sig = subprocess.run(["/usr/bin/python3", os.path.join(ROOT, "scripts", "compare_signal.py"), "--runs", "10"],
                             cwd=ROOT, capture_output=True, text=True)
        if sig.returncode == 0:
            peers += ["", "Signal features (`scripts/compare_signal.py --runs 10`):", "", "```", sig.stdout.strip(), "```"]
        else:
            peers += ["", f"Signal features: scripts/compare_signal.py failed: {sig.stderr.strip()[-300:]}"]
    else:
        peers.append("| signal features | – | numpy/scipy | skipped: python3-scipy not installed | – |")
    peers_body = "\n".join(peers)

    if args.dry_run:
        print(bench_body)
        print(peers_body)
        return 0
    text = open(DOC).read()
    text = replace_section(text, "bench", bench_body)
    text = replace_section(text, "peers", peers_body)
    with open(DOC + ".tmp", "w") as f:
        f.write(text)
    os.replace(DOC + ".tmp", DOC)
    print(f"updated {DOC}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
