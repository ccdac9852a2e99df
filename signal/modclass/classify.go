package modclass

import (
	"fmt"
	"math"
	"slices"
	"sort"

	"github.com/gotrain/gotrain/data"
	"github.com/gotrain/gotrain/forest"
)

// TrainOptions configure [Train].
type TrainOptions struct {
	// Features is the feature set: a [FeatureSet] spec ("default", "all",
	// "base", "cumulants" or a comma-separated list).
	Features string
	// Forest are the learner's options; Task is set to classification.
	// Trees defaults to 200.
	Forest forest.Options
}

// Train fits a forest on d. The forest's Features are the resolved feature
// names (columns and derived features), its Classes the class names, so
// the saved forest file is the whole model: [Evaluate] rebuilds the inputs
// from any data set by name.
func Train(d *Data, o TrainOptions) (*forest.Forest, error) {
	names, err := FeatureSet(o.Features, d.Columns)
	if err != nil {
		return nil, err
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("modclass: the feature set %q is empty", o.Features)
	}
	x, err := d.Matrix(names)
	if err != nil {
		return nil, err
	}
	classes := d.Classes()
	idx := map[string]int{}
	for i, c := range classes {
		idx[c] = i
	}
	y := make([]float64, d.Rows)
	for i, l := range d.Labels {
		k, ok := idx[l]
		if !ok {
			return nil, fmt.Errorf("modclass: %s row %d: label %q is not one of the classes %v", d.Name, i+1, l, classes)
		}
		y[i] = float64(k)
	}
	fo := o.Forest
	fo.Task = forest.Classification
	if fo.Trees == 0 {
		fo.Trees = 200
	}
	f, err := forest.Fit(&data.Dataset{X: x, Y: y, Rows: d.Rows, Cols: len(names), FeatureNames: names, TargetName: "label", Classes: classes}, fo)
	if err != nil {
		return nil, fmt.Errorf("modclass: %w", err)
	}
	return f, nil
}

// Eval is the evaluation of a classifier on a labelled data set.
type Eval struct {
	// Classes are the model's classes; True and Pred index them.
	Classes []string `json:"classes"`
	// Rows and Correct count the records and the right predictions.
	Rows     int     `json:"rows"`
	Correct  int     `json:"correct"`
	Accuracy float64 `json:"accuracy"`
	// Confusion[t][p] counts the records of class t predicted as p.
	Confusion [][]int `json:"confusion"`
	// PerSNR is the accuracy in each SNR bin, lowest first.
	PerSNR []SNRBin `json:"per_snr"`
	// PerClass is the accuracy of each class (NaN → null when absent).
	PerClass []float64 `json:"-"`

	// True, Pred and SNR are each record's true class, predicted class
	// and true SNR in dB.
	True, Pred []int     `json:"-"`
	SNR        []float64 `json:"-"`
	binWidth   float64
	binOrigin  float64
}

// SNRBin is the accuracy over the records of one SNR bin.
type SNRBin struct {
	SNRdB    float64 `json:"snr_db"`
	Rows     int     `json:"rows"`
	Correct  int     `json:"correct"`
	Accuracy float64 `json:"accuracy"`
	// PerClass is the accuracy of each class in the bin (−1 when the bin
	// has no record of the class).
	PerClass []float64 `json:"per_class"`
}

// Evaluate predicts every row of d with f and scores the predictions. SNR
// bins are the data set's grid (dataset.json's step), else 1 dB wide.
func Evaluate(f *forest.Forest, d *Data) (*Eval, error) {
	if f.Options.Task != forest.Classification {
		return nil, fmt.Errorf("modclass: the model is a %s forest, not a classifier", f.Options.Task)
	}
	if len(f.Features) != f.NumFeatures {
		return nil, fmt.Errorf("modclass: the model does not name its features")
	}
	x, err := d.Matrix(f.Features)
	if err != nil {
		return nil, err
	}
	idx := map[string]int{}
	for i, c := range f.Classes {
		idx[c] = i
	}
	truth := make([]int, d.Rows)
	for i, l := range d.Labels {
		k, ok := idx[l]
		if !ok {
			return nil, fmt.Errorf("modclass: %s row %d: label %q is not a class of the model (%v)", d.Name, i+1, l, f.Classes)
		}
		truth[i] = k
	}
	pred, err := f.Predict(x, d.Rows)
	if err != nil {
		return nil, fmt.Errorf("modclass: %w", err)
	}
	p := make([]int, len(pred))
	for i, v := range pred {
		p[i] = int(v)
	}
	return scoreData(f.Classes, truth, p, d), nil
}

// EvaluatePredictions scores the predicted classes pred (indices into
// classes, one per row of d) of any classifier against d's labels, as
// [Evaluate] scores a forest's: the same accuracy, SNR bins, per-class
// accuracies and confusion matrix. Every label of d must be one of
// classes.
func EvaluatePredictions(classes []string, d *Data, pred []int) (*Eval, error) {
	if len(pred) != d.Rows {
		return nil, fmt.Errorf("modclass: %d predictions for the %d rows of %s", len(pred), d.Rows, d.Name)
	}
	idx := map[string]int{}
	for i, c := range classes {
		idx[c] = i
	}
	truth := make([]int, d.Rows)
	for i, l := range d.Labels {
		k, ok := idx[l]
		if !ok {
			return nil, fmt.Errorf("modclass: %s row %d: label %q is not a class of the model (%v)", d.Name, i+1, l, classes)
		}
		truth[i] = k
	}
	for i, p := range pred {
		if p < 0 || p >= len(classes) {
			return nil, fmt.Errorf("modclass: prediction %d of row %d is not a class index (0 to %d)", p, i+1, len(classes)-1)
		}
	}
	return scoreData(classes, truth, pred, d), nil
}

// scoreData scores predictions of d's rows, in SNR bins of the data set's
// grid (dataset.json's step), else 1 dB wide.
func scoreData(classes []string, truth, pred []int, d *Data) *Eval {
	w, o := 1.0, 0.0
	if d.Info != nil && d.Info.Options.SNRStepDB > 0 {
		w, o = d.Info.Options.SNRStepDB, d.Info.Options.SNRMinDB
	}
	return score(classes, truth, pred, d.SNR, w, o)
}

// score builds an Eval from true and predicted class indices.
func score(classes []string, truth, pred []int, snr []float64, width, origin float64) *Eval {
	k := len(classes)
	e := &Eval{Classes: classes, Rows: len(truth), True: truth, Pred: pred, SNR: snr, binWidth: width, binOrigin: origin}
	e.Confusion = make([][]int, k)
	for i := range e.Confusion {
		e.Confusion[i] = make([]int, k)
	}
	bins := map[float64]*SNRBin{}
	classRows := make([]int, k)
	type key struct {
		snr float64
		c   int
	}
	binClass := map[key][2]int{}
	for i, t := range truth {
		e.Confusion[t][pred[i]]++
		classRows[t]++
		ok := 0
		if t == pred[i] {
			ok = 1
			e.Correct++
		}
		s := origin + math.Round((snr[i]-origin)/width)*width
		s = math.Round(s*1e9) / 1e9
		b := bins[s]
		if b == nil {
			b = &SNRBin{SNRdB: s}
			bins[s] = b
		}
		b.Rows++
		b.Correct += ok
		c := binClass[key{s, t}]
		binClass[key{s, t}] = [2]int{c[0] + 1, c[1] + ok}
	}
	e.Accuracy = ratio(e.Correct, e.Rows)
	e.PerClass = make([]float64, k)
	for c := range k {
		e.PerClass[c] = ratio(e.Confusion[c][c], classRows[c])
	}
	for _, b := range bins {
		b.Accuracy = ratio(b.Correct, b.Rows)
		b.PerClass = make([]float64, k)
		for c := range k {
			b.PerClass[c] = -1
			if v := binClass[key{b.SNRdB, c}]; v[0] > 0 {
				b.PerClass[c] = ratio(v[1], v[0])
			}
		}
		e.PerSNR = append(e.PerSNR, *b)
	}
	sort.Slice(e.PerSNR, func(i, j int) bool { return e.PerSNR[i].SNRdB < e.PerSNR[j].SNRdB })
	return e
}

func ratio(a, b int) float64 {
	if b == 0 {
		return math.NaN()
	}
	return float64(a) / float64(b)
}

// Range returns the evaluation restricted to the records whose true SNR is
// in [lo, hi] dB (nil when there is none).
func (e *Eval) Range(lo, hi float64) *Eval {
	var t, p []int
	var s []float64
	for i, v := range e.SNR {
		if v >= lo-1e-9 && v <= hi+1e-9 {
			t, p, s = append(t, e.True[i]), append(p, e.Pred[i]), append(s, v)
		}
	}
	if len(t) == 0 {
		return nil
	}
	return score(e.Classes, t, p, s, e.binWidth, e.binOrigin)
}

// ClassIndex returns the index of a class name, or −1.
func (e *Eval) ClassIndex(name string) int { return slices.Index(e.Classes, name) }
