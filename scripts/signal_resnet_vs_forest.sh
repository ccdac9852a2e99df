#!/usr/bin/env bash
# The ResNet on raw IQ against the forest on features (issue #23 item 3,
# docs/SIGNAL.md "ResNet on raw IQ"): generates a training and a test set of
# the 24 RadioML 2018 classes with an impairment recipe, trains both
# classifiers on the training set, evaluates both on the test set and writes
# the accuracy per SNR side by side as a Markdown table and a PNG.
#
#   scripts/signal_resnet_vs_forest.sh            # the full run: about 40 min on 2 cores
#   SMOKE=1 scripts/signal_resnet_vs_forest.sh    # a 2-minute check that it all works
#
# Environment (defaults of the full run in brackets):
#   OUT       output folder [/tmp/gotrain-resnet-vs-forest]; its data sets are replaced
#   BUDGET    the ResNet's training wall-time budget [30m]
#   PER_CLASS training records per class [1200]; TEST_PER_CLASS test records per class [320]
#   STEPS     optimizer steps the learning-rate schedule spans [8000]; BUDGET may end training first
#   RECIPE    impairment recipe: default, none or a file [default: the built-in recipe of docs/SIGNAL.md "Impairments"]
#   GOTRAIN   gotrain binary [built from this checkout into OUT/gotrain]
# Outputs in OUT: train/ and test/ (data sets with IQ records), forest.json,
# resnet.json (the --json reports), resnet-runs/ (checkpoints), metrics.jsonl,
# compare.md (the table), compare.png, forest_snr.png, resnet_snr.png.
set -euo pipefail

OUT=${OUT:-/tmp/gotrain-resnet-vs-forest}
if [[ -n "${SMOKE:-}" ]]; then
	: "${BUDGET:=60s}" "${PER_CLASS:=32}" "${TEST_PER_CLASS:=16}" "${STEPS:=300}"
fi
BUDGET=${BUDGET:-30m}
PER_CLASS=${PER_CLASS:-1200}
TEST_PER_CLASS=${TEST_PER_CLASS:-320}
STEPS=${STEPS:-8000}
# Records of 4200 samples (21 ms at 200 kHz): four windows of 1024 even after
# a sample-rate offset has shortened a record by a sample.
SAMPLES=4200
SNR=-10:20:2
MODS=ook,4ask,8ask,bpsk,qpsk,8psk,16psk,32psk,16apsk,32apsk,64apsk,128apsk,16qam,32qam,64qam,128qam,256qam,am-ssb-wc,am-ssb-sc,am-dsb-wc,am-dsb-sc,fm,gmsk,oqpsk

mkdir -p "$OUT"
if [[ -z "${GOTRAIN:-}" ]]; then
	GOTRAIN=$OUT/gotrain
	(cd "$(dirname "$0")/.." && go build -o "$GOTRAIN" ./cmd/gotrain)
fi
RECIPE=${RECIPE:-default} # signal dataset's built-in recipe (signal/impair/default_recipe.json)

echo "== data sets: 24 classes, SNR $SNR dB, $SAMPLES samples, recipe $RECIPE"
"$GOTRAIN" signal dataset --mods "$MODS" --per-class "$PER_CLASS" --samples "$SAMPLES" --snr "$SNR" \
	--impairments "$RECIPE" --iq --seed 1 --out "$OUT/train" --force
"$GOTRAIN" signal dataset --mods "$MODS" --per-class "$TEST_PER_CLASS" --samples "$SAMPLES" --snr "$SNR" \
	--impairments "$RECIPE" --iq --seed 2 --out "$OUT/test" --force

echo "== forest on features"
"$GOTRAIN" --json signal classify train --data "$OUT/train" --test "$OUT/test" --seed 1 \
	--png-snr "$OUT/forest_snr.png" >"$OUT/forest.json"

echo "== resnet on raw IQ (time budget $BUDGET)"
rm -rf "$OUT/resnet-runs" "$OUT/metrics.jsonl"
"$GOTRAIN" --json --device cpu signal classify train --model resnet --data "$OUT/train" --test "$OUT/test" --seed 1 \
	--out "$OUT/resnet-runs" --time-budget "$BUDGET" --steps "$STEPS" --batch-size 32 --lr 0.002 --cosine --min-lr 0.0001 \
	--checkpoint-every 1000 --metrics-log "$OUT/metrics.jsonl" --log-every 50 --progress plain --progress-interval 60s \
	--png-snr "$OUT/resnet_snr.png" >"$OUT/resnet.json"

echo "== comparison"
"$GOTRAIN" signal classify compare --report "forest=$OUT/forest.json" --report "resnet=$OUT/resnet.json" \
	--markdown --png "$OUT/compare.png" | tee "$OUT/compare.md"
