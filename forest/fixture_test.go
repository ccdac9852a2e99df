package forest

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
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

// TestCategoricalFixtureLoads checks that a model file of format 2 with
// categorical features (committed under testdata when they were added: 3
// trees of depth 4 on catData(600, 31, 3, true), seed 7) still loads,
// predicts what it predicted when it was written, and saves to the same
// bytes.
func TestCategoricalFixtureLoads(t *testing.T) {
	path := filepath.Join("testdata", "categorical-v2.gtf")
	f, err := LoadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	d := catData(600, 31, 3, true)
	x, err := f.FeatureMatrix(d)
	if err != nil {
		t.Fatal(err)
	}
	got, err := f.PredictValues(x[:8*2], 8)
	if err != nil {
		t.Fatal(err)
	}
	want := []float64{0, 1, 0, 0.8641552511415524, 0, 0.1358447488584475, 0.19748858447488585, 0, 0.8025114155251141, 0.9393939393939394, 0, 0.06060606060606061, 0.19748858447488585, 0, 0.8025114155251141, 0.9393939393939394, 0, 0.06060606060606061, 0, 1, 0, 0.9393939393939394, 0, 0.06060606060606061}
	if !slices.Equal(got, want) {
		t.Errorf("predicted %v, the release that wrote the file predicted %v", got, want)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := f.Save(&buf); err != nil || !bytes.Equal(buf.Bytes(), raw) {
		t.Errorf("saving the loaded model gives other bytes (err %v)", err)
	}
}
