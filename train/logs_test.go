package train

import (
	"bytes"
	"encoding/csv"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/ml/train/losses"

	"github.com/gotrain/gotrain/internal/pngplot"
)

// within1 is a step metric in [0, 1]: the share of predictions within
// 0.5 of their labels.
func within1(labels, predictions []*graph.Node) *graph.Node {
	d := graph.Abs(graph.Sub(predictions[0], labels[0]))
	return graph.ReduceAllMean(graph.ConvertDType(graph.LessThan(d, graph.ScalarOne(d.Graph(), d.DType())), d.DType()))
}

// TestPlotsPerLoggedStep checks that a one-epoch run shorter than
// LogEvery logs its first and last steps, so that its plots draw lines
// through a point per logged step, and that a step metric (an accuracy)
// is logged at those steps and plotted on an axis within [0, 1].
func TestPlotsPerLoggedStep(t *testing.T) {
	dir := t.TempDir()
	h := newHarness(t, testConfig(func(c *Config) {
		c.Steps, c.Epochs, c.BatchSize, c.LogEvery = 0, 1, 16, 10 // 64 examples: 4 steps
		c.MetricsLog, c.PlotsDir, c.Progress = filepath.Join(dir, "m.jsonl"), filepath.Join(dir, "plots"), ProgressOff
	}), synthData(t, 64, false))
	h.SetStepMetric("accuracy", within1)
	res, err := h.Run()
	if err != nil {
		t.Fatal(err)
	}
	recs, err := ReadMetricsLog(filepath.Join(dir, "m.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var logged []float64
	for _, r := range recs {
		logged = append(logged, r["step"].(float64))
		if a, ok := r["accuracy"].(float64); !ok || a < 0 || a > 1 {
			t.Errorf("record %v: accuracy %v, want a share", r, r["accuracy"])
		}
	}
	if !slices.Equal(logged, []float64{1, 4}) {
		t.Fatalf("logged steps %v, want the first and the last, [1 4]", logged)
	}
	for _, key := range []string{"loss", "accuracy", "lr"} {
		var xs []float64
		for _, p := range metricSeries(recs, key) {
			xs = append(xs, p.X)
		}
		if !slices.Equal(xs, logged) {
			t.Errorf("%s plotted at steps %v, want the logged steps %v", key, xs, logged)
		}
	}
	if len(res.Plots) != 4 {
		t.Errorf("plots %v, want loss, accuracy, throughput and learning rate", res.Plots)
	}
	for _, f := range res.Plots {
		checkPNG(t, f)
	}
	// An accuracy axis stays within [0, 1], also for one point (it ran
	// from -0.2 to 1.8 before) and equal values.
	for _, accs := range [][]float64{{0.8}, {1, 1}, {0, 0.5}, {0.97, 0.99}} {
		var rs []map[string]any
		for i, a := range accs {
			rs = append(rs, map[string]any{"step": float64(i + 1), "accuracy": a})
		}
		p, err := metricPlot(rs, DefaultPlots[1])
		if err != nil || p == nil {
			t.Fatalf("accuracy plot: %v", err)
		}
		if err := pngplot.FixAxes(p); err != nil {
			t.Fatal(err)
		}
		if p.Y.Min < 0 || p.Y.Max > 1 || p.Y.Min >= p.Y.Max || p.Y.Min > slices.Min(accs) || p.Y.Max < slices.Max(accs) {
			t.Errorf("accuracies %v: axis %g to %g, want a range within [0, 1] holding them", accs, p.Y.Min, p.Y.Max)
		}
	}
}

// readCSV reads a CSV log: its header and rows.
func readCSV(t *testing.T, path string) ([]string, [][]string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(bytes.NewReader(b)).ReadAll()
	if err != nil {
		t.Fatalf("%s: %v\n%s", path, err, b)
	}
	if len(rows) == 0 {
		t.Fatalf("%s is empty", path)
	}
	return rows[0], rows[1:]
}

// sameRows checks that the CSV log holds the JSON log's records, row for
// row, each field's value equal.
func sameRows(t *testing.T, recs []map[string]any, header []string, rows [][]string) {
	t.Helper()
	if len(rows) != len(recs) {
		t.Fatalf("%d CSV rows, %d JSON lines", len(rows), len(recs))
	}
	for i, rec := range recs {
		for k, v := range rec {
			col := slices.Index(header, k)
			if col < 0 {
				t.Fatalf("CSV header %v lacks %q", header, k)
			}
			cell := rows[i][col]
			switch x := v.(type) {
			case float64:
				if got, err := strconv.ParseFloat(cell, 64); err != nil || got != x {
					t.Errorf("row %d %s: CSV %q, JSON %v", i, k, cell, x)
				}
			case string:
				if cell != x {
					t.Errorf("row %d %s: CSV %q, JSON %q", i, k, cell, x)
				}
			}
		}
		for col, k := range header {
			if _, ok := rec[k]; !ok && rows[i][col] != "" {
				t.Errorf("row %d: %s is %q in the CSV, absent from the JSON line", i, k, rows[i][col])
			}
		}
	}
}

// TestCSVLogBesideJSONLog checks the CSV twin of the metrics log: the same
// rows as the JSON lines (a column added when the evaluation's first line
// comes), and a run resumed from an earlier checkpoint than the logs
// reached, after a crash that cut a line short, neither repeats nor loses
// a row: the logs of the resumed run equal those of an uninterrupted one.
func TestCSVLogBesideJSONLog(t *testing.T) {
	if got := CSVLogPath("runs/x/metrics.jsonl"); got != "runs/x/metrics.csv" {
		t.Errorf("CSVLogPath: %s", got)
	}
	if got := CSVLogPath("m.log"); got != "m.log.csv" {
		t.Errorf("CSVLogPath: %s", got)
	}
	const total = 6
	run := func(dir string, steps int, resume bool) Result {
		t.Helper()
		h, err := New(testBackend(t), testConfig(func(c *Config) {
			c.BatchSize, c.Steps, c.LogEvery, c.EvalEvery, c.Progress = 16, steps, 1, 2, ProgressOff
			c.NoCheckpoint, c.CheckpointDir, c.CheckpointEvery, c.Resume = false, filepath.Join(dir, "ckpt"), 3, resume
			c.MetricsLog = filepath.Join(dir, "metrics.jsonl")
		}), noisyMLP, losses.MeanSquaredError, synthData(t, 64, false))
		if err != nil {
			t.Fatal(err)
		}
		h.SetEvaluator(func(h *Harness) (map[string]float64, error) {
			return map[string]float64{"val_loss": 1 / float64(h.Step())}, nil
		})
		res, err := h.Run()
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	full := t.TempDir()
	res := run(full, total, false)
	if res.CSVLog != filepath.Join(full, "metrics.csv") {
		t.Errorf("Result.CSVLog %q", res.CSVLog)
	}
	recs, err := ReadMetricsLog(filepath.Join(full, "metrics.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	header, rows := readCSV(t, res.CSVLog)
	if !slices.Equal(header[:4], []string{"step", "epoch", "loss", "lr"}) || !slices.Contains(header, "val_loss") {
		t.Errorf("header %v", header)
	}
	sameRows(t, recs, header, rows)

	// A run that logged step 5 and crashed before checkpointing it: its
	// newest checkpoint is step 3, and a last line is cut short.
	dir := t.TempDir()
	run(dir, 5, false)
	ckpts, err := filepath.Glob(filepath.Join(dir, "ckpt", "run-*", "ckpt-000000000005.gtc"))
	if err != nil || len(ckpts) != 1 {
		t.Fatalf("checkpoint of step 5: %v %v", ckpts, err)
	}
	if err := os.Remove(ckpts[0]); err != nil {
		t.Fatal(err)
	}
	for name, partial := range map[string]string{"metrics.jsonl": `{"step":6,"loss":0.`, "metrics.csv": "6,1,0."} {
		f, err := os.OpenFile(filepath.Join(dir, name), os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			t.Fatal(err)
		}
		f.WriteString(partial)
		f.Close()
	}
	if res := run(dir, total, true); res.Resumed != 3 {
		t.Fatalf("resumed from step %d, want 3", res.Resumed)
	}
	got, err := ReadMetricsLog(filepath.Join(dir, "metrics.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(recs) {
		t.Fatalf("resumed log has %d lines, an uninterrupted one %d:\n%v\n%v", len(got), len(recs), got, recs)
	}
	for i := range recs {
		for _, k := range []string{"step", "epoch", "loss", "lr", "grad_norm", "val_loss"} {
			if a, b := recs[i][k], got[i][k]; a != b && !(a == nil && b == nil) {
				t.Errorf("line %d %s: resumed %v, uninterrupted %v", i, k, b, a)
			}
		}
	}
	header, rows = readCSV(t, filepath.Join(dir, "metrics.csv"))
	sameRows(t, got, header, rows)
}

// TestTrimLog checks the trimming of a resumed run's logs on its own:
// lines after the step kept, a cut line, earlier runs' lines kept.
func TestTrimLog(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.jsonl")
	in := "{\"step\":9}\n{\"step\":1}\n{\"step\":2}\n{\"event\":\"x\"}\n{\"step\":3}\n{\"step\":4}\n{\"step\":5,\"lo"
	if err := os.WriteFile(path, []byte(in), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := trimMetricsLog(path, 3); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	if want := "{\"step\":9}\n{\"step\":1}\n{\"step\":2}\n{\"event\":\"x\"}\n{\"step\":3}\n"; string(b) != want {
		t.Errorf("trimmed to %q, want %q", b, want)
	}
	if err := trimMetricsLog(path, 1); err != nil {
		t.Fatal(err)
	}
	b, _ = os.ReadFile(path)
	if want := "{\"step\":9}\n{\"step\":1}\n{\"step\":2}\n{\"event\":\"x\"}\n"; string(b) != want {
		t.Errorf("trimmed to %q, want %q (an unstepped line ends the trim)", b, want)
	}
	if v, err := csvCell(math.Inf(1)); err != nil || v != "+Inf" {
		t.Errorf("csvCell(+Inf) = %q, %v", v, err)
	}
}
