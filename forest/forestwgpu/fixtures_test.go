//go:build !(js && wasm)

package forestwgpu

import (
	"encoding/binary"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/gotrain/gotrain/data"
	"github.com/gotrain/gotrain/forest"
)

// webCase is a fit the Node test (web/test) repeats on WebGPU: the data
// set, and the options in the JavaScript API's names (cmd/gotrain-wasm),
// from which forest.Options are built here the same way.
type webCase struct {
	Name    string         `json:"name"`
	Dataset string         `json:"dataset"`
	Options map[string]any `json:"options"`
	opt     forest.Options
}

// webCases are the Node test's fits: diabetes (regression) and digits
// (classification) with their default options, and variants that take
// the other paths (entropy, the random splitter without bootstrap,
// missing-value-free few-feature search).
func webCases() []webCase {
	reg, cls := forest.Regression, forest.Classification
	mk := func(name, ds string, task forest.Task, js map[string]any, set func(*forest.Options)) webCase {
		o := forest.DefaultOptions()
		o.Task = task
		set(&o)
		// The model file records the thread count; the wasm module has one.
		o.Threads, js["threads"] = 1, 1
		return webCase{Name: name, Dataset: ds, Options: js, opt: o}
	}
	return []webCase{
		mk("diabetes-default", "diabetes", reg, map[string]any{"trees": 50, "seed": 1, "oob": true},
			func(o *forest.Options) { o.Trees, o.Seed, o.OOB = 50, 1, true }),
		mk("digits-gini", "digits", cls, map[string]any{"trees": 20, "seed": 1, "oob": true},
			func(o *forest.Options) { o.Trees, o.Seed, o.OOB = 20, 1, true }),
		mk("digits-entropy-depth8", "digits", cls, map[string]any{"trees": 10, "seed": 2, "criterion": "entropy", "maxDepth": 8},
			func(o *forest.Options) { o.Trees, o.Seed, o.Criterion, o.MaxDepth = 10, 2, forest.Entropy, 8 }),
		mk("diabetes-extratrees-sqrt", "diabetes", reg, map[string]any{"trees": 20, "seed": 3, "splitter": "random", "bootstrap": false, "maxFeatures": "sqrt", "minSamplesLeaf": 2},
			func(o *forest.Options) {
				o.Trees, o.Seed, o.Splitter, o.NoBootstrap, o.MaxFeatures, o.MinSamplesLeaf = 20, 3, forest.Random, true, "sqrt", 2
			}),
	}
}

// TestWriteWebFixtures writes the native learner's results for the Node
// test into $GOTRAIN_WEB_FIXTURES (web/scripts/build.mjs sets it): per
// case the model file (NAME.gtf) and the predictions of the data set's
// rows (NAME.values: PredictValues as little-endian float64), and
// manifest.json listing the cases. Without the variable it has nothing to
// do.
func TestWriteWebFixtures(t *testing.T) {
	dir := os.Getenv("GOTRAIN_WEB_FIXTURES")
	if dir == "" {
		t.Skip("GOTRAIN_WEB_FIXTURES is not set: no fixtures to write (web/scripts/build.mjs writes them)")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	cases := webCases()
	for _, c := range cases {
		d, err := data.Embedded(c.Dataset)
		if err != nil {
			t.Fatal(err)
		}
		f, err := forest.Fit(d, c.opt)
		if err != nil {
			t.Fatal(err)
		}
		if err := f.SaveFile(filepath.Join(dir, c.Name+".gtf")); err != nil {
			t.Fatal(err)
		}
		v, err := f.PredictValues(d.X, d.Rows)
		if err != nil {
			t.Fatal(err)
		}
		b := make([]byte, 8*len(v))
		for i, x := range v {
			binary.LittleEndian.PutUint64(b[8*i:], math.Float64bits(x))
		}
		if err := os.WriteFile(filepath.Join(dir, c.Name+".values"), b, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: %d trees, %d values", c.Name, len(f.Trees), len(v))
	}
	m, err := json.MarshalIndent(map[string]any{"cases": cases}, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "manifest.json"), m, 0o644); err != nil {
		t.Fatal(err)
	}
}
