package forestgraph

import (
	"context"
	"reflect"
	"testing"

	"github.com/gotrain/gotrain/forest"
)

// TestLearner trains through forest.Train with the graph learner: the same
// trees and scores as the native learner, and the graph statistics in the
// result.
func TestLearner(t *testing.T) {
	b := openTestBackend(t)
	split, err := forest.LoadData(context.Background(), forest.DataSpec{Dataset: "diabetes"})
	if err != nil {
		t.Fatal(err)
	}
	opt := forest.Options{Trees: 3, MaxDepth: 4, Seed: 2, OOB: true}
	native, err := forest.Train(split.Train, split.Test, opt, forest.TrainConfig{})
	if err != nil {
		t.Fatal(err)
	}
	graph, err := forest.Train(split.Train, split.Test, opt, forest.TrainConfig{Learner: Learner{Backend: b}, Repeats: 2})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(graph.Forest.Trees, native.Forest.Trees) || *graph.TestMSE != *native.TestMSE || *graph.OOBScore != *native.OOBScore {
		t.Error("the graph learner's forest or scores differ from the native ones")
	}
	g := graph.GraphStats
	if native.GraphStats != nil || g == nil || g.CompileSeconds <= 0 || g.TreesPerBatch < 1 || g.PeakHistogramBytes <= 0 || g.PeakScatterBytes <= 0 || len(graph.FitRuns) != 2 {
		t.Errorf("graph stats %+v (native %+v), fit runs %v", g, native.GraphStats, graph.FitRuns)
	}
	if _, _, err := (Learner{}).Fit(split.Train, opt); err == nil {
		t.Error("a Learner without a backend fitted")
	}
}

// TestPredictorInfo checks the description of a compiled predictor.
func TestPredictorInfo(t *testing.T) {
	b := openTestBackend(t)
	ds := synthetic(200, 4, true, 1)
	f, err := forest.Fit(ds, forest.Options{Task: forest.Classification, Trees: 3, MaxDepth: 3, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	p, err := NewPredictorWithOptions(b, f, 16, Options{Strategy: Gather})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	before := p.Info().CompileSeconds
	if err := p.Compile(); err != nil {
		t.Fatal(err)
	}
	info := p.Info()
	want := PredictorInfo{Strategy: Gather, Depth: p.Depth(), BatchRows: 16, TableBytes: p.TableBytes(), BatchBytes: p.BatchBytes(), CompileSeconds: info.CompileSeconds}
	if info != want || info.Depth != 3 || info.TableBytes <= 0 || before <= 0 || info.CompileSeconds <= before {
		t.Errorf("info %+v (compile seconds %v before Compile), want %+v", info, before, want)
	}
}
