package forestgraph

import (
	"strings"
	"testing"

	"github.com/gotrain/gotrain/data"
	"github.com/gotrain/gotrain/forest"
)

// TestCategoricalRefused: the graph learner and the graph predictor refuse
// categorical features with the reason, instead of treating categories as
// numbers.
func TestCategoricalRefused(t *testing.T) {
	b := openTestBackend(t)
	n := 60
	d := &data.Dataset{Rows: n, Cols: 2, X: make([]float64, 2*n), Y: make([]float64, n),
		Categories: [][]string{{"a", "b", "c"}, nil}}
	for i := range n {
		d.X[2*i], d.X[2*i+1] = float64(i%3), float64(i)
		d.Y[i] = float64(i % 3 % 2)
	}
	_, _, err := Fit(b, d, forest.Options{Trees: 2}, GrowOptions{})
	if err == nil || !strings.Contains(err.Error(), "categorical features are refused on graph engines") {
		t.Errorf("Fit = %v, want the refusal", err)
	}
	f, err := forest.Fit(d, forest.Options{Trees: 2})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := NewPredictor(b, f, 16); err == nil || !strings.Contains(err.Error(), "categorical features") {
		t.Errorf("NewPredictor = %v, want the refusal", err)
	}
}
