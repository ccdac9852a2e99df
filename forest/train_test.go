package forest

import (
	"context"
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/gotrain/gotrain/data"
	"github.com/gotrain/gotrain/internal/stats"
)

func TestMetrics(t *testing.T) {
	nan := math.NaN()
	tests := []struct {
		name         string
		pred, y      []float64
		acc, mse, r2 float64
	}{
		{"perfect", []float64{1, 2, 3}, []float64{1, 2, 3}, 1, 0, 1},
		{"off by one", []float64{2, 3, 4}, []float64{1, 2, 3}, 0, 1, 1 - 3.0/2},
		{"mean predictor", []float64{2, 2, 2}, []float64{1, 2, 3}, 1.0 / 3, 2.0 / 3, 0},
		{"constant target", []float64{1, 2}, []float64{1, 1}, 0.5, 0.5, nan},
		{"empty", nil, nil, nan, nan, nan},
	}
	same := func(a, b float64) bool { return a == b || math.IsNaN(a) && math.IsNaN(b) || math.Abs(a-b) < 1e-12 }
	for _, tt := range tests {
		if got := Accuracy(tt.pred, tt.y); !same(got, tt.acc) {
			t.Errorf("%s: Accuracy = %v, want %v", tt.name, got, tt.acc)
		}
		if got := MeanSquaredError(tt.pred, tt.y); !same(got, tt.mse) {
			t.Errorf("%s: MeanSquaredError = %v, want %v", tt.name, got, tt.mse)
		}
		if got := R2(tt.pred, tt.y); !same(got, tt.r2) {
			t.Errorf("%s: R2 = %v, want %v", tt.name, got, tt.r2)
		}
	}
}

func TestFeatureName(t *testing.T) {
	tests := []struct {
		features []string
		j        int
		want     string
	}{
		{[]string{"age", "bmi"}, 1, "bmi"},
		{nil, 0, "f0"},
		{nil, 12, "f12"},
	}
	for _, tt := range tests {
		if got := (&Forest{Features: tt.features}).FeatureName(tt.j); got != tt.want {
			t.Errorf("FeatureName(%d) with %v = %q, want %q", tt.j, tt.features, got, tt.want)
		}
	}
}

// fakeLearner is forest.Fit with made-up graph statistics and times.
type fakeLearner struct {
	calls int
	times []float64
}

func (l *fakeLearner) Fit(d *data.Dataset, opt Options) (*Forest, FitStats, error) {
	f, err := Fit(d, opt)
	s := l.times[l.calls%len(l.times)]
	l.calls++
	return f, FitStats{Seconds: s, Graph: &GraphStats{CompileSeconds: 10 * s, TreesPerBatch: 4, PeakHistogramBytes: 100, PeakScatterBytes: 200}}, err
}

func TestTrain(t *testing.T) {
	split := func(t *testing.T, name string) *Split {
		s, err := LoadData(context.Background(), DataSpec{Dataset: name})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	diab, digits := split(t, "diabetes"), split(t, "digits")
	reg := Options{Trees: 6, MaxDepth: 6, Seed: 3, OOB: true}
	cls := Options{Task: Classification, Trees: 6, Seed: 3}
	tests := []struct {
		name        string
		train, test *data.Dataset
		opt         Options
		cfg         TrainConfig
		want        string // error
		check       func(t *testing.T, r *TrainResult)
	}{
		{name: "regression", train: diab.Train, test: diab.Test, opt: reg, check: func(t *testing.T, r *TrainResult) {
			f := r.Forest
			pred, _ := f.Predict(diab.Test.X, diab.Test.Rows)
			switch {
			case r.TestMSE == nil || *r.TestMSE != MeanSquaredError(pred, diab.Test.Y):
				t.Errorf("test MSE %v", r.TestMSE)
			case r.TestR2 == nil || *r.TestR2 != R2(pred, diab.Test.Y):
				t.Errorf("test R² %v", r.TestR2)
			case r.TestAccuracy != nil || r.OOBScore == nil || *r.OOBScore != f.OOBScore:
				t.Errorf("accuracy %v, OOB %v (forest: %v)", r.TestAccuracy, r.OOBScore, f.OOBScore)
			case r.TrainRows != 353 || r.TestRows != 89 || r.Features != 10 || r.Trees != 6 || r.Seed != 3 || r.Task != Regression:
				t.Errorf("result %+v", r)
			case r.PredictSeconds == nil || r.FitSeconds <= 0 || r.FitRuns != nil || r.PredictRuns != nil || r.GraphStats != nil:
				t.Errorf("times: fit %v runs %v, predict %v runs %v, graph %v", r.FitSeconds, r.FitRuns, r.PredictSeconds, r.PredictRuns, r.GraphStats)
			case r.Importances != nil || r.PermImport != nil || r.Options != f.Options || r.Threads != f.Options.Threads:
				t.Errorf("importances %v %v, options %+v", r.Importances, r.PermImport, r.Options)
			}
			nodes, depth := 0, 0
			for i := range f.Trees {
				nodes += f.Trees[i].NumNodes()
				depth = max(depth, f.Trees[i].Depth())
			}
			if r.Nodes != nodes || r.MaxDepth != depth || depth != 6 {
				t.Errorf("nodes %d depth %d, want %d and %d (= MaxDepth 6)", r.Nodes, r.MaxDepth, nodes, depth)
			}
			want, _ := Fit(diab.Train, reg)
			if !reflect.DeepEqual(f.Trees, want.Trees) {
				t.Error("Train's forest differs from Fit's")
			}
		}},
		{name: "classification", train: digits.Train, test: digits.Test, opt: cls, check: func(t *testing.T, r *TrainResult) {
			pred, _ := r.Forest.Predict(digits.Test.X, digits.Test.Rows)
			if r.TestAccuracy == nil || *r.TestAccuracy != Accuracy(pred, digits.Test.Y) || *r.TestAccuracy < 0.7 || r.TestMSE != nil || r.OOBScore != nil {
				t.Errorf("accuracy %v, MSE %v, OOB %v", r.TestAccuracy, r.TestMSE, r.OOBScore)
			}
		}},
		{name: "no test set", train: diab.Train, opt: reg, check: func(t *testing.T, r *TrainResult) {
			if r.TestRows != 0 || r.PredictSeconds != nil || r.TestMSE != nil || r.TestR2 != nil {
				t.Errorf("result %+v", r)
			}
		}},
		{name: "importances", train: diab.Train, test: diab.Test, opt: reg, cfg: TrainConfig{Importance: true, PermutationRepeats: 2}, check: func(t *testing.T, r *TrainResult) {
			imp := r.Forest.ImpurityImportance()
			mean, sd, _ := r.Forest.PermutationImportance(diab.Test.X, diab.Test.Rows, diab.Test.Y, 2, 3)
			if len(r.Importances) != 10 || r.Importances["bmi"] != imp[2] || r.PermImport["bmi"] != mean[2] || r.PermImportSD["s5"] != sd[8] {
				t.Errorf("importances %v, permutation %v ± %v", r.Importances, r.PermImport, r.PermImportSD)
			}
		}},
		{name: "repeats and a graph learner", train: diab.Train, test: diab.Test, opt: reg, cfg: TrainConfig{Repeats: 3, Learner: &fakeLearner{times: []float64{2, 3, 1}}}, check: func(t *testing.T, r *TrainResult) {
			if !reflect.DeepEqual(r.FitRuns, []float64{2, 3, 1}) || r.FitSeconds != 2 || len(r.PredictRuns) != 3 || *r.PredictSeconds != stats.Median(r.PredictRuns) {
				t.Errorf("fit %v %v, predict %v %v", r.FitSeconds, r.FitRuns, *r.PredictSeconds, r.PredictRuns)
			}
			if g := r.GraphStats; g == nil || g.CompileSeconds != 20 || g.TreesPerBatch != 4 || g.PeakHistogramBytes != 100 || g.PeakScatterBytes != 200 {
				t.Errorf("graph stats %+v, want the median compile time 20", g)
			}
		}},
		{name: "permutation without a test set", train: diab.Train, opt: reg, cfg: TrainConfig{PermutationRepeats: 1}, want: "permutation importance needs a test set"},
		{name: "negative repeats", train: diab.Train, opt: reg, cfg: TrainConfig{Repeats: -1}, want: "Repeats -1: want >= 0"},
		{name: "nil training set", opt: reg, want: "nil training set"},
		{name: "bad options", train: diab.Train, opt: Options{MaxDepth: -1}, want: "MaxDepth -1: want >= 0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := Train(tt.train, tt.test, tt.opt, tt.cfg)
			if tt.want != "" {
				if err == nil || !strings.Contains(err.Error(), tt.want) {
					t.Fatalf("err = %v, want %q", err, tt.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, r)
		})
	}
	// A test set without targets is a shape error, not a panic.
	if _, err := Train(diab.Train, &data.Dataset{X: diab.Test.X, Rows: diab.Test.Rows, Cols: 10}, reg, TrainConfig{}); !errors.Is(err, ErrShape) {
		t.Errorf("test set without targets: err = %v", err)
	}
}

// TestSplitTrainOptions checks that TrainOptions takes the split's task,
// validates the options as given and refuses permutation importances
// without a test set, naming the options.
func TestSplitTrainOptions(t *testing.T) {
	d := &data.Dataset{Rows: 1}
	withTest := &Split{Train: d, Test: d, Task: Classification}
	noTest := &Split{Train: d, Task: Regression}
	def := DefaultOptions()
	tests := []struct {
		name  string
		split *Split
		opt   Options
		cfg   TrainConfig
		want  string // the error's start, or "" for none
		task  Task
	}{
		{name: "task from the split", split: withTest, opt: def, task: Classification},
		{name: "task overrides the options'", split: noTest, opt: Options{Task: Classification, Trees: 5, MinSamplesSplit: 2, MinSamplesLeaf: 1, Bins: 16}, task: Regression},
		{name: "permutation with a test set", split: withTest, opt: def, cfg: TrainConfig{PermutationRepeats: 3}, task: Classification},
		{name: "permutation without a test set", split: noTest, opt: def, cfg: TrainConfig{PermutationRepeats: 1},
			want: "forest: PermutationRepeats needs a test set (DataSpec.Test, or DataSpec.Holdout)"},
		{name: "explicit zero trees", split: noTest, opt: Options{MinSamplesSplit: 2, MinSamplesLeaf: 1, Bins: 256}, want: "forest: Trees 0: want 1 to"},
		{name: "criterion of the other task", split: noTest, opt: Options{Criterion: Gini, Trees: 1, MinSamplesSplit: 2, MinSamplesLeaf: 1, Bins: 256}, want: `forest: criterion "gini" is not valid for regression`},
		{name: "no split", opt: def, want: "forest: train options: no training set"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opt, err := tt.split.TrainOptions(tt.opt, tt.cfg)
			if tt.want != "" {
				if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
					t.Fatalf("err = %v, want %q...", err, tt.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			want := tt.opt
			want.Task = tt.task
			if opt != want {
				t.Errorf("options %+v, want %+v", opt, want)
			}
		})
	}
}

// TestTrainLazyTestSet: a test set read a column at a time (X nil, a
// Source, as data.OpenMNIST and data.OpenFile give) is scored, with its
// permutation importances, as the same rows in memory are, and the
// caller's data set is left as it was.
func TestTrainLazyTestSet(t *testing.T) {
	for _, c := range []struct {
		name string
		opt  Options
	}{
		{"diabetes", Options{Trees: 5, MaxDepth: 6, Seed: 4}},
		{"digits", Options{Task: Classification, Trees: 5, Seed: 4}},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, err := LoadData(context.Background(), DataSpec{Dataset: c.name})
			if err != nil {
				t.Fatal(err)
			}
			cfg := TrainConfig{PermutationRepeats: 2}
			want, err := Train(s.Train, s.Test, c.opt, cfg)
			if err != nil {
				t.Fatal(err)
			}
			l, _ := lazy(s.Test)
			got, err := Train(s.Train, l, c.opt, cfg)
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case l.X != nil || l.Source == nil:
				t.Error("Train materialized the caller's test set")
			case got.TestRows != want.TestRows || !reflect.DeepEqual(got.TestAccuracy, want.TestAccuracy) || !reflect.DeepEqual(got.TestMSE, want.TestMSE):
				t.Errorf("lazy test set: rows %d, accuracy %v, MSE %v; in memory %d, %v, %v",
					got.TestRows, got.TestAccuracy, got.TestMSE, want.TestRows, want.TestAccuracy, want.TestMSE)
			case !reflect.DeepEqual(got.PermImport, want.PermImport):
				t.Errorf("permutation importances %v, in memory %v", got.PermImport, want.PermImport)
			}
		})
	}
}
