package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestForestTrainWeightColumn trains on a CSV file with a weight column
// of integers and on the same rows repeated that many times, without
// bootstrap: forest predict must write the same predictions. And
// --class-weight and --weight-column refusals name their flags.
func TestForestTrainWeightColumn(t *testing.T) {
	dir := t.TempDir()
	var weighted, dup, in strings.Builder
	weighted.WriteString("a,b,w,y\n")
	dup.WriteString("a,b,y\n")
	in.WriteString("a,b\n")
	for i := 0; i < 60; i++ {
		a, b := float64(i%13)+0.25*float64(i%3), float64((i*7)%11)
		y := a*1.5 - b + float64(i%5)*0.1
		k := i % 4
		fmt.Fprintf(&weighted, "%g,%g,%d,%g\n", a, b, k, y)
		for range k {
			fmt.Fprintf(&dup, "%g,%g,%g\n", a, b, y)
		}
		fmt.Fprintf(&in, "%g,%g\n", a, b)
	}
	write := func(name, s string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	wcsv, dcsv, incsv := write("w.csv", weighted.String()), write("d.csv", dup.String()), write("in.csv", in.String())
	mw, md := filepath.Join(dir, "w.gtf"), filepath.Join(dir, "d.gtf")
	common := []string{"--trees", "8", "--no-bootstrap", "--bins", "8"}
	if out, _, err := run(t, append([]string{"forest", "train", "--train", wcsv, "--weight-column", "w", "--save", mw}, common...)...); err != nil {
		t.Fatalf("train with weights: %v\n%s", err, out)
	}
	if out, _, err := run(t, append([]string{"forest", "train", "--train", dcsv, "--save", md}, common...)...); err != nil {
		t.Fatalf("train on repeated rows: %v\n%s", err, out)
	}
	pw, _, err := run(t, "forest", "predict", "--model", mw, "--data", incsv)
	if err != nil {
		t.Fatal(err)
	}
	pd, _, err := run(t, "forest", "predict", "--model", md, "--data", incsv)
	if err != nil {
		t.Fatal(err)
	}
	if pw != pd {
		t.Fatalf("predictions differ:\n%s\nvs\n%s", pw, pd)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"forest", "train", "--dataset", "diabetes", "--weight-column", "w"}, "--weight-column needs a training file (--train)"},
		{[]string{"forest", "train", "--train", wcsv, "--weight-column", "v"}, `weight column "v" not found`},
		{[]string{"forest", "train", "--dataset", "digits", "--class-weight", "11=2"}, `no class "11"`},
		{[]string{"--device", "go", "forest", "train", "--dataset", "digits", "--min-weight-fraction-leaf", "0.7"}, "--min-weight-fraction-leaf 0.7: want 0 to 0.5"},
	} {
		if _, _, err := run(t, c.args...); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want an error containing %q", c.args, err, c.want)
		}
	}
}
