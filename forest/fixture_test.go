package forest

import (
	"path/filepath"
	"testing"

	"github.com/gotrain/gotrain/data"
)

// TestModelFileFixtureLoads checks that a model file written by an earlier
// release (model format 1, committed under testdata: 5 trees of depth 4 on
// the embedded diabetes data, seed 7) still loads and predicts bit for bit
// what it predicted when it was written.
func TestModelFileFixtureLoads(t *testing.T) {
	f, err := LoadFile(filepath.Join("testdata", "diabetes-5trees.gtf"))
	if err != nil {
		t.Fatal(err)
	}
	d, err := data.Diabetes()
	if err != nil {
		t.Fatal(err)
	}
	got, err := f.Predict(d.X[:6*d.Cols], 6)
	if err != nil {
		t.Fatal(err)
	}
	want := []float64{188.7857669731443, 82.38139112462783, 200.7549027756134, 167.231721384718, 112.98551400411701, 89.79901017224687}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("row %d: predicted %v, the release that wrote the file predicted %v", i, got[i], want[i])
		}
	}
}
