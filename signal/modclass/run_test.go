package modclass

import (
	"errors"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gotrain/gotrain/forest"
)

func TestParseSNRRange(t *testing.T) {
	for _, c := range []struct {
		in           string
		lo, hi, step float64
	}{
		{"10", 10, 10, 0},
		{" -10:20 ", -10, 20, 0},
		{"-10:20:2", -10, 20, 2},
		{"5:5:0.5", 5, 5, 0.5},
	} {
		lo, hi, step, err := ParseSNRRange(c.in)
		if err != nil || lo != c.lo || hi != c.hi || step != c.step {
			t.Errorf("ParseSNRRange(%q) = %v, %v, %v, %v; want %v, %v, %v", c.in, lo, hi, step, err, c.lo, c.hi, c.step)
		}
	}
	for in, want := range map[string]string{
		"20:10":   "minimum 20 is above the maximum 10",
		"a:b":     "not a finite number",
		"0:10:0":  "step 0 must be positive",
		"0:10:-1": "step -1 must be positive",
		"1:2:3:4": "MIN:MAX[:STEP]",
		"NaN":     "not a finite number",
		"0:Inf":   "not a finite number",
		"":        "not a finite number",
	} {
		if _, _, _, err := ParseSNRRange(in); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseSNRRange(%q): error %v, want one containing %q", in, err, want)
		}
	}
}

// TestRunTrainEvalRoundTrip trains with Run on one data set, evaluates on
// another, then evaluates the saved model with Run: the reports agree,
// the band accuracy is that of Eval.Range, and the files are written.
func TestRunTrainEvalRoundTrip(t *testing.T) {
	train, test := genPair(t, 6, 6, 16)
	dir := t.TempDir()
	model, conf, snr := filepath.Join(dir, "m.forest"), filepath.Join(dir, "c.png"), filepath.Join(dir, "s.png")
	o := RunOptions{Train: train, Test: test, Fit: TrainOptions{Forest: forest.Options{Trees: 15, Seed: 4}},
		BandDB: [2]float64{10, 14}, ModelFile: model, ConfusionPNG: conf, SNRPNG: snr}
	rep, err := Run(o)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Train != train.Name || rep.TrainRows != train.Rows || rep.Test != test.Name || rep.TestRows != test.Rows ||
		rep.Model != model || rep.Trees != 15 || rep.Seed != 4 || !(rep.FitSeconds > 0) || rep.OOBAccuracy != nil {
		t.Errorf("report %+v", rep)
	}
	if rep.Eval == nil || rep.Accuracy != rep.Eval.Accuracy || rep.Band != [2]float64{10, 14} {
		t.Fatalf("accuracy %v, band %v, eval %v", rep.Accuracy, rep.Band, rep.Eval)
	}
	b := rep.Eval.Range(10, 14)
	if b == nil || rep.BandAcc == nil || *rep.BandAcc != b.Accuracy || !slices.EqualFunc(rep.BandConf, b.Confusion, slices.Equal) || b.Rows == rep.Eval.Rows {
		t.Errorf("band accuracy %v / confusion %v, want those of Range(10, 14)", rep.BandAcc, rep.BandConf)
	}
	if _, ok := rep.Derived["c42_clean"]; !ok || len(rep.Derived) == 0 || !slices.Contains(rep.Features, "c42_clean") {
		t.Errorf("derived %v of features %v", rep.Derived, rep.Features)
	}
	for k := range rep.Derived {
		if !slices.Contains(rep.Features, k) {
			t.Errorf("derived %q is not a feature", k)
		}
	}
	if !slices.Equal(rep.PNGs, []string{conf, snr}) {
		t.Errorf("PNGs %v", rep.PNGs)
	}
	for _, p := range rep.PNGs {
		fh, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := png.Decode(fh); err != nil {
			t.Errorf("%s: %v", p, err)
		}
		fh.Close()
	}
	f, err := forest.LoadFile(model)
	if err != nil {
		t.Fatal(err)
	}
	rep2, err := Run(RunOptions{Model: f, Test: test, BandDB: o.BandDB, ModelFile: model})
	if err != nil {
		t.Fatal(err)
	}
	if rep2.Accuracy != rep.Accuracy || *rep2.BandAcc != *rep.BandAcc || rep2.Seed != 4 || rep2.Model != model || rep2.Train != "" || rep2.FitSeconds != 0 || rep2.PNGs != nil {
		t.Errorf("evaluating the saved model: %+v, training reported %+v", rep2, rep)
	}
	var text strings.Builder
	if err := rep.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"trained on " + train.Name + ": 48 records, ", "model " + model + "\n", "test " + test.Name + ": 48 records, accuracy ",
		"; 10..14 dB: ", "SNR dB  records  accuracy", "confusion matrix, 10..14 dB (rows: true, columns: predicted):\n", "wrote " + conf + "\n", "wrote " + snr + "\n"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text report lacks %q:\n%s", want, text.String())
		}
	}
	// One line per SNR bin and per class of the confusion matrix.
	if n, want := strings.Count(text.String(), "\n"), 3+1+len(rep.Eval.PerSNR)+1+1+8+2; n != want {
		t.Errorf("text report has %d lines, want %d:\n%s", n, want, text.String())
	}
	if err := rep.WriteText(failWriter{}); err == nil {
		t.Error("write error lost")
	}
	// A band without test rows has no band accuracy; the confusion PNG
	// then covers every SNR.
	rep3, err := Run(RunOptions{Model: f, Test: test, BandDB: [2]float64{30, 40}, ConfusionPNG: conf})
	if err != nil || rep3.BandAcc != nil || rep3.BandConf != nil || len(rep3.PNGs) != 1 {
		t.Errorf("empty band: %v, %+v", err, rep3)
	}
}

func TestRunHoldOutAndOOB(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "ds")
	if _, err := Generate(dir, small(3), false); err != nil {
		t.Fatal(err)
	}
	d, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	fit := TrainOptions{Forest: forest.Options{Trees: 8, Seed: 2}}
	rep, err := Run(RunOptions{Train: d, Fit: fit, TestFraction: 0.25})
	if err != nil {
		t.Fatal(err)
	}
	if rep.TrainRows+rep.TestRows != d.Rows || rep.TestRows != int(math.Ceil(0.25*float64(d.Rows))) || rep.Eval == nil || rep.OOBAccuracy != nil {
		t.Errorf("hold-out: %d + %d rows of %d, eval %v, oob %v", rep.TrainRows, rep.TestRows, d.Rows, rep.Eval, rep.OOBAccuracy)
	}
	rep, err = Run(RunOptions{Train: d, Fit: fit})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Eval != nil || rep.OOBAccuracy == nil || rep.TestRows != 0 || rep.TrainRows != d.Rows {
		t.Errorf("no test data: %+v", rep)
	}
	var text strings.Builder
	if err := rep.WriteText(&text); err != nil || !strings.Contains(text.String(), "out-of-bag accuracy ") || strings.Contains(text.String(), "SNR dB") {
		t.Errorf("text report without test data (%v):\n%s", err, text.String())
	}
	for _, c := range []struct {
		o    RunOptions
		want string
	}{
		{RunOptions{}, "no training data"},
		{RunOptions{Train: d, Test: d, TestFraction: 0.2}, "not both"},
		{RunOptions{Train: d, TestFraction: 1}, "[0, 1)"},
		{RunOptions{Train: d, TestFraction: math.NaN()}, "[0, 1)"},
		{RunOptions{Train: d, TestFraction: 0.99}, "leaves 0 training"},
		{RunOptions{Train: d, Fit: TrainOptions{Features: "nope"}}, "nope"},
	} {
		if _, err := Run(c.o); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: error %v, want one containing %q", c.o, err, c.want)
		}
	}
}

func TestDemo(t *testing.T) {
	ds := small(5)
	o := RunOptions{Fit: TrainOptions{Forest: forest.Options{Trees: 8}}, BandDB: [2]float64{0, 10}, TestFraction: 0.5}
	rep, err := Demo("", ds, o)
	if err != nil {
		t.Fatal(err)
	}
	n := len(ds.Mods) * ds.PerClass
	if len(rep.Generate) != 2 || rep.TrainRows != n || rep.TestRows != n || rep.Eval == nil || !slices.Equal(rep.Eval.Classes, []string{"bpsk", "qpsk", "fm", "am"}) {
		t.Errorf("demo report %+v", rep)
	}
	// In a given folder the data sets stay: seeds Seed and Seed+1.
	dir := t.TempDir()
	if _, err := Demo(dir, ds, o); err != nil {
		t.Fatal(err)
	}
	for i, name := range []string{"train", "test"} {
		d, err := Load(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if d.Info.Options.Seed != ds.Seed+uint64(i) || d.Rows != n {
			t.Errorf("%s set: seed %d, %d rows; want seed %d, %d rows", name, d.Info.Options.Seed, d.Rows, ds.Seed+uint64(i), n)
		}
	}
}

// failWriter fails every write.
type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }
