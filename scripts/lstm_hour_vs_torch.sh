#!/usr/bin/env bash
# Issue #22 item 5: the 2x512 char-LSTM on Moby-Dick for an hour of wall-clock
# time, gotrain with `lm lstm train`'s default flags and `--time-limit`, then
# PyTorch's same model and training (scripts/lstm_torch.py: the same plan of
# the steps that fit), one after the other on this machine; then the
# validation loss of both against wall-clock minutes (scripts/lstm_curves.py,
# a table and, with matplotlib, a plot). Extra arguments go to both (the
# flags the two spell alike: --lr; GOTRAIN_ARGS and TORCH_ARGS to one).
#
#   OUT=/tmp/lstm-hour scripts/lstm_hour_vs_torch.sh
#
# MINUTES (default 60) sets the budget of each run; DATA the text. Both
# budgets count from the start of the training loop (the data read, the
# model built); each run plans its steps to end, final validation included,
# within it. timeout stops gotrain 5 minutes past the budget should it not
# end (SIGINT: the harness finishes the step, writes a checkpoint and exits).
# Keep the machine otherwise idle: the runs take twice MINUTES.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
data=${DATA:-$root/../shared/data/text/moby-dick.txt}
minutes=${MINUTES:-60}
out=${OUT:-$(mktemp -d /tmp/lstm-hour.XXXXXX)}
mkdir -p "$out"
if [ -e "$out/gotrain.jsonl" ] || [ -e "$out/torch.jsonl" ]; then
	echo "lstm_hour_vs_torch: $out already holds a run; choose another OUT" >&2
	exit 2
fi
(cd "$root" && go build -o "$out/gotrain" ./cmd/gotrain)
echo "gotrain: $minutes min from $(date -u +%H:%M:%S) UTC, log $out/gotrain.jsonl" >&2
rc=0
# shellcheck disable=SC2086 # GOTRAIN_ARGS and TORCH_ARGS are word lists
timeout -s INT "$((minutes + 5))m" "$out/gotrain" lm lstm train --data "$data" --time-limit "${minutes}m" \
	--metrics-log "$out/gotrain.jsonl" --out "$out/checkpoints" "$@" ${GOTRAIN_ARGS:-} >"$out/gotrain.txt" 2>&1 || rc=$?
if [ "$rc" -ne 0 ]; then
	echo "lstm_hour_vs_torch: gotrain exited with $rc:" >&2
	tail -20 "$out/gotrain.txt" >&2
	exit 1
fi
echo "PyTorch: $minutes min from $(date -u +%H:%M:%S) UTC, log $out/torch.jsonl" >&2
# shellcheck disable=SC2086
/usr/bin/python3 "$root/scripts/lstm_torch.py" --data "$data" --minutes "$minutes" "$@" ${TORCH_ARGS:-} \
	--log "$out/torch.jsonl" 2>"$out/torch.txt"
/usr/bin/python3 "$root/scripts/lstm_curves.py" --minutes "$minutes" --plot "$out/lstm-hour.png" \
	"gotrain=$out/gotrain.jsonl" "PyTorch=$out/torch.jsonl"
