#!/usr/bin/python3
"""gotrain's CPU backend beside PyTorch on this machine, in one run (issue #11).

Usage (from the repository root; needs Debian's python3-torch, python3-numpy and
python3-threadpoolctl, as ../shared/peers/bench_torch.py does):

    /usr/bin/python3 scripts/bench_cpu_backend.py [--peer ../shared/peers/bench_torch.py]
        [--rounds 3] [--json out.json]

Each round, after waiting for an idle machine (the peer's wait_idle), times:
  - SGEMM 1024x1024x1024 fp32: torch.matmul (OpenBLAS, all threads) and gotrain's
    gemm (its fastest path here, AVX-512 or AVX2, both cores):
    `go test -bench 'Sgemm/1024/(avx512|avx2)/threads=2'` (the first listed);
  - the MLP 784-512-512-10 train step, batch 256, Adam: the peer's bench_mlp (at 1
    and at 2 threads, the faster counts) and
    `go test -bench 'MLPTrainStep/cpu' ./train/` (same model, loss and optimizer);
  - the 2x512 char-LSTM train step, batch 64, seq 100: the peer's bench_lstm and
    `go test -bench LSTMTrainStep/cpu ./models/charlstm/` (gotrain feeds one-hot
    characters to the first layer where the peer has a 64-wide embedding).
  - the MoE classifier step (8 experts 784-256-10, top-2, batch 256, Adam), sparse
    dispatch and dense: the peer's bench_moe (MoESparse, MoEDense) and
    `go test -bench 'TrainStep/(sparse|dense)/cpu' ./models/moe/`;
  - the transformer step (4x4x128, context 64, batch 16, AdamW, clipping):
    scripts/bench_transformer_torch.py's bench at 1 and at 2 threads (the faster
    counts; one thread was faster here) and
    `go test -bench 'TrainStep/softmax-swiglu-batch=16/cpu' ./models/transformer/`.
  - bfloat16 mixed precision: the MLP and the transformer steps again under
    PyTorch's autocast to bfloat16 (float32 weights) and with gotrain's
    --precision bf16-mixed (`MLPTrainStep/cpu-bf16-mixed`,
    `TrainStep/softmax-swiglu-batch=16/cpu-bf16-mixed`), then gotrain's float32
    and bf16 steps timed back to back twice (float32, bf16, float32, bf16) for
    the bf16 / fp32 ratio of each round.
It prints the medians over rounds and the ratios gotrain / PyTorch (step time) and
gotrain / PyTorch (GFLOP/s), with the CPU share other processes took, and for
bf16-mixed the ratios to PyTorch's bf16 step and to gotrain's float32 step.
"""
import argparse
import importlib.util
import json
import os
import re
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def load_peer(path):
    spec = importlib.util.spec_from_file_location("bench_torch", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


class Others:
    """CPU share of the machine used by processes other than this one and its
    children (the go test runs) during the with-block."""

    def __init__(self, peer):
        self.peer = peer

    def __enter__(self):
        t = os.times()
        self.t0, self.b0 = time.perf_counter(), self.peer._busy_jiffies()
        self.own0 = t.user + t.system + t.children_user + t.children_system
        return self

    def __exit__(self, *exc):
        t = os.times()
        wall = time.perf_counter() - self.t0
        own = t.user + t.system + t.children_user + t.children_system - self.own0
        busy = (self.peer._busy_jiffies() - self.b0) / self.peer._CLK
        self.foreign_share = max(0.0, busy - own) / (self.peer._NCPU * max(wall, 1e-9))
        return False


def go_bench(pkg, pattern, benchtime, metric):
    out = subprocess.run(["go", "test", "-run", "^$", "-bench", pattern, "-benchtime", benchtime, pkg],
                         cwd=ROOT, check=True, capture_output=True, text=True).stdout
    vals = [float(m.group(1)) for m in re.finditer(r"([0-9.]+) " + re.escape(metric), out)]
    if not vals:
        raise SystemExit(f"no {metric} in the output of {pattern}:\n{out}")
    return vals[0]


def torch_mlp(peer, n_warm, n_timed, bf16, batch=256):
    """The peer's bench_mlp (same model, data, loss and optimizer), with the
    forward pass and loss under autocast to bfloat16 when bf16 is set:
    PyTorch's mixed precision on the CPU, float32 weights, as gotrain's
    --precision bf16-mixed. Returns the median step in ms."""
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(),
                          nn.Linear(512, 10))
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    x = torch.randn(batch, 784)
    y = torch.randint(0, 10, (batch,))

    def step():
        opt.zero_grad(set_to_none=True)
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16):
            loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()

    return peer.summarize(peer.step_times(step, n_warm, n_timed))["median_s"] * 1e3


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--peer", default=os.path.join(ROOT, "..", "shared", "peers", "bench_torch.py"))
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--json", default="")
    a = ap.parse_args()
    peer = load_peer(a.peer)
    import torch
    torch.set_grad_enabled(True)
    threads = torch.get_num_threads()
    # Compile the Go benchmarks once, outside the timings.
    subprocess.run(["go", "test", "-run", "^$", "-count", "1", "-bench", "^$", "./gemm/", "./train/",
                    "./models/charlstm/", "./models/moe/", "./models/transformer/"],
                   cwd=ROOT, check=True, capture_output=True)
    spec = importlib.util.spec_from_file_location("bench_transformer_torch",
                                                  os.path.join(ROOT, "scripts", "bench_transformer_torch.py"))
    tft = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tft)
    rows = {k: [] for k in ("torch_sgemm", "go_sgemm", "torch_mlp", "go_mlp", "torch_lstm", "go_lstm",
                            "torch_moe", "go_moe", "torch_moe_dense", "go_moe_dense", "torch_tf", "go_tf",
                            "torch_mlp_bf16", "go_mlp_bf16", "torch_tf_bf16", "go_tf_bf16",
                            "mlp_pair_ratio", "tf_pair_ratio")}
    shares = []
    for r in range(a.rounds):
        peer.wait_idle()
        with Others(peer) as c:
            rows["torch_sgemm"].append(peer.bench_matmul(1024, torch.float32)["gflops"])
            rows["go_sgemm"].append(go_bench("./gemm/", "Sgemm/1024/(avx512|avx2)/threads=2$", "20x", "GFLOP/s"))
            # PyTorch's faster of one and two threads (its default here was
            # one thread on some machines).
            mlp = []
            for th in (1, 2):
                torch.set_num_threads(th)
                mlp.append(peer.bench_mlp(10, 40)["median_s"] * 1e3)
            torch.set_num_threads(threads)
            rows["torch_mlp"].append(min(mlp))
            rows["go_mlp"].append(go_bench("./train/", "MLPTrainStep/cpu$", "40x", "ms/step"))
            rows["torch_lstm"].append(peer.bench_lstm(64, 2, 5)["median_s"] * 1e3)
            rows["go_lstm"].append(go_bench("./models/charlstm/", "LSTMTrainStep/cpu$", "5x", "ms/step"))
            rows["torch_moe"].append(peer.bench_moe(peer.MoESparse, 5, 20)["median_s"] * 1e3)
            rows["go_moe"].append(go_bench("./models/moe/", "TrainStep/sparse/cpu$", "20x", "ms/step"))
            rows["torch_moe_dense"].append(peer.bench_moe(peer.MoEDense, 5, 20)["median_s"] * 1e3)
            rows["go_moe_dense"].append(go_bench("./models/moe/", "TrainStep/dense/cpu$", "20x", "ms/step"))
            tf = []
            for th in (1, 2):
                torch.set_num_threads(th)
                tf.append(tft.bench(16, 10, "softmax", "swiglu")["median_s"] * 1e3)
            torch.set_num_threads(threads)
            rows["torch_tf"].append(min(tf))
            rows["go_tf"].append(go_bench("./models/transformer/", "TrainStep/softmax-swiglu-batch=16/cpu$", "10x",
                                          "ms/step"))
            # bfloat16 mixed precision: PyTorch's autocast beside gotrain's
            # --precision bf16-mixed (the same benchmarks' bf16 cases).
            mlp = []
            for th in (1, 2):
                torch.set_num_threads(th)
                mlp.append(torch_mlp(peer, 10, 40, True))
            torch.set_num_threads(threads)
            rows["torch_mlp_bf16"].append(min(mlp))
            rows["go_mlp_bf16"].append(go_bench("./train/", "MLPTrainStep/cpu-bf16-mixed$", "40x", "ms/step"))
            tf = []
            for th in (1, 2):
                torch.set_num_threads(th)
                tf.append(tft.bench(16, 10, "softmax", "swiglu", bf16=True)["median_s"] * 1e3)
            torch.set_num_threads(threads)
            rows["torch_tf_bf16"].append(min(tf))
            rows["go_tf_bf16"].append(go_bench("./models/transformer/",
                                               "TrainStep/softmax-swiglu-batch=16/cpu-bf16-mixed$", "10x", "ms/step"))
            # gotrain's bf16 / fp32 ratio from steps timed back to back
            # (float32, bf16, float32, bf16): this virtual machine's speed
            # drifts by up to 40 % over minutes, which the separate medians
            # above, taken half a minute apart, do not cancel.
            for key, pkg, name, n in (("mlp_pair_ratio", "./train/", "MLPTrainStep/cpu", "80x"),
                                      ("tf_pair_ratio", "./models/transformer/",
                                       "TrainStep/softmax-swiglu-batch=16/cpu", "30x")):
                pair = []
                for _ in range(2):
                    f32 = go_bench(pkg, name + "$", n, "ms/step")
                    pair.append(go_bench(pkg, name + "-bf16-mixed$", n, "ms/step") / f32)
                rows[key].append(statistics.median(pair))
        shares.append(c.foreign_share)
        print(f"round {r + 1}: " + ", ".join(f"{k} {v[-1]:.1f}" for k, v in rows.items())
              + f"; other processes {c.foreign_share:.1%}", flush=True)
    med = {k: statistics.median(v) for k, v in rows.items()}
    print(f"\n{time.strftime('%Y-%m-%d %H:%M')} UTC, medians of {a.rounds} rounds, "
          f"load {os.getloadavg()[0]:.2f}, other-process CPU share ≤ {max(shares):.1%}")
    print("| measurement | PyTorch | gotrain cpu | gotrain / PyTorch |")
    print("|---|---:|---:|---:|")
    print(f"| SGEMM 1024³ fp32, GFLOP/s | {med['torch_sgemm']:.1f} | {med['go_sgemm']:.1f} | "
          f"{med['go_sgemm'] / med['torch_sgemm']:.2f}x |")
    print(f"| MLP 784-512-512-10 b256 Adam, ms/step | {med['torch_mlp']:.2f} | {med['go_mlp']:.2f} | "
          f"{med['go_mlp'] / med['torch_mlp']:.2f}x |")
    print(f"| char-LSTM 2x512 b64 seq 100, ms/step | {med['torch_lstm']:.0f} | {med['go_lstm']:.0f} | "
          f"{med['go_lstm'] / med['torch_lstm']:.2f}x |")
    print(f"| MoE 8x(784-256-10) top-2 sparse b256, ms/step | {med['torch_moe']:.1f} | {med['go_moe']:.1f} | "
          f"{med['go_moe'] / med['torch_moe']:.2f}x |")
    print(f"| MoE same, dense, ms/step | {med['torch_moe_dense']:.1f} | {med['go_moe_dense']:.1f} | "
          f"{med['go_moe_dense'] / med['torch_moe_dense']:.2f}x |")
    print(f"| transformer 4x4x128 ctx 64 b16, ms/step | {med['torch_tf']:.1f} | {med['go_tf']:.1f} | "
          f"{med['go_tf'] / med['torch_tf']:.2f}x |")
    print()
    print("| bf16-mixed (autocast in PyTorch), ms/step | PyTorch bf16 | gotrain bf16 | gotrain / PyTorch bf16 | "
          "gotrain bf16 / gotrain fp32 | same, timed back to back (median of rounds) |")
    print("|---|---:|---:|---:|---:|---:|")
    print(f"| MLP 784-512-512-10 b256 Adam | {med['torch_mlp_bf16']:.2f} | {med['go_mlp_bf16']:.2f} | "
          f"{med['go_mlp_bf16'] / med['torch_mlp_bf16']:.2f}x | {med['go_mlp_bf16'] / med['go_mlp']:.2f}x | "
          f"{med['mlp_pair_ratio']:.2f}x |")
    print(f"| transformer 4x4x128 ctx 64 b16 | {med['torch_tf_bf16']:.1f} | {med['go_tf_bf16']:.1f} | "
          f"{med['go_tf_bf16'] / med['torch_tf_bf16']:.2f}x | {med['go_tf_bf16'] / med['go_tf']:.2f}x | "
          f"{med['tf_pair_ratio']:.2f}x |")
    if a.json:
        with open(a.json, "w") as fh:
            json.dump({"rounds": rows, "medians": med, "other_share": shares}, fh, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
