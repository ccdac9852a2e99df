#!/usr/bin/env bash
# gpu-verify.sh: the first minutes on a GPU machine, decisive (issue #18).
#
#   scripts/gpu-verify.sh --build DIR
#       (here, with Go) builds the bundle DIR/gpu-verify.tar.gz: the stripped
#       default binary gotrain, this script, and the test binaries of
#       TEST_PKGS below (tests/PKG/NAME.test, with their testdata); prints
#       the sizes and the glibc version the binary needs.
#       On the GPU machine: tar -xzf gpu-verify.tar.gz -C gv && gv/gpu-verify.sh
#   scripts/gpu-verify.sh [--gotrain BIN] [--device gpu] [--size small|seed]
#                         [--out DIR] [--tests DIR]
#       (--gotrain defaults to the gotrain beside the script, --tests to the
#       tests folder beside it)
#       (on the GPU machine: no network, no Go) runs every check below on
#       --device beside the native CPU, each step time-boxed, the whole under
#       9 minutes, and writes DIR/report.md (default ./gpu-verify-DATE-TIME) with the
#       machine, the driver, the plugin, every figure and every verdict.
#
# On a machine without a GPU, --device go stands in for the GPU (CI runs
# `scripts/gpu-verify.sh --device go --size small`): steps the stand-in cannot
# do report "skipped: reason". Every compared figure has a stated tolerance;
# a verdict is "identical", "within tol", "skipped: ...", or a failure, and
# the script exits non-zero when any step fails: a run that exits non-zero,
# a comparison out of tolerance, a loss curve that stops early, a workload
# that cannot run on the device. --out must be a new or empty folder.
set -u

GOTRAIN=${GOTRAIN:-}
DEV=gpu
SIZE=small
OUT=gpu-verify-$(date -u +%Y%m%d-%H%M%S)
TESTS=
BUDGET=${GPU_VERIFY_BUDGET_S:-530}

die() { echo "gpu-verify: $*" >&2; exit 2; }

# The test binaries in the bundle: forestgraph's and sigraph's graph
# tests (parity with the native learner and the CPU features) run on the
# device named by GOTRAIN_TEST_DEVICE, set to --device; device's discovery
# and loading tests run with the machine's plugins hidden; of cmd/gotrain
# only the tests with a GPU-present branch run (those that call gpuHere:
# GOTRAIN_GPU_TESTS, which a test in cmd/gotrain keeps complete), the rest
# of its suite being GPU-agnostic and long.
TEST_PKGS="device forest/forestgraph signal/sigraph cmd/gotrain"
GOTRAIN_GPU_TESTS='^(TestBenchCommand|TestDeviceGPUFallback|TestDeviceGPUWithoutGPUFails|TestDoctorGPUWithoutGPUFails|TestForestGraphDeviceErrors|TestForestTrainErrors|TestSignalGPURefused)$'

if [ "${1:-}" = "--build" ]; then
  D=${2:?usage: gpu-verify.sh --build DIR}
  mkdir -p "$D" || die "cannot create $D"
  D=$(cd "$D" && pwd)
  cd "$(dirname "$0")/.." || exit 2
  S=$(mktemp -d) || exit 2
  trap 'rm -rf "$S"' EXIT
  go build -ldflags='-s -w' -o "$S/gotrain" ./cmd/gotrain || die "go build failed"
  # Each test binary sits at its package's path, with the package's
  # testdata, so that it runs in a folder laid out as in the repository.
  for p in $TEST_PKGS; do
    mkdir -p "$S/tests/$p" || exit 2
    go test -c -ldflags='-s -w' -o "$S/tests/$p/$(basename "$p").test" "./$p" || die "go test -c ./$p failed"
    if [ -d "$p/testdata" ]; then cp -r "$p/testdata" "$S/tests/$p/" || exit 2; fi
  done
  mkdir -p "$S/tests/signal/testdata" && cp -r signal/testdata/reference "$S/tests/signal/testdata/" || exit 2
  cp scripts/gpu-verify.sh "$S/" || exit 2
  # The newest GLIBC_x.y symbol version the binary asks for.
  glibc=$(objdump -T "$S/gotrain" 2>/dev/null | grep -o 'GLIBC_[0-9.]*' | sort -uV | tail -n1)
  (cd "$S" && ls -l gotrain && find tests -name '*.test' -exec ls -l {} + && du -sh .)
  # One compressed file: the unpacked bundle is over the 64 MiB a device
  # tool carries; packed it is under two thirds of that.
  tar -C "$S" -czf "$D/.gpu-verify.tar.gz.tmp" . && mv "$D/.gpu-verify.tar.gz.tmp" "$D/gpu-verify.tar.gz" || die "cannot write $D/gpu-verify.tar.gz"
  ls -l "$D/gpu-verify.tar.gz"
  echo "glibc needed: ${glibc:-unknown (objdump missing)}"
  echo "on the GPU machine: mkdir -p gv && tar -xzf gpu-verify.tar.gz -C gv && gv/gpu-verify.sh --size seed --out OUT"
  exit 0
fi

while [ $# -gt 0 ]; do
  case $1 in
    --gotrain) GOTRAIN=$2; shift 2 ;;
    --device) DEV=$2; shift 2 ;;
    --size) SIZE=$2; shift 2 ;;
    --out) OUT=$2; shift 2 ;;
    --tests) TESTS=$2; shift 2 ;;
    -h|--help) sed -n 2,20p "$0"; exit 0 ;;
    *) die "unknown argument $1 (see --help)" ;;
  esac
done
if [ -z "$TESTS" ] && [ -d "$(dirname "$0")/tests" ]; then TESTS="$(dirname "$0")/tests"; fi
case $SIZE in small|seed) ;; *) die "--size $SIZE: want small or seed" ;; esac
if [ -z "$GOTRAIN" ]; then
  for c in "$(dirname "$0")/gotrain" ./gotrain "$(command -v gotrain 2>/dev/null)"; do
    [ -n "$c" ] && [ -x "$c" ] && { GOTRAIN=$c; break; }
  done
fi
[ -n "$GOTRAIN" ] && [ -x "$GOTRAIN" ] || die "no gotrain binary: pass --gotrain BIN (build one with --build DIR)"
PY=$(command -v python3) || die "python3 is needed for the comparisons"
# A run never overwrites or deletes what another made: --out must be new or empty.
if [ -e "$OUT" ] && [ -n "$(ls -A "$OUT" 2>/dev/null)" ]; then die "--out $OUT is not empty: name a new folder"; fi
mkdir -p "$OUT/logs" || die "cannot create $OUT"
export GOMLX_NO_AUTO_INSTALL=1
STANDIN=0; [ "$DEV" = go ] && STANDIN=1

R="$OUT/report.md"; ROWS="$OUT/rows.md"; : >"$ROWS"
FAILED=0
START=$(date +%s)
declare -A SEC RCS # seconds and exit status of each run, by name

# row STEP VERDICT FIGURES SECONDS: one line of the report's table.
row() {
  printf '| %s | %s | %s | %s |\n' "$1" "$2" "$3" "$4" >>"$ROWS"
  printf '%-24s %-14s %s\n' "$1" "$2" "$3"
  case $2 in identical|"within tol"|ok|skipped*) ;; *) FAILED=1 ;; esac
}

# run NAME SECONDS CMD...: runs CMD time-boxed (never past the budget),
# output in logs/NAME.log; sets RC and SECS.
run() {
  local name=$1 t=$2; shift 2
  local left=$(( BUDGET - ($(date +%s) - START) ))
  if [ "$left" -le 5 ]; then RC=124; SECS=0; SEC[$name]=0; RCS[$name]=124; echo "budget spent" >"$OUT/logs/$name.err"; return; fi
  [ "$t" -gt "$left" ] && t=$left
  local t0; t0=$(date +%s.%N)
  timeout -k 10 "$t" "$@" >"$OUT/logs/$name.log" 2>"$OUT/logs/$name.err"; RC=$?
  SECS=$("$PY" -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.1f}')" "$t0" "$(date +%s.%N)")
  SEC[$name]=$SECS; RCS[$name]=$RC
}

# ok NAME...: whether every named run exited 0.
ok() { local n; for n in "$@"; do [ "${RCS[$n]:-1}" = 0 ] || return 1; done; }

# failed NAME...: the report's figures for the first named run that failed.
failed() { local n; for n in "$@"; do [ "${RCS[$n]:-1}" = 0 ] || { echo "$n: rc ${RCS[$n]:-none}: $(last "$n")"; return; }; done; }

# last LOG: the last line of an error log, for the report.
last() { tail -n 1 "$OUT/logs/$1.err" 2>/dev/null | tr '|' '/' | cut -c1-160; }

# compare KIND A B: the comparisons, in Python (standard library only).
# Prints "VERDICT<TAB>FIGURES".
compare() {
  "$PY" - "$@" <<'PYEOF'
import json, math, sys
kind, a, b = sys.argv[1], sys.argv[2], sys.argv[3]

def verdict(worst, tol, what):
    if worst == 0:
        return "identical", what
    if worst <= tol:
        return "within tol", what
    return "MISMATCH", what

if kind == "curve":
    # Loss curves of the metrics logs: every logged step, relative error.
    def load(p):
        out = {}
        for line in open(p):
            line = line.strip()
            if line:
                r = json.loads(line)
                if "loss" in r and "step" in r:
                    out[r["step"]] = r["loss"]
        return out
    ca, cb = load(a), load(b)
    want_last = int(sys.argv[4])
    steps = sorted(ca)
    if not steps or sorted(cb) != steps or steps[-1] != want_last:
        print(f"MISMATCH\tlogged steps differ or stop early: {sorted(ca)[-3:]} vs {sorted(cb)[-3:]}, want the last at {want_last}"); sys.exit()
    if not all(math.isfinite(ca[s]) and math.isfinite(cb[s]) for s in steps):
        print("MISMATCH\ta non-finite loss"); sys.exit()
    tol = 2e-2  # float32 on two devices: summation order differs; 2% of the loss over 20 steps
    worst = max(abs(ca[s] - cb[s]) / max(abs(ca[s]), 1e-12) for s in steps)
    v, w = verdict(worst, tol, f"{len(steps)} steps, loss {ca[steps[-1]]:.4f} vs {cb[steps[-1]]:.4f}, max rel err {worst:.2e} (tol {tol:g})")
    print(f"{v}\t{w}")
elif kind == "features":
    # signal features --json --arrays: every feature, with the floors of
    # sigraph.Compare (error = |device - cpu| / max(|cpu|, floor)).
    fa, fb = json.load(open(a)), json.load(open(b))
    for k in ("samples", "sample_rate", "spectrogram_shape"):
        if fa.get(k) != fb.get(k):
            print(f"MISMATCH\t{k}: {fa.get(k)} vs {fb.get(k)}"); sys.exit()
    if "non_finite" in fa or "non_finite" in fb:
        print(f"MISMATCH\tnon-finite features: {fa.get('non_finite')} / {fb.get('non_finite')}"); sys.exit()
    df = fa["sample_rate"] / max(len(fa.get("psd") or []), 1)
    rms = math.sqrt(max(fa.get("c21") or 0, 0))
    floors = {"rssi_dbfs": 1, "rssi_dbm": 1, "snr_db": 1, "snr_inband_db": 1, "noise_psd": 1e-30,
              "occupied_bw_hz": df, "obw_hz": df, "centroid_hz": df, "bandwidth_hz": df, "flatness": 1e-6,
              "rolloff_hz": df, "c21": 1e-30, "c42": 1, "inst_amp_mean": rms, "inst_amp_std": rms,
              "inst_phase_mean": 1, "inst_phase_std": 1, "inst_freq_mean": df, "inst_freq_std": df}
    worst, name, n = 0.0, "", 0
    def check(k, va, vb, floor):
        global worst, name, n
        n += 1
        if va is None or vb is None:
            e = math.inf
        else:
            e = abs(va - vb) / max(abs(va), floor)
        if not e <= worst:
            worst, name = e, k
    for k, floor in floors.items():
        check(k, fa.get(k), fb.get(k), floor)
    for k in ("c20_complex", "c40_complex", "c41_complex"):  # complex: |g - w| / max(|w|, 1)
        va, vb = fa.get(k), fb.get(k)
        if not va or not vb or None in va + vb:
            check(k, None, None, 1)
        else:
            n += 1
            e = math.hypot(va[0] - vb[0], va[1] - vb[1]) / max(math.hypot(*va), 1)
            if not e <= worst:
                worst, name = e, k
    for k in ("mfcc", "psd"):  # arrays: every element, relative above 1 (mfcc) or to the peak (psd)
        va, vb = fa.get(k) or [], fb.get(k) or []
        if len(va) != len(vb) or not va:
            check(k, None, None, 1); continue
        scale = 1.0 if k == "mfcc" else max(abs(v) for v in va if v is not None) or 1e-30
        for i, (x, y) in enumerate(zip(va, vb)):
            check(f"{k}[{i}]", x, y, scale)
    tol = 1e-3  # the graph path's float32 stages (docs/SIGNAL.md, parity table)
    v, w = verdict(worst, tol, f"{n} values, max err {worst:.2e} ({name or '-'}) (tol {tol:g}; floors as sigraph.Compare)")
    print(f"{v}\t{w}")
elif kind == "devices":
    d = json.load(open(a))
    out = []
    for v in d.get("verify") or []:
        out.append("%s: rel err %.1e (tol %g), first %.1f ms, median %.3f ms" % (v["device"], v["rel_error"], v["tolerance"], v["first_ms"], v["median_ms"]))
    for e in d.get("devices") or []:
        if e.get("name") == b and e.get("plugin"):
            out.append("plugin %s" % e["plugin"])
    print("; ".join(out))
elif kind == "bench":
    # Every workload must have run on the device, with parity.
    d = json.load(open(a))
    rs = [r for r in d["results"] if r["device"] == b]
    bad = [r for r in rs if not r.get("available") or not (r.get("parity") == "identical" or str(r.get("parity", "")).startswith("within "))]
    figs = ", ".join("%s/%s: %s" % (r["workload"], r["device"], r.get("parity") or r.get("reason", "")) for r in rs)
    print(("MISMATCH" if bad or not rs else "ok") + "\t" + (figs or "no result on " + b))
elif kind == "csv":
    la, lb = open(a).read().splitlines(), open(b).read().splitlines()
    if la == lb:
        print(f"identical\t{len(la) - 1} rows, byte for byte")
    else:
        first = next((i for i, (x, y) in enumerate(zip(la, lb)) if x != y), min(len(la), len(lb)))
        print(f"MISMATCH\tfirst differing row {first}: {la[first][:60] if first < len(la) else '-'} vs {lb[first][:60] if first < len(lb) else '-'}")
PYEOF
}

# ---- the machine
{
  echo "# gotrain GPU verification"
  echo
  echo "Made by \`scripts/gpu-verify.sh --device $DEV --size $SIZE\` on $(date -u +%Y-%m-%dT%H:%MZ)."
  [ "$STANDIN" = 1 ] && echo "**Stand-in run:** \`--device go\` (GoMLX's pure-Go backend) stands in for a GPU; no GPU figure here."
  echo
  echo "- host: $(uname -srm), $(nproc) CPUs"
  echo "- gotrain: $("$GOTRAIN" version 2>&1 | head -n1)"
  echo "- binary: $(ls -l "$GOTRAIN" | awk '{print $5}') bytes; libc: $(ldd --version 2>&1 | head -n1)"
  if command -v nvidia-smi >/dev/null; then
    echo "- GPU and driver: $(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1 | head -n1)"
  else
    echo "- GPU and driver: none (no nvidia-smi)"
  fi
} >"$R"

run devices 90 "$GOTRAIN" --json --device "$DEV" devices --verify --repeats 5
if [ "$RC" = 0 ] && "$PY" -c 'import json,sys; d=json.load(open(sys.argv[1])); sys.exit(0 if any(v["device"].split(":")[0] == sys.argv[2] and v.get("ok") for v in d.get("verify") or []) else 1)' "$OUT/logs/devices.log" "$DEV"; then
  figs=$(compare devices "$OUT/logs/devices.log" "$DEV")
  row "devices --verify" "ok" "$figs" "$SECS"
else
  row "devices --verify" "FAILED (rc $RC)" "$(last devices)" "$SECS"
fi

run doctor 90 "$GOTRAIN" --device "$DEV" doctor --burst 2s
util=$(grep -m1 'GPU utilisation' "$OUT/logs/doctor.log" | sed 's/^ *//' | cut -c1-120)
counts="$(grep -c '^\[ok\]' "$OUT/logs/doctor.log") ok, $(grep -c '^\[warn\]' "$OUT/logs/doctor.log") warn"
if [ "$RC" = 0 ] && [ "$STANDIN" = 1 ]; then row "doctor" "ok" "$counts; no GPU to sample (stand-in)" "$SECS"
elif [ "$RC" = 0 ] && [ -n "$util" ]; then row "doctor" "ok" "$counts; $util" "$SECS"
elif [ "$RC" = 0 ]; then row "doctor" "FAILED" "$counts; no GPU utilisation sample in the live finding" "$SECS"
else row "doctor" "FAILED (rc $RC)" "$(grep -m1 '^\[fail\]' "$OUT/logs/doctor.log" | cut -c1-160)" "$SECS"; fi

run bench 150 "$GOTRAIN" --json bench --size "$SIZE" --devices "cpu,$DEV" --repeats 2 --md "$OUT/bench.md"
if [ "$RC" = 0 ]; then
  IFS=$'\t' read -r v f < <(compare bench "$OUT/logs/bench.log" "$DEV"); row "bench --size $SIZE" "$v" "$f" "$SECS"
else row "bench --size $SIZE" "FAILED (rc $RC)" "$(last bench)" "$SECS"; fi

# ---- forests: the same trees and predictions on the device as on the CPU
D="$OUT/data"; mkdir -p "$D"
run dataset 60 "$GOTRAIN" --device cpu signal dataset --out "$D/sig" --per-class 30 --seconds 0.02 --force
"$PY" -c '
import csv, sys
rows = list(csv.reader(open(sys.argv[1])))
keep = [i for i, h in enumerate(rows[0]) if h != "label"]  # forest predict reads numbers only
csv.writer(open(sys.argv[2], "w", newline="")).writerows([[r[i] for i in keep] for r in rows])
' "$D/sig/features.csv" "$D/rows.csv" 2>/dev/null
trees=20; [ "$SIZE" = seed ] && trees=200
for d in cpu "$DEV"; do
  run "forest-$d" 180 "$GOTRAIN" --json --device "$d" forest train --train "$D/sig/features.csv" --target label --task classification --trees "$trees" --seed 1 --holdout 0 --save "$OUT/forest-$d.gtf"
  run "predict-$d" 120 "$GOTRAIN" --device "$d" forest predict --model "$OUT/forest-cpu.gtf" --data "$D/rows.csv" --out "$OUT/pred-$d.csv"
done
if ok dataset forest-cpu "forest-$DEV"; then
  if cmp -s "$OUT/forest-cpu.gtf" "$OUT/forest-$DEV.gtf"; then row "forest fit ($trees trees)" "identical" "model files byte for byte" "${SEC[forest-$DEV]}"
  else row "forest fit ($trees trees)" "MISMATCH" "model files differ: $(cmp "$OUT/forest-cpu.gtf" "$OUT/forest-$DEV.gtf" 2>&1 | head -n1)" "${SEC[forest-$DEV]}"; fi
else row "forest fit ($trees trees)" "FAILED" "$(failed dataset forest-cpu "forest-$DEV")" "${SEC[forest-$DEV]:-0}"; fi
if ok predict-cpu "predict-$DEV"; then
  IFS=$'\t' read -r v f < <(compare csv "$OUT/pred-cpu.csv" "$OUT/pred-$DEV.csv"); row "forest predict" "$v" "$f" "${SEC[predict-$DEV]}"
else row "forest predict" "FAILED" "$(failed predict-cpu "predict-$DEV")" "${SEC[predict-$DEV]:-0}"; fi

# ---- neural models: loss curves on the device beside the CPU
"$PY" -c 'import sys; open(sys.argv[1], "w").write(("Light is refracted by the prism, and the colours of the spectrum appear in order. " * 400))' "$D/corpus.txt"
steps=20; [ "$SIZE" = seed ] && steps=100
common=(--steps "$steps" --log-every 5 --no-checkpoint --progress off --seed 1)
moe=(moe train --dataset digits --experts 4 --hidden 32 --batch-size 64 "${common[@]}")
for d in cpu "$DEV"; do
  run "moe-$d" 120 "$GOTRAIN" --device "$d" "${moe[@]}" --out "$OUT/moe-$d" --metrics-log "$OUT/moe-$d.jsonl"
  run "lstm-$d" 120 "$GOTRAIN" --device "$d" lm lstm train --data "$D/corpus.txt" --hidden-size 64 --layers 1 --seq-length 32 --batch-size 32 "${common[@]}" --metrics-log "$OUT/lstm-$d.jsonl"
  run "transformer-$d" 150 "$GOTRAIN" --device "$d" lm transformer train --pretrain-data "$D/corpus.txt" --layers 1 --heads 2 --width 32 --context 32 --batch-size 16 --instruction-epochs 0 "${common[@]}" --metrics-log "$OUT/transformer-$d.jsonl"
done
for m in moe lstm transformer; do
  if ok "$m-cpu" "$m-$DEV"; then
    IFS=$'\t' read -r v f < <(compare curve "$OUT/$m-cpu.jsonl" "$OUT/$m-$DEV.jsonl" "$steps"); row "$m loss curve" "$v" "$f" "${SEC[$m-$DEV]}"
  else row "$m loss curve" "FAILED" "$(failed "$m-cpu" "$m-$DEV")" "${SEC[$m-$DEV]:-0}"; fi
done

# ---- signal features on the device against the CPU path
run synth 30 "$GOTRAIN" --device cpu signal synth --out "$D/rec.cf32" --seconds 0.1 --offset 25000
for d in cpu "$DEV"; do run "features-$d" 120 "$GOTRAIN" --json --device "$d" signal features --in "$D/rec.cf32" --rate 200000 --arrays; done
if ok synth features-cpu "features-$DEV"; then
  IFS=$'\t' read -r v f < <(compare features "$OUT/logs/features-cpu.log" "$OUT/logs/features-$DEV.log"); row "signal features" "$v" "$f" "${SEC[features-$DEV]}"
else row "signal features" "FAILED" "$(failed synth features-cpu "features-$DEV")" "${SEC[features-$DEV]:-0}"; fi

# ---- mixed precision steps on the device
for p in bf16-mixed 16-mixed; do
  run "precision-$p" 120 "$GOTRAIN" --json --device "$DEV" lm lstm train --data "$D/corpus.txt" --hidden-size 64 --layers 1 --seq-length 32 --batch-size 32 --steps 5 --no-checkpoint --progress off --precision "$p"
  if [ "$RC" = 0 ]; then row "--precision $p" "ok" "5 steps, loss $("$PY" -c 'import json,sys; print(round(json.load(open(sys.argv[1]))["result"]["train"]["loss"],4))' "$OUT/logs/precision-$p.log" 2>/dev/null)" "$SECS"
  elif [ "$STANDIN" = 1 ] && [ "$p" = 16-mixed ] && grep -q 'no float16 support' "$OUT/logs/precision-$p.err"; then row "--precision $p" "skipped: the stand-in has no float16" "$(last "precision-$p")" "$SECS"
  else row "--precision $p" "FAILED (rc $RC)" "$(last "precision-$p")" "$SECS"; fi
done

# ---- several devices, where there are
n=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)
if [ "$STANDIN" = 0 ] && [ "${n:-0}" -gt 1 ]; then
  run devices-all 150 "$GOTRAIN" --device "$DEV" "${moe[@]}" --devices all --out "$OUT/moe-all" --metrics-log "$OUT/moe-all.jsonl"
  if ok moe-cpu devices-all; then IFS=$'\t' read -r v f < <(compare curve "$OUT/moe-cpu.jsonl" "$OUT/moe-all.jsonl" "$steps"); row "--devices all ($n GPUs)" "$v" "$f" "$SECS"
  else row "--devices all ($n GPUs)" "FAILED (rc $RC)" "$(last devices-all)" "$SECS"; fi
else
  row "--devices all" "skipped: $([ "$STANDIN" = 1 ] && echo "the stand-in is one device" || echo "${n:-0} GPU(s)")" "" 0
fi

# ---- test binaries built with --build (their GPU-present branches), each
# run in its package's folder of the bundle
if [ -n "$TESTS" ]; then
  for p in $TEST_PKGS; do
    name=$(basename "$p"); tb="$TESTS/$p/$name.test"
    if [ ! -x "$tb" ]; then row "go test ./$p" "MISSING" "no $tb (build the bundle with --build)" 0; continue; fi
    sel=(); [ "$p" = cmd/gotrain ] && sel=(-test.run "$GOTRAIN_GPU_TESTS")
    # forestgraph's and sigraph's graph tests run on $GOTRAIN_TEST_DEVICE.
    run "test-$name" 240 env GOTRAIN_TEST_DEVICE="$DEV" bash -c 'cd "$1" && shift && exec "$@"' _ "$(dirname "$tb")" "./$name.test" -test.short -test.count=1 -test.v "${sel[@]}"
    log="$OUT/logs/test-$name.log"
    np=$(grep -c -- '^--- PASS' "$log"); ns=$(grep -c -- '^--- SKIP' "$log")
    if [ "$RC" = 0 ] && [ "$np" -gt 0 ]; then row "go test ./$p" "ok" "$np passed, $ns skipped (reasons in logs/test-$name.log)" "$SECS"
    elif [ "$RC" = 0 ]; then row "go test ./$p" "NO TESTS RAN" "" "$SECS"
    else row "go test ./$p" "FAILED (rc $RC)" "$(grep -m1 -- '--- FAIL' "$log" | cut -c1-120)" "$SECS"; fi
  done
fi

{
  echo
  echo "| step | verdict | figures | seconds |"
  echo "|---|---|---|---:|"
  cat "$ROWS"
  echo
  echo "Tolerances: loss curves 2% relative at every logged step, the same steps on both devices (float32, another summation order); signal features 1e-3 of max(|cpu value|, floor), the floors of sigraph.Compare, every scalar, MFCC and PSD bin; forest models and predictions byte for byte; bench workloads their own tolerance, every one run on the device. Logs are in \`$OUT/logs\`. Whole run: $(( $(date +%s) - START )) s."
} >>"$R"
rm -f "$ROWS"
echo "report: $R"
exit $FAILED
