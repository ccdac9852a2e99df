package forest

import (
	"strings"
	"testing"
)

// TestTrainResultWriteText checks the text of `gotrain forest train`: a
// native regression with scores, importances and a model file, and a graph
// classification without a test set.
func TestTrainResultWriteText(t *testing.T) {
	f := &Forest{NumFeatures: 2, Features: []string{"age", "bmi"}, OOBRows: 7}
	v := func(x float64) *float64 { return &x }
	tests := []struct {
		r    TrainResult
		want string
	}{{
		TrainResult{Device: "cpu", Engine: "native", Data: "diabetes", Forest: f, Task: Regression, TrainRows: 8, TestRows: 2,
			Features: 2, Trees: 3, Threads: 4, FitSeconds: 0.0125, PredictSeconds: v(0.00025), TestMSE: v(12.345), TestR2: v(0.5),
			OOBScore: v(-0.25), Nodes: 21, MaxDepth: 5, Importances: map[string]float64{"age": 0.25, "bmi": 0.75},
			PermImport: map[string]float64{"age": -0.5, "bmi": 1}, PermImportSD: map[string]float64{"age": 0.125, "bmi": 0}, Model: "m.gtf"},
		`data                        diabetes (8 train rows, 2 test rows, 2 features)
device                      cpu (native)
forest                      regression, 3 trees, 21 nodes, deepest leaf 5
fit                         0.013 s (4 threads)
predict                     0.0003 s for 2 rows
test MSE                    12.35
test R²                     0.5000
OOB R²                      -0.2500 (7 rows)
importance age              0.2500
importance bmi              0.7500
permutation importance age  -0.5000 ± 0.1250
permutation importance bmi  1.0000 ± 0.0000
model                       m.gtf
`}, {
		TrainResult{Device: "go", Engine: "graph", Data: "digits", Forest: f, Task: Classification, TrainRows: 8, Features: 2,
			Trees: 1, FitSeconds: 1.5, TestAccuracy: v(0.625), OOBScore: v(0.875), Nodes: 3, MaxDepth: 1,
			GraphStats: &GraphStats{CompileSeconds: 0.25, TreesPerBatch: 1, PeakHistogramBytes: 4096}},
		`data           digits (8 train rows, 0 test rows, 2 features)
device         go (graph)
forest         classification, 1 trees, 3 nodes, deepest leaf 1
fit            1.500 s + 0.250 s compiling graphs (1 trees per batch, peak histogram 4096 bytes)
test accuracy  0.6250
OOB accuracy   0.8750 (7 rows)
`}}
	for _, tt := range tests {
		var b strings.Builder
		if err := tt.r.WriteText(&b); err != nil {
			t.Fatal(err)
		}
		if got := b.String(); got != tt.want {
			t.Errorf("got:\n%s\nwant:\n%s", got, tt.want)
		}
	}
}
