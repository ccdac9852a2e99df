#!/usr/bin/python3
"""Parity and speed of `gotrain signal` against the numpy/scipy peer.

Usage (from the repository root, with Debian's python3-numpy and python3-scipy):

    /usr/bin/python3 scripts/compare_signal.py [--peer ../shared/peers/bench_signal.py]
        [--runs 20] [--mod qpsk] [--seed 1] [--json out.json]

It builds gotrain, writes one record with `gotrain signal synth` (SigMF, cf32_le),
computes the peer's features on the same samples with the peer's own functions
(bench_signal.py is imported, so the definitions are exactly its), runs
`gotrain signal features --json --arrays` on the same file and prints the error of
every shared feature. Then it times both: the peer's extract_all and
gen_qpsk + extract_all (warm-up, median of --runs), and `gotrain signal bench`
(the same record, warm-up, median of --runs), and reports the CPU share other
processes used during each measurement.

scripts/signal_reference.py imports load_peer, peer_features and run from this
file to compute the reference values of `go test` (signal/testdata/reference).
"""
import argparse
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def load_peer(path):
    spec = importlib.util.spec_from_file_location("bench_signal", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    mod.MEL_FB = mod.mel_filterbank(40, mod.N_FFT)
    return mod


def run(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed:\n{r.stderr}")
    return r.stdout


def rel(a, b):
    return abs(a - b) / max(abs(b), 1e-300)


def peer_features(peer, x):
    out = peer.extract_all(x)
    f, p = peer.f_welch(x)
    return {
        "rssi_dbfs": out["rssi"][0], "rssi_dbm": out["rssi"][1],
        "snr_db": out["snr"][0], "snr_inband_db": out["snr"][1], "occupied_bw_hz": out["snr"][2],
        "centroid_hz": out["shape"][0], "bandwidth_hz": out["shape"][1], "flatness": out["shape"][2],
        "mfcc": np.asarray(out["mfcc"][1], dtype=np.float64), "mfcc_frames": np.asarray(out["mfcc"][0], dtype=np.float64),
        "psd": np.asarray(p, dtype=np.float64), "autocorr": np.asarray(out["ac"], dtype=np.complex128),
        "spectrogram": np.asarray(out["spec"], dtype=np.float64),
    }


def timeit(fn, runs):
    fn()
    ts = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        ts.append(1e3 * (time.perf_counter() - t0))
    return ts


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--peer", default=os.path.join(ROOT, "..", "shared", "peers", "bench_signal.py"))
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--mod", default="qpsk")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--json", default="")
    a = ap.parse_args()
    if not os.path.exists(a.peer):
        sys.exit(f"peer script {a.peer} not found (give --peer)")
    peer = load_peer(a.peer)
    tmp = tempfile.mkdtemp(prefix="gotrain-compare-")
    exe = os.path.join(tmp, "gotrain")
    run(["go", "build", "-o", exe, "./cmd/gotrain"]) if os.getcwd() == ROOT else run(
        ["go", "-C", ROOT, "build", "-o", exe, "./cmd/gotrain"])
    base = os.path.join(tmp, "rec")
    run([exe, "signal", "synth", "--mod", a.mod, "--rate", "200000", "--seconds", "1", "--snr", "10",
         "--offset", "25000", "--seed", str(a.seed), "--out", base + ".sigmf-data"])
    x = np.fromfile(base + ".sigmf-data", dtype="<c8")
    assert x.size == peer.N, x.size

    spec_file = os.path.join(tmp, "spec.f32")
    g = json.loads(run([exe, "--json", "signal", "features", "--in", base + ".sigmf-meta", "--arrays",
                        "--spectrogram", spec_file]))
    gs = np.fromfile(spec_file, dtype="<f4").astype(np.float64).reshape(g["spectrogram_shape"])
    p32 = peer_features(peer, x)                       # the peer as it runs (complex64)
    p64 = peer_features(peer, x.astype(np.complex128))  # the same code in float64, for reference

    rows = []
    for k in ["rssi_dbfs", "rssi_dbm", "snr_db", "snr_inband_db", "occupied_bw_hz", "centroid_hz",
              "bandwidth_hz", "flatness"]:
        rows.append((k, g[k], p32[k], rel(g[k], p32[k]), rel(g[k], p64[k]), rel(p32[k], p64[k]), "rel", 1e-3))
    gm = np.asarray(g["mfcc"])
    rows.append(("mfcc (13 means)", float(gm[0]), float(p32["mfcc"][0]), float(np.max(np.abs(gm - p32["mfcc"]))),
                 float(np.max(np.abs(gm - p64["mfcc"]))), float(np.max(np.abs(p32["mfcc"] - p64["mfcc"]))), "max abs", 1e-2))
    gmf = np.asarray(g["mfcc_frames"])
    rows.append(("mfcc (387x13 frames)", float(gmf[0, 0]), float(p32["mfcc_frames"][0, 0]),
                 float(np.max(np.abs(gmf - p32["mfcc_frames"]))), float(np.max(np.abs(gmf - p64["mfcc_frames"]))),
                 float(np.max(np.abs(p32["mfcc_frames"] - p64["mfcc_frames"]))), "max abs", 1e-2))
    gp = np.asarray(g["psd"])
    rows.append(("Welch PSD (1024 bins)", float(gp.max()), float(p32["psd"].max()),
                 float(np.max(np.abs(gp - p32["psd"]) / p32["psd"])), float(np.max(np.abs(gp - p64["psd"]) / p64["psd"])),
                 float(np.max(np.abs(p32["psd"] - p64["psd"]) / p64["psd"])), "max rel", 1e-3))
    ga = np.asarray(g["autocorr"])
    ga = ga[:, 0] + 1j * ga[:, 1]
    rows.append(("autocorr rho[0..1000]", float(abs(ga[8])), float(abs(p32["autocorr"][8])),
                 float(np.max(np.abs(ga - p32["autocorr"]))), float(np.max(np.abs(ga - p64["autocorr"]))),
                 float(np.max(np.abs(p32["autocorr"] - p64["autocorr"]))), "max abs", 1e-3))
    rows.append(("spectrogram dB (256x892)", float(gs[0, 0]), float(p32["spectrogram"][0, 0]),
                 float(np.max(np.abs(gs - p32["spectrogram"]))), float(np.max(np.abs(gs - p64["spectrogram"]))),
                 float(np.max(np.abs(p32["spectrogram"] - p64["spectrogram"]))), "max abs dB", 1e-2))

    print(f"record: {a.mod}, 200000 samples at 200 kHz, +25 kHz, SNR 10 dB, seed {a.seed} (written by gotrain)")
    print("| feature | gotrain | peer (complex64) | gotrain vs peer | gotrain vs float64 ref | peer vs float64 ref | metric | floor | ok |")
    print("|---|---:|---:|---:|---:|---:|---|---:|---|")
    ok_all = True
    for name, gv, pv, e, e64, p_e64, metric, floor in rows:
        ok = e <= floor
        ok_all &= ok
        print(f"| {name} | {gv:.6g} | {pv:.6g} | {e:.2e} | {e64:.2e} | {p_e64:.2e} | {metric} | {floor:g} | {'yes' if ok else 'NO'} |")

    # Timing: the peer's functions, then gotrain's bench on the same record.
    rng = np.random.default_rng(0)
    res = {}
    for name, fn in (("peer: all features", lambda: peer.extract_all(x)),
                     ("peer: generate QPSK + all features", lambda: peer.extract_all(peer.gen_qpsk(rng)))):
        peer.wait_idle()
        with peer.Contention() as c:
            ts = timeit(fn, a.runs)
        res[name] = (statistics.median(ts), min(ts), c.foreign_share)
    benches = {}
    for threads in (1, 2):
        peer.wait_idle()
        with peer.Contention() as c:
            b = json.loads(run([exe, "--json", "signal", "bench", "--runs", str(a.runs), "--mod", a.mod,
                                "--seed", str(a.seed), "--records", "32", "--threads", str(threads)]))
        benches[threads] = b
        tag = "gotrain" if threads == 1 else f"gotrain, {threads} goroutines per record"
        res[f"{tag}: synthesis"] = (b["synth_ms_per_record"], b["synth_min_ms"], c.foreign_share)
        res[f"{tag}: all features"] = (b["features_ms_per_record"], b["features_min_ms"], c.foreign_share)
        res[f"{tag}: synthesis + all features"] = (b["total_ms_per_record"], b["total_min_ms"], c.foreign_share)
    b = benches[1]
    print()
    print(f"timing: warm-up, then median of {a.runs} runs, one thread/goroutine; "
          f"{time.strftime('%Y-%m-%d %H:%M')}, load {os.getloadavg()[0]:.2f}")
    print("| stage (1-s 200 kHz record) | median ms | min ms | other-proc CPU |")
    print("|---|---:|---:|---:|")
    for k, (med, mn, fs) in res.items():
        print(f"| {k} | {med:.2f} | {mn:.2f} | {fs:.1%} |")
    ratio = res["gotrain: synthesis + all features"][0] / res["peer: generate QPSK + all features"][0]
    ratio2 = res["gotrain, 2 goroutines per record: synthesis + all features"][0] / res["peer: generate QPSK + all features"][0]
    print(f"\ngotrain / peer (synthesis + features, medians): {ratio:.2f}x on one goroutine, "
          f"{ratio2:.2f}x with 2 goroutines per record (floor 0.5x)")
    print(f"gotrain batched: {b['records_per_second']:.1f} records/s on {b['workers']} goroutines")
    if a.json:
        with open(a.json, "w") as fh:
            json.dump({"rows": [dict(zip(["feature", "gotrain", "peer", "err", "err_f64", "peer_err_f64", "metric", "floor"], r))
                                for r in rows], "timing": res, "bench": b, "bench_threads2": benches[2], "ratio": ratio, "ratio_threads2": ratio2}, fh, indent=1)
    return 0 if ok_all else 1


if __name__ == "__main__":
    sys.exit(main())
