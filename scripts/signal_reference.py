#!/usr/bin/python3
"""Independent numpy/scipy reference values of gotrain's signal features, for `go test`.

Usage (from the repository root, with Debian's python3-numpy and python3-scipy):

    /usr/bin/python3 scripts/signal_reference.py [--peer ../shared/peers/bench_signal.py]
        [--out signal/testdata/reference] [--no-synth]

It writes a few short records with `gotrain signal synth` (raw cf32_le, 8192
samples, a carrier offset each; --no-synth keeps the record files already in
--out), computes every scalar feature of docs/SIGNAL.md on them in float64
(complex128 copies of the complex64 samples), and writes
--out/features.json, which TestReferenceFeatures (package signal) and
TestGraphReferenceFeatures (package signal/sigraph) read.

Where the numpy/scipy peer (bench_signal.py) defines a feature, the value is
the peer's own function, called through compare_signal.py's peer_features
(RSSI, the SNR estimates and occupied bandwidth, centroid, bandwidth,
flatness, the 13 MFCC means) and bench_signal.f_welch (the PSD). The
features the peer does not have (noise_psd, rolloff_hz, obw_hz, the
cumulants, the instantaneous statistics) are computed here, in
extra_features, from their definitions in docs/SIGNAL.md; nothing is taken
from gotrain's Go code.
"""
import argparse
import hashlib
import json
import os
import platform
import subprocess
import sys
import tempfile

import numpy as np
import scipy

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import compare_signal  # noqa: E402  (load_peer, peer_features, ROOT)

ROOT = compare_signal.ROOT
SAMPLES = 8192

# The records: name -> `gotrain signal synth` flags (besides --samples and --out).
# Every one has a carrier offset; the last runs at another sample rate with IQ
# imbalance, so that fs enters every frequency feature and C20 is not ~0.
RECORDS = [
    ("qpsk", ["--mod", "qpsk", "--rate", "200000", "--offset", "25000", "--phase", "0.7", "--snr", "10", "--seed", "1"]),
    ("16qam", ["--mod", "16qam", "--rate", "200000", "--offset", "-12500", "--snr", "18", "--seed", "2"]),
    ("fm", ["--mod", "fm", "--rate", "200000", "--offset", "5000", "--mod-freq", "2000", "--snr", "12", "--seed", "3"]),
    ("am", ["--mod", "am", "--rate", "200000", "--offset", "30000", "--phase", "1.2", "--snr", "15", "--seed", "4"]),
    ("gfsk", ["--mod", "gfsk", "--rate", "200000", "--offset", "-20000", "--snr", "10", "--seed", "5"]),
    ("bpsk_1msps", ["--mod", "bpsk", "--rate", "1000000", "--sym-rate", "125000", "--offset", "150000", "--snr", "5",
                    "--iq-gain-db", "1", "--iq-phase-deg", "5", "--seed", "6"]),
]

# Feature parameters: gotrain's signal.Config defaults (docs/SIGNAL.md).
ROLLOFF_FRACTION = 0.85
OBW_FRACTION = 0.99
MEL_BANDS = 40


def sha256(path):
    with open(path, "rb") as fh:
        return hashlib.sha256(fh.read()).hexdigest()


def extra_features(x, fs, p):
    """The features bench_signal.py does not define, from docs/SIGNAL.md.

    x: complex128 samples; p: the two-sided fftshifted Welch PSD (bin i at
    (i - M/2)*fs/M). Returns a dict of floats (complex cumulants as [re, im])."""
    m = p.size
    df = fs / m
    freqs = (np.arange(m) - m // 2) * df
    cum = np.cumsum(p)
    tot = cum[-1]

    def first_reaching(level):
        # cum is non-decreasing (p >= 0): the first index with cum >= level.
        return min(int(np.searchsorted(cum, level, side="left")), m - 1)

    i_lo = first_reaching((1 - OBW_FRACTION) / 2 * tot)
    i_hi = first_reaching((1 + OBW_FRACTION) / 2 * tot)
    i_roll = first_reaching(ROLLOFF_FRACTION * tot)

    # Cumulants (Swami-Sadler, no mean removal), normalised by C21.
    a2 = np.abs(x) ** 2
    x2 = x * x
    m20, m21 = np.mean(x2), np.mean(a2)
    m40, m41, m42 = np.mean(x2 * x2), np.mean(x2 * a2), np.mean(a2 * a2)
    c20, c21 = m20, m21
    c40 = m40 - 3 * m20 ** 2
    c41 = m41 - 3 * m20 * m21
    c42 = m42 - abs(m20) ** 2 - 2 * m21 ** 2

    # Instantaneous amplitude, phase (circular statistics over the nonzero
    # samples, R over all N) and frequency (phase steps).
    amp = np.abs(x)
    nz = amp > 0
    u = x[nz] / amp[nz]
    su = u.sum()
    r = abs(su) / x.size
    d = np.angle(x[1:] * np.conj(x[:-1]))
    k = fs / (2 * np.pi)
    cplx = lambda z: [float(z.real), float(z.imag)]
    return {
        "noise_psd": float(np.median(p)),
        "obw_hz": float((i_hi - i_lo + 1) * df),
        "rolloff_hz": float(freqs[i_roll]),
        "c20": float(abs(c20 / c21)), "c21": float(c21), "c40": float(abs(c40 / c21 ** 2)),
        "c41": float(abs(c41 / c21 ** 2)), "c42": float(c42.real / c21 ** 2),
        "c20_complex": cplx(c20 / c21), "c40_complex": cplx(c40 / c21 ** 2), "c41_complex": cplx(c41 / c21 ** 2),
        "inst_amp_mean": float(amp.mean()), "inst_amp_std": float(amp.std()),
        "inst_phase_mean": float(np.angle(su)), "inst_phase_std": float(np.sqrt(max(0.0, -2 * np.log(r)))),
        "inst_freq_mean": float(d.mean() * k), "inst_freq_std": float(d.std() * k),
    }


def reference_features(peer, x, fs):
    """Every scalar feature of the complex128 record x at sample rate fs."""
    # The peer's functions read its module globals: the rate and the mel bank.
    peer.FS = fs
    peer.MEL_FB = peer.mel_filterbank(MEL_BANDS, peer.N_FFT, fs)
    pf = compare_signal.peer_features(peer, x)
    out = {k: float(pf[k]) for k in ("rssi_dbfs", "rssi_dbm", "snr_db", "snr_inband_db", "occupied_bw_hz",
                                      "centroid_hz", "bandwidth_hz", "flatness")}
    out["mfcc"] = [float(v) for v in pf["mfcc"]]
    out.update(extra_features(x, fs, pf["psd"]))
    for k, v in out.items():
        assert np.all(np.isfinite(v)), (k, v)  # JSON holds finite numbers only
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--peer", default=os.path.join(ROOT, "..", "shared", "peers", "bench_signal.py"))
    ap.add_argument("--out", default=os.path.join(ROOT, "signal", "testdata", "reference"))
    ap.add_argument("--no-synth", action="store_true", help="keep the record files already in --out")
    a = ap.parse_args()
    if not os.path.exists(a.peer):
        sys.exit(f"peer script {a.peer} not found (give --peer)")
    peer = compare_signal.load_peer(a.peer)
    os.makedirs(a.out, exist_ok=True)
    synth_cmds = {}
    if not a.no_synth:
        tmp = tempfile.mkdtemp(prefix="gotrain-sigref-")
        exe = os.path.join(tmp, "gotrain")
        compare_signal.run(["go", "-C", ROOT, "build", "-o", exe, "./cmd/gotrain"])
    for name, flags in RECORDS:
        path = os.path.join(a.out, name + ".cf32")
        args = ["signal", "synth", *flags, "--samples", str(SAMPLES), "--out", path]
        synth_cmds[name] = "gotrain " + " ".join(args[:-1] + [os.path.relpath(path, ROOT)])
        if not a.no_synth:
            compare_signal.run([exe, *args])

    records = []
    for name, flags in RECORDS:
        path = os.path.join(a.out, name + ".cf32")
        fs = float(flags[flags.index("--rate") + 1])
        x = np.fromfile(path, dtype="<c8")
        assert x.size == SAMPLES, (path, x.size)
        feats = reference_features(peer, x.astype(np.complex128), fs)
        records.append({"name": name, "file": name + ".cf32", "format": "cf32_le", "sample_rate": fs,
                        "samples": int(x.size), "sha256": sha256(path), "synth": synth_cmds[name],
                        "features": feats})

    doc = {
        "header": {
            "description": "Independent numpy/scipy reference values of the scalar features of gotrain's "
                          "signal package (docs/SIGNAL.md), computed in float64 on the cf32 records beside "
                          "this file. Read by TestReferenceFeatures (signal) and TestGraphReferenceFeatures "
                          "(signal/sigraph).",
            "generated_by": "/usr/bin/python3 scripts/signal_reference.py" + (" --no-synth" if a.no_synth else ""),
            "python": platform.python_version(),
            "numpy": np.__version__,
            "scipy": scipy.__version__,
            "peer": "bench_signal.py sha256 " + sha256(a.peer),
            "peer_features": "rssi_dbfs rssi_dbm snr_db snr_inband_db occupied_bw_hz centroid_hz bandwidth_hz "
                             "flatness mfcc (bench_signal.py's functions via compare_signal.peer_features)",
            "own_features": "noise_psd obw_hz rolloff_hz c20 c21 c40 c41 c42 c*_complex inst_* "
                            "(scripts/signal_reference.py extra_features)",
            "config": {"rolloff_fraction": ROLLOFF_FRACTION, "obw_fraction": OBW_FRACTION, "impedance_ohm": 50,
                       "welch_segment": 1024, "mel_bands": MEL_BANDS, "mfcc_frame": peer.N_FFT,
                       "mfcc_hop": peer.HOP, "mfccs": peer.N_MFCC, "snr_threshold_db": 3},
        },
        "records": records,
    }
    out = os.path.join(a.out, "features.json")
    with open(out + ".tmp", "w") as fh:
        json.dump(doc, fh, indent=1)
        fh.write("\n")
    os.replace(out + ".tmp", out)
    print(f"wrote {os.path.relpath(out, ROOT)}: {len(records)} records")
    return 0


if __name__ == "__main__":
    sys.exit(main())
