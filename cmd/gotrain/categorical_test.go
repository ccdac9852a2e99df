package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestForestTrainCategorical trains on a CSV file with a text column
// (categorical without a flag) and a numeric code column named by
// --categorical, then predicts a file whose columns come in another order
// with a category never seen in training; --categorical on a graph device
// is refused with the reason.
func TestForestTrainCategorical(t *testing.T) {
	dir := t.TempDir()
	var train strings.Builder
	train.WriteString("color,zip,x,y\n")
	colors := []string{"red", "green", "blue", "teal", "gold", "pink"}
	for i := range 300 {
		c, zip := colors[i%6], []string{"75001", "10115", "2134"}[i/6%3]
		y := float64(i%7) * 0.01
		if c == "green" || c == "gold" {
			y += 10
		}
		if zip == "2134" {
			y += 3
		}
		fmt.Fprintf(&train, "%s,%s,%g,%g\n", c, zip, float64(i%10)/10, y)
	}
	write := func(name, s string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	tr := write("train.csv", train.String())
	in := write("in.csv", "x,zip,color\n0.5,02134,gold\n0.5,75001,red\n0.5,75001,mauve\n")
	model := filepath.Join(dir, "m.gtf")
	out, _, err := run(t, "forest", "train", "--train", tr, "--categorical", "zip", "--trees", "10", "--seed", "3", "--save", model)
	if err != nil {
		t.Fatalf("train: %v\n%s", err, out)
	}
	if !strings.Contains(out, "categorical  color, zip") {
		t.Errorf("the report does not list the categorical features:\n%s", out)
	}
	pred, _, err := run(t, "forest", "predict", "--model", model, "--data", in)
	if err != nil {
		t.Fatal(err)
	}
	var v [3]float64
	if _, err := fmt.Sscanf(strings.ReplaceAll(pred, "\n", " "), "prediction %g %g %g", &v[0], &v[1], &v[2]); err != nil {
		t.Fatalf("predictions %q: %v", pred, err)
	}
	// "02134" is the category "2134" (keyed as the number 2134).
	if v[0] < 12.5 || v[0] > 13.5 || v[1] > 0.5 {
		t.Errorf("predictions %v, want about 13 and 0", v)
	}
	// One split: mauve, unseen, follows its heavier side, the 4 colors
	// of target about 1, like red.
	stump := filepath.Join(dir, "stump.gtf")
	if out, _, err := run(t, "forest", "train", "--train", tr, "--trees", "1", "--no-bootstrap", "--max-depth", "1", "--save", stump); err != nil {
		t.Fatalf("train: %v\n%s", err, out)
	}
	if pred, _, err = run(t, "forest", "predict", "--model", stump, "--data", in); err != nil {
		t.Fatal(err)
	}
	if _, err := fmt.Sscanf(strings.ReplaceAll(pred, "\n", " "), "prediction %g %g %g", &v[0], &v[1], &v[2]); err != nil {
		t.Fatalf("predictions %q: %v", pred, err)
	}
	if v[0] < 10 || v[1] > 2 || v[2] != v[1] {
		t.Errorf("stump predictions %v, want about 11, 1 and the second again (the heavier side)", v)
	}
	if _, _, err := run(t, "forest", "train", "--train", tr, "--trees", "2", "--device", "go"); err == nil || !strings.Contains(err.Error(), "categorical features are refused on graph engines") {
		t.Errorf("graph device: err = %v, want the refusal", err)
	}
}
