package modclass

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/gotrain/gotrain/data"
	"github.com/gotrain/gotrain/forest"
)

// RunOptions describe one run of the classifier: train and evaluate, or
// evaluate a trained model.
type RunOptions struct {
	// Train is the training data; when nil, Model is evaluated instead.
	Train *Data
	// Fit configures training. Fit.Forest.OOB is set when there is no test
	// data, so the report has the out-of-bag accuracy instead.
	Fit TrainOptions
	// Model is the classifier to evaluate when Train is nil.
	Model *forest.Forest
	// Test is the evaluation data. With Train set and Test nil,
	// TestFraction in (0, 1) holds out that fraction of Train's rows
	// (split with Fit.Forest.Seed); 0 evaluates nothing.
	Test         *Data
	TestFraction float64
	// BandDB is the SNR range (dB) of the band accuracy and of the
	// confusion matrix of the report and of ConfusionPNG.
	BandDB [2]float64
	// ModelFile names the model's file in the report; with Train, the
	// trained model is written to it (a forest model file).
	ModelFile string
	// ConfusionPNG and SNRPNG, when set, receive the confusion matrix over
	// BandDB (over all SNRs when no test record falls in it) and the
	// accuracy against the SNR ([WriteConfusionPNG], [WriteSNRPNG]).
	ConfusionPNG, SNRPNG string
}

// Report is the outcome of [Run] and [Demo]; its JSON is that of
// `gotrain signal classify train/eval/demo --json`.
type Report struct {
	Train     string `json:"train,omitempty"` // training data set name
	TrainRows int    `json:"train_rows,omitempty"`
	Test      string `json:"test"` // test data set name
	TestRows  int    `json:"test_rows"`
	Model     string `json:"model,omitempty"` // the model file written or read
	// Features are the model's inputs; Derived defines those of them that
	// are derived features ([DerivedDoc]).
	// Features and Trees are absent from the JSON of another classifier's
	// report (a forest has both).
	Features    []string          `json:"features,omitempty"`
	Derived     map[string]string `json:"derived,omitempty"`
	Trees       int               `json:"trees,omitempty"`
	Seed        uint64            `json:"seed"`                   // the forest's seed (the classifier's)
	FitSeconds  float64           `json:"fit_seconds,omitempty"`  // training wall time
	OOBAccuracy *float64          `json:"oob_accuracy,omitempty"` // without test data
	// Accuracy is over every test record, BandAcc and BandConf (the
	// confusion matrix) over those in Band (absent when none is).
	Accuracy float64    `json:"accuracy"`
	Band     [2]float64 `json:"band_db"`
	BandAcc  *float64   `json:"band_accuracy,omitempty"`
	BandConf [][]int    `json:"band_confusion,omitempty"`
	// Eval is the whole evaluation (nil without test data).
	Eval     *Eval     `json:"eval"`
	PNGs     []string  `json:"png,omitempty"`              // the PNG files written
	Generate []float64 `json:"generate_seconds,omitempty"` // Demo: the data sets' generation times
	// Generated are the options of the data sets Demo generated (the test
	// set's seed is one more); nil for Run. WriteText then starts with a
	// line on them.
	Generated *DatasetOptions `json:"-"`
}

// Run trains a classifier on o.Train (or takes o.Model), evaluates it on
// the test data, writes the files o names and reports.
func Run(o RunOptions) (*Report, error) {
	switch {
	case o.Train == nil && o.Model == nil:
		return nil, errors.New("modclass: no training data and no model")
	case o.Train == nil && o.Test == nil:
		return nil, errors.New("modclass: no test data to evaluate the model on")
	case o.Test != nil && o.TestFraction != 0:
		return nil, errors.New("modclass: give test data or a test fraction, not both")
	case !(o.TestFraction >= 0 && o.TestFraction < 1):
		return nil, fmt.Errorf("modclass: test fraction %v must be in [0, 1)", o.TestFraction)
	}
	rep := &Report{}
	f := o.Model
	if o.Train != nil {
		train, test := o.Train, o.Test
		if o.TestFraction > 0 {
			tr, te := data.TrainTestSplit(train.Rows, o.TestFraction, o.Fit.Forest.Seed)
			if len(tr) == 0 || len(te) == 0 {
				return nil, fmt.Errorf("modclass: test fraction %v leaves %d training and %d test rows", o.TestFraction, len(tr), len(te))
			}
			train, test = train.Subset(tr), train.Subset(te)
		}
		fit := o.Fit
		fit.Forest.OOB = test == nil
		t0 := time.Now()
		var err error
		if f, err = Train(train, fit); err != nil {
			return nil, err
		}
		rep.Train, rep.TrainRows, rep.FitSeconds, rep.Seed = train.Name, train.Rows, time.Since(t0).Seconds(), o.Fit.Forest.Seed
		if !math.IsNaN(f.OOBScore) {
			rep.OOBAccuracy = &f.OOBScore
		}
		if o.ModelFile != "" {
			if err := f.SaveFile(o.ModelFile); err != nil {
				return nil, err
			}
			rep.Model = o.ModelFile
		}
		o.Test = test
	} else {
		rep.Seed, rep.Model = f.Options.Seed, o.ModelFile
	}
	rep.Features, rep.Trees, rep.Derived = f.Features, len(f.Trees), derivedUsed(f.Features)
	if o.Test == nil {
		return rep, nil
	}
	return rep, evaluateInto(rep, f, o)
}

// derivedUsed returns the definitions of the derived features among names.
func derivedUsed(names []string) map[string]string {
	doc := DerivedDoc()
	m := map[string]string{}
	for _, n := range names {
		if d, ok := doc[n]; ok {
			m[n] = d
		}
	}
	return m
}

// evaluateInto evaluates f on o.Test, fills the report's accuracy fields
// and writes the PNGs.
func evaluateInto(rep *Report, f *forest.Forest, o RunOptions) error {
	e, err := Evaluate(f, o.Test)
	if err != nil {
		return err
	}
	return rep.AddEval(e, o.Test, o)
}

// AddEval fills the report's test and accuracy fields from e, the
// evaluation of a classifier on test (its Eval, the accuracy overall and
// over o.BandDB, the confusion matrix over the band), and writes the PNGs
// o names (o.ConfusionPNG, o.SNRPNG), as [Run] does for a forest: other
// classifiers report through it in the same form.
func (rep *Report) AddEval(e *Eval, test *Data, o RunOptions) error {
	lo, hi := o.BandDB[0], o.BandDB[1]
	rep.Test, rep.TestRows, rep.Eval, rep.Accuracy, rep.Band = test.Name, test.Rows, e, e.Accuracy, o.BandDB
	b := e.Range(lo, hi)
	if b != nil {
		rep.BandAcc, rep.BandConf = &b.Accuracy, b.Confusion
	}
	if o.ConfusionPNG != "" {
		title := fmt.Sprintf("Confusion, %g to %g dB (row %%)", lo, hi)
		if b == nil {
			b, title = e, "Confusion, all SNRs (row %)"
		}
		if err := WriteConfusionPNG(o.ConfusionPNG, b, title); err != nil {
			return err
		}
		rep.PNGs = append(rep.PNGs, o.ConfusionPNG)
	}
	if o.SNRPNG != "" {
		if err := WriteSNRPNG(o.SNRPNG, e, "Modulation classifier accuracy vs SNR"); err != nil {
			return err
		}
		rep.PNGs = append(rep.PNGs, o.SNRPNG)
	}
	return nil
}

// Demo runs the whole pipeline at a small scale: it generates a training
// set (ds, seed ds.Seed) in dir/train and a test set (seed ds.Seed+1) in
// dir/test, then [Run]s o on them (o.Train and o.Test are replaced). With
// dir "" the data sets go to a temporary folder, removed before Demo
// returns. The report's Generate holds the two generation times and
// Generated the data sets' options.
func Demo(dir string, ds DatasetOptions, o RunOptions) (*Report, error) {
	if dir == "" {
		tmp, err := os.MkdirTemp("", "gotrain-modclass-demo-")
		if err != nil {
			return nil, fmt.Errorf("modclass: %w", err)
		}
		defer os.RemoveAll(tmp)
		dir = tmp
	}
	var gen []float64
	var sets [2]*Data
	for i, name := range []string{"train", "test"} {
		oo := ds
		oo.Seed += uint64(i)
		sub := filepath.Join(dir, name)
		info, err := Generate(sub, oo, false)
		if err != nil {
			return nil, err
		}
		gen = append(gen, info.Seconds)
		if sets[i], err = Load(sub); err != nil {
			return nil, err
		}
	}
	o.Train, o.Test, o.Model, o.TestFraction = sets[0], sets[1], nil, 0
	rep, err := Run(o)
	if err != nil {
		return nil, err
	}
	rep.Generate, rep.Generated = gen, &ds
	return rep, nil
}

// ParseSNRRange parses an SNR range in dB: MIN:MAX, MIN:MAX:STEP or one
// value (MIN = MAX; step 0 when absent). The values must be finite, MIN
// at most MAX and the step positive.
func ParseSNRRange(s string) (lo, hi, step float64, err error) {
	parts := strings.Split(strings.TrimSpace(s), ":")
	if len(parts) > 3 {
		return 0, 0, 0, fmt.Errorf("modclass: SNR range %q: want MIN:MAX[:STEP] or one value", s)
	}
	v := make([]float64, len(parts))
	for i, p := range parts {
		x, err := strconv.ParseFloat(strings.TrimSpace(p), 64)
		if err != nil || !finite(x) {
			return 0, 0, 0, fmt.Errorf("modclass: SNR range %q: %q is not a finite number of dB", s, p)
		}
		v[i] = x
	}
	lo, hi = v[0], v[0]
	if len(v) > 1 {
		hi = v[1]
	}
	if len(v) > 2 {
		step = v[2]
		if !(step > 0) {
			return 0, 0, 0, fmt.Errorf("modclass: SNR range %q: the step %v must be positive", s, step)
		}
	}
	if lo > hi {
		return 0, 0, 0, fmt.Errorf("modclass: SNR range %q: the minimum %v is above the maximum %v (write MIN:MAX)", s, lo, hi)
	}
	return lo, hi, step, nil
}
