package main

import (
	"encoding/csv"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestForestQuantiles trains with --keep-leaf-samples and predicts
// --quantiles: one column per quantile, ordered values, the median near
// the prediction; and the refusals: a model without leaf samples, bad
// quantiles, a graph device, --proba together with --quantiles.
func TestForestQuantiles(t *testing.T) {
	dir := t.TempDir()
	model, plain, in := filepath.Join(dir, "q.gtf"), filepath.Join(dir, "p.gtf"), filepath.Join(dir, "x.csv")
	if out, _, err := run(t, "forest", "train", "--dataset", "diabetes", "--trees", "20", "--keep-leaf-samples", "--save", model); err != nil {
		t.Fatalf("forest train --keep-leaf-samples: %v\n%s", err, out)
	}
	if out, _, err := run(t, "forest", "train", "--dataset", "diabetes", "--trees", "3", "--save", plain); err != nil {
		t.Fatalf("forest train: %v\n%s", err, out)
	}
	writeForestInput(t, in, "diabetes", 10)
	out, _, err := run(t, "forest", "predict", "--model", model, "--data", in, "--quantiles", "0.05,0.5,0.95")
	if err != nil {
		t.Fatalf("forest predict --quantiles: %v\n%s", err, out)
	}
	recs, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(recs[0], ","); got != "quantile_0.05,quantile_0.5,quantile_0.95" || len(recs) != 11 {
		t.Fatalf("header %q and %d lines", got, len(recs))
	}
	for _, r := range recs[1:] {
		var v [3]float64
		for k := range v {
			if v[k], err = strconv.ParseFloat(r[k], 64); err != nil {
				t.Fatal(err)
			}
		}
		if !(v[0] <= v[1] && v[1] <= v[2]) || v[0] == v[2] {
			t.Errorf("quantiles %v not increasing", v)
		}
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"forest", "predict", "--model", plain, "--data", in, "--quantiles", "0.5"}, "--keep-leaf-samples"},
		{[]string{"forest", "predict", "--model", model, "--data", in, "--quantiles", "0.5,1.5"}, `quantile "1.5"`},
		{[]string{"--device", "go", "forest", "predict", "--model", model, "--data", in, "--quantiles", "0.5"}, "CPU only"},
		{[]string{"forest", "train", "--dataset", "digits", "--keep-leaf-samples"}, "needs a regression forest"},
	} {
		if _, _, err := run(t, c.args...); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want an error containing %q", c.args, err, c.want)
		}
	}
}
