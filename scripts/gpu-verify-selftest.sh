#!/usr/bin/env bash
# gpu-verify-selftest.sh GOTRAIN: checks that scripts/gpu-verify.sh fails
# when it should (CI runs it after the stand-in run). It gives the script a
# gotrain whose every command on the stand-in device (--device go, or
# --devices naming go) exits 3,
# and wants: exit status non-zero, and every step that runs on the device
# reported FAILED or MISMATCH, none ok or within tolerance. Then a spent
# time budget: exit non-zero with the table written, not a shell error.
set -u
REAL=${1:?usage: gpu-verify-selftest.sh GOTRAIN}
HERE=$(cd "$(dirname "$0")" && pwd)
T=$(mktemp -d) || exit 2
trap 'rm -rf "$T"' EXIT
cat >"$T/gotrain" <<WRAP
#!/usr/bin/env bash
for a in "\$@"; do
  if { [ "\$prev" = --device ] && [ "\$a" = go ]; } || { [ "\$prev" = --devices ] && [[ ",\$a," == *,go,* ]]; }; then echo "injected failure (gpu-verify-selftest)" >&2; exit 3; fi
  prev=\$a
done
exec "$REAL" "\$@"
WRAP
chmod +x "$T/gotrain"
fail=0
bash "$HERE/gpu-verify.sh" --gotrain "$T/gotrain" --device go --size small --out "$T/a" >"$T/a.log" 2>&1
rc=$?
[ "$rc" = 1 ] || { echo "selftest: failing device runs: exit $rc, want 1"; fail=1; }
for step in "devices --verify" "bench --size small" "forest fit" "forest predict" "moe loss curve" "lstm loss curve" "transformer loss curve" "signal features" "--precision bf16-mixed"; do
  line=$(grep -F "| $step" "$T/a/report.md" | head -n1)
  case $line in
    *"| FAILED"*|*"| MISMATCH"*) ;;
    *) echo "selftest: step '$step' not failed: ${line:-missing}"; fail=1 ;;
  esac
done
GPU_VERIFY_BUDGET_S=3 bash "$HERE/gpu-verify.sh" --gotrain "$REAL" --device go --size small --out "$T/b" >"$T/b.log" 2>&1
rc=$?
[ "$rc" = 1 ] && grep -q "budget spent" "$T/b/report.md" || { echo "selftest: spent budget: exit $rc, want 1 with the table"; tail -n 5 "$T/b.log"; fail=1; }
[ "$fail" = 0 ] && echo "gpu-verify selftest: ok (failures reported and exit status 1)"
exit $fail
