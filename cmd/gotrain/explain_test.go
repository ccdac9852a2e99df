package main

import (
	"encoding/csv"
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestForestExplain runs forest explain on a digits classifier and checks
// its columns (FEATURE:CLASS and expected_value:CLASS per class) and that
// each class's contributions plus its expected value equal the
// probability forest predict --proba writes; and that a graph device is
// refused with the reason.
func TestForestExplain(t *testing.T) {
	dir := t.TempDir()
	model, in := filepath.Join(dir, "c.gtf"), filepath.Join(dir, "x.csv")
	if out, _, err := run(t, "forest", "train", "--dataset", "digits", "--trees", "4", "--save", model); err != nil {
		t.Fatalf("forest train: %v\n%s", err, out)
	}
	writeForestInput(t, in, "digits", 6)
	shapOut, _, err := run(t, "forest", "explain", "--model", model, "--data", in)
	if err != nil {
		t.Fatalf("forest explain: %v\n%s", err, shapOut)
	}
	proba, _, err := run(t, "forest", "predict", "--model", model, "--data", in, "--proba")
	if err != nil {
		t.Fatalf("forest predict --proba: %v", err)
	}
	read := func(s string) [][]string {
		recs, err := csv.NewReader(strings.NewReader(s)).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		return recs
	}
	shap, prob := read(shapOut), read(proba)
	const features, classes = 64, 10
	if len(shap) != 7 || len(shap[0]) != classes*(features+1) {
		t.Fatalf("%d lines of %d columns, want 7 of %d", len(shap), len(shap[0]), classes*(features+1))
	}
	if shap[0][0] != "pixel_0_0:0" || shap[0][features] != "expected_value:0" || shap[0][features+1] != "pixel_0_0:1" {
		t.Fatalf("header starts %v", shap[0][:features+2])
	}
	for i := 1; i < len(shap); i++ {
		for q := 0; q < classes; q++ {
			var sum float64
			for _, s := range shap[i][q*(features+1) : (q+1)*(features+1)] {
				v, err := strconv.ParseFloat(s, 64)
				if err != nil {
					t.Fatal(err)
				}
				sum += v
			}
			want, _ := strconv.ParseFloat(prob[i][q], 64)
			if math.Abs(sum-want) > 1e-9 {
				t.Errorf("row %d class %d: contributions + expected = %v, probability %v", i, q, sum, want)
			}
		}
	}
	if _, _, err := run(t, "--device", "go", "forest", "explain", "--model", model, "--data", in); err == nil ||
		!strings.Contains(err.Error(), "runs on the CPU only") {
		t.Errorf("forest explain --device go: %v", err)
	}
	if _, _, err := run(t, "forest", "explain", "--model", model); err == nil || !strings.Contains(err.Error(), "--data are required") {
		t.Errorf("forest explain without --data: %v", err)
	}
}
