package forestgraph

import (
	"encoding/json"
	"errors"
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
	b := openSimpleGo(t)
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
	b := openSimpleGo(t)
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
