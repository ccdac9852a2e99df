package forestgraph

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gomlx/gomlx/backends"

	"github.com/gotrain/gotrain/device"
	"github.com/gotrain/gotrain/forest"
)

// *device.Engine is what commands hand to this package.
var _ Engine = (*device.Engine)(nil)

// fakeEngine is an Engine whose backend is b, or whose Backend fails with err.
type fakeEngine struct {
	name   string
	native bool
	num    int
	b      backends.Backend
	err    error
}

func (e fakeEngine) Name() string                       { return e.name }
func (e fakeEngine) Native() bool                       { return e.native }
func (e fakeEngine) DeviceNum() int                     { return e.num }
func (e fakeEngine) Backend() (backends.Backend, error) { return e.b, e.err }

var errNoBackend = errors.New("device gpu: no backend here")

// TestLearnerOn checks the learner chosen for each kind of engine.
func TestLearnerOn(t *testing.T) {
	b := openTestBackend(t)
	tests := []struct {
		name string
		e    Engine
		want forest.Learner // nil: an error
		kind string
	}{
		{"native", fakeEngine{name: "cpu", native: true, err: errNoBackend}, forest.Native, NativeEngine},
		{"graph", fakeEngine{name: "go", b: b, num: 0}, Learner{Backend: b}, GraphEngine},
		{"graph on device 2", fakeEngine{name: "gpu:2", b: b, num: 2}, Learner{Backend: b, Options: GrowOptions{DeviceNum: 2}}, GraphEngine},
		{"backend fails", fakeEngine{name: "gpu", err: errNoBackend}, nil, GraphEngine},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if k := EngineKind(tt.e); k != tt.kind {
				t.Errorf("EngineKind = %q, want %q", k, tt.kind)
			}
			l, err := LearnerOn(tt.e)
			if tt.want == nil {
				if !errors.Is(err, errNoBackend) || l != nil {
					t.Fatalf("LearnerOn = %v, %v; want the engine's error", l, err)
				}
				return
			}
			if err != nil || l != tt.want {
				t.Fatalf("LearnerOn = %#v, %v; want %#v", l, err, tt.want)
			}
		})
	}
	if _, err := LearnerOn(nil); err == nil {
		t.Error("LearnerOn(nil) gave no error")
	}
}

// TestPredictOn predicts on a native and a graph engine: the native
// predictions bit for bit, the predictor's description on graphs only, the
// batch bounded by the data, and the errors.
func TestPredictOn(t *testing.T) {
	b := openTestBackend(t)
	d := synthetic(50, 4, true, 3)
	cls, err := forest.Fit(d, forest.Options{Task: forest.Classification, Trees: 4, MaxDepth: 4, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	reg, err := forest.Fit(synthetic(50, 4, false, 3), forest.Options{Trees: 3, MaxDepth: 3, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	native := fakeEngine{name: "cpu", native: true, err: errNoBackend}
	graph := fakeEngine{name: "go", b: b}
	tests := []struct {
		name      string
		e         Engine
		f         *forest.Forest
		opt       PredictOptions
		engine    string
		batchRows int    // PredictorInfo.BatchRows; 0: no PredictorInfo
		want      string // the error, or ""
	}{
		{name: "native", e: native, f: cls, engine: NativeEngine},
		{name: "native proba", e: native, f: cls, opt: PredictOptions{Proba: true}, engine: NativeEngine},
		{name: "graph, default batch bounded by the rows", e: graph, f: cls, engine: GraphEngine, batchRows: 50},
		{name: "graph, small batches", e: graph, f: cls, opt: PredictOptions{BatchRows: 16}, engine: GraphEngine, batchRows: 16},
		{name: "graph proba", e: graph, f: cls, opt: PredictOptions{Proba: true, BatchRows: 7}, engine: GraphEngine, batchRows: 7},
		{name: "graph regression", e: graph, f: reg, opt: PredictOptions{BatchRows: 64}, engine: GraphEngine, batchRows: 50},
		{name: "proba of a regression", e: native, f: reg, opt: PredictOptions{Proba: true}, want: "need a classification model"},
		{name: "negative batch", e: graph, f: cls, opt: PredictOptions{BatchRows: -1}, want: "forestgraph: predict: BatchRows -1: want >= 1"},
		{name: "backend fails", e: fakeEngine{name: "gpu", err: errNoBackend}, f: cls, want: errNoBackend.Error()},
		{name: "nil forest", e: native, want: "forestgraph: predict: nil"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rep, err := PredictOn(tt.e, tt.f, d, tt.opt)
			if tt.want != "" {
				if err == nil || !strings.Contains(err.Error(), tt.want) {
					t.Fatalf("err = %v, want one containing %q", err, tt.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			want, err := tt.f.PredictData(d, forest.PredictOptions{Proba: tt.opt.Proba})
			if err != nil {
				t.Fatal(err)
			}
			if rep.Device != tt.e.Name() || rep.Engine != tt.engine || rep.Model != "" || rep.Data != "" || rep.Out != "" {
				t.Errorf("report %+v, want device %s, engine %s", rep, tt.e.Name(), tt.engine)
			}
			if rep.Rows != 50 || rep.Proba != tt.opt.Proba || !slices.Equal(rep.Values, want.Values) {
				t.Errorf("predictions: %d rows, proba %v; values equal to PredictData's: %v", rep.Rows, rep.Proba, slices.Equal(rep.Values, want.Values))
			}
			switch info := rep.PredictorInfo; {
			case tt.batchRows == 0 && info != nil:
				t.Errorf("predictor info %+v on a native engine", info)
			case tt.batchRows != 0 && (info == nil || info.BatchRows != tt.batchRows || info.CompileSeconds <= 0):
				t.Errorf("predictor info %+v, want %d rows per batch and a compile time", info, tt.batchRows)
			}
		})
	}
}

// TestPredictReportJSON pins the keys of `gotrain forest predict --json`.
func TestPredictReportJSON(t *testing.T) {
	tests := []struct {
		name string
		rep  PredictReport
		want []string
	}{
		{"native", PredictReport{Predictions: &forest.Predictions{}},
			[]string{"data", "device", "engine", "model", "out", "predict_seconds", "rows", "trees"}},
		{"graph", PredictReport{Predictions: &forest.Predictions{}, PredictorInfo: &PredictorInfo{Strategy: Gather, Depth: 1, BatchRows: 1, TableBytes: 1, BatchBytes: 1}},
			[]string{"batch_bytes", "batch_rows", "compile_seconds", "data", "depth", "device", "engine", "model", "out", "predict_seconds", "rows", "strategy", "table_bytes", "trees"}},
	}
	for _, tt := range tests {
		b, err := json.Marshal(tt.rep)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		var keys []string
		for k := range m {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		if !slices.Equal(keys, tt.want) {
			t.Errorf("%s: keys %v, want %v", tt.name, keys, tt.want)
		}
	}
}

// TestTrainOnAndPredictFile trains on the embedded diabetes set and
// predicts a CSV file on a native and a graph engine: the same forest and
// predictions on both, the report naming the device, the engine and the
// files, and the errors of bad input.
func TestTrainOnAndPredictFile(t *testing.T) {
	dir := t.TempDir()
	csv := filepath.Join(dir, "rows.csv")
	if err := os.WriteFile(csv, []byte("age,sex,bmi,bp,s1,s2,s3,s4,s5,s6\n0.03,0.05,0.06,0.02,-0.04,-0.03,-0.04,-0.002,0.02,-0.02\n-0.001,-0.04,-0.05,-0.03,-0.008,-0.02,0.07,-0.04,-0.07,-0.09\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	spec := forest.DataSpec{Dataset: "diabetes"}
	opt := forest.Options{Trees: 3, MaxDepth: 3, Seed: 1, Bins: 64, MinSamplesLeaf: 1, MinSamplesSplit: 2}
	var got [][]float64
	for _, e := range []Engine{fakeEngine{name: "cpu", native: true, err: errNoBackend}, fakeEngine{name: "go", b: openTestBackend(t)}} {
		var logged []any
		res, err := TrainOn(context.Background(), e, spec, opt, forest.TrainConfig{}, func(msg string, args ...any) { logged = append(logged, msg) })
		if err != nil {
			t.Fatal(err)
		}
		if (res.GraphStats != nil) != !e.Native() {
			t.Errorf("%s: graph stats %+v: the forest was not grown by the engine's learner", e.Name(), res.GraphStats)
		}
		if res.Device != e.Name() || res.Engine != EngineKind(e) || res.Data != "diabetes" || res.Task != forest.Regression || len(logged) != 1 {
			t.Errorf("%s: result on %q (%s), data %q, task %s, %d log lines", e.Name(), res.Device, res.Engine, res.Data, res.Task, len(logged))
		}
		model := filepath.Join(dir, e.Name()+".gtf")
		if err := res.Forest.SaveFile(model); err != nil {
			t.Fatal(err)
		}
		rep, err := PredictFile(e, model, csv, 0, PredictOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if rep.Model != model || rep.Data != csv || rep.Device != e.Name() || rep.Rows != 2 {
			t.Errorf("%s: report %+v", e.Name(), rep)
		}
		got = append(got, rep.Values)
		if _, err := PredictFile(e, model, csv, 0, PredictOptions{Proba: true}); err == nil || !strings.Contains(err.Error(), "Proba needs a classification model") {
			t.Errorf("%s: proba of a regression forest: %v", e.Name(), err)
		}
		if _, err := PredictFile(e, model, csv, 10, PredictOptions{}); err == nil || !strings.Contains(err.Error(), csv) {
			t.Errorf("%s: a data file over its cap: %v", e.Name(), err)
		}
	}
	if !slices.Equal(got[0], got[1]) {
		t.Errorf("native predictions %v, graph %v: want the same", got[0], got[1])
	}
	if _, err := TrainOn(context.Background(), fakeEngine{name: "gpu", err: errNoBackend}, spec, opt, forest.TrainConfig{}, nil); !errors.Is(err, errNoBackend) {
		t.Errorf("an engine that cannot open: %v", err)
	}
	if _, err := TrainOn(context.Background(), fakeEngine{name: "cpu", native: true}, forest.DataSpec{}, opt, forest.TrainConfig{}, nil); err == nil {
		t.Error("no data: no error")
	}
}
