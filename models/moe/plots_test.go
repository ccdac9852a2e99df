package moe

import (
	stdcontext "context"
	"math"
	"path/filepath"
	"slices"
	"testing"

	"gonum.org/v1/plot/plotter"

	"github.com/gotrain/gotrain/internal/pngplot"
	"github.com/gotrain/gotrain/train"
)

// xs returns the steps of points.
func xs(points plotter.XYs) []float64 {
	var out []float64
	for _, p := range points {
		out = append(out, p.X)
	}
	return out
}

// TestOneEpochPlotsPerLoggedStep trains one epoch on the digits (6 steps,
// shorter than LogEvery) and checks training_metrics.png's series: the
// training loss and batch accuracy at every logged step (the first and
// the last: a line, not a dot), the validation figures at the epoch's
// last step, and an accuracy axis within [0, 1].
func TestOneEpochPlotsPerLoggedStep(t *testing.T) {
	d, err := Digits(0.1, 1)
	if err != nil {
		t.Fatal(err)
	}
	cfg := train.DefaultConfig()
	cfg.Optimizer, cfg.BatchSize, cfg.Epochs = train.OptimizerAdam, 256, 1
	cfg.NoCheckpoint, cfg.Progress = true, train.ProgressOff
	out := t.TempDir()
	res, err := Train(stdcontext.Background(), testBackend(t), Options{
		Model: Config{Experts: 2, Hidden: []int{8}, TopK: 1}, Train: cfg, Data: d, OutDir: out,
	})
	if err != nil {
		t.Fatal(err)
	}
	recs, err := train.ReadMetricsLog(filepath.Join(out, "metrics.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var logged []float64
	for _, r := range recs {
		logged = append(logged, r["step"].(float64))
		if a, ok := r["accuracy"].(float64); !ok || a < 0 || a > 1 {
			t.Errorf("metrics line %v: no batch accuracy", r)
		}
	}
	last := float64(res.Steps)
	if !slices.Equal(logged, []float64{1, last}) {
		t.Fatalf("logged steps %v, want [1 %g]", logged, last)
	}
	panels := trainingPanels(res.History, recs)
	for i, want := range [][]float64{{1, last}, {last}, {1, last}, {last}} {
		pn := panels[i/2]
		if got := xs(pn.lines[1+2*(i%2)].(plotter.XYs)); !slices.Equal(got, want) {
			t.Errorf("%s, %s: steps %v, want %v", pn.title, pn.lines[2*(i%2)], got, want)
		}
	}
	// The harness's own records (a metrics log that is a pipe is not read
	// back) hold the step as an int64: the same points.
	own := make([]map[string]any, len(recs))
	for i, r := range recs {
		own[i] = map[string]any{"step": int64(r["step"].(float64)), "loss": r["loss"], "accuracy": r["accuracy"]}
	}
	if got := xs(trainingPanels(res.History, own)[1].lines[1].(plotter.XYs)); !slices.Equal(got, []float64{1, last}) {
		t.Errorf("accuracy of the harness's records at steps %v", got)
	}
	// A panel without any point (no throughput in these records) is drawn empty.
	if err := plotTraining(filepath.Join(t.TempDir(), "t.png"), nil, own); err != nil {
		t.Errorf("plot with an empty panel: %v", err)
	}
	rows, err := trainingPlots(res.History, recs)
	if err != nil {
		t.Fatal(err)
	}
	acc := rows[1][0]
	if err := pngplot.FixAxes(acc); err != nil {
		t.Fatal(err)
	}
	if acc.Y.Min < 0 || acc.Y.Max > 1 || acc.X.Min != 1 || acc.X.Max != last {
		t.Errorf("accuracy axes: x %g to %g, y %g to %g; want steps 1 to %g and y within [0, 1]", acc.X.Min, acc.X.Max, acc.Y.Min, acc.Y.Max, last)
	}
	// One accuracy alone (one epoch's validation, no metrics lines) stays
	// within [0, 1] too: it drew an axis to 1.8 before.
	rows, err = trainingPlots([]EpochRecord{{Epoch: 1, Step: 6, TrainLoss: 1, ValLoss: 1, ValAccuracy: 0.8, Seconds: 1}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if acc := rows[1][0]; pngplot.FixAxes(acc) != nil || acc.Y.Min < 0 || acc.Y.Max > 1 || math.IsNaN(acc.Y.Max) {
		t.Errorf("one validation accuracy: y %g to %g", acc.Y.Min, acc.Y.Max)
	}
}
