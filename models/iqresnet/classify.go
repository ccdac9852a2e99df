package iqresnet

import (
	stdcontext "context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/gomlx/gomlx/backends"

	"github.com/gotrain/gotrain/data"
	"github.com/gotrain/gotrain/signal/modclass"
)

// RunOptions describe one run of the network as a modulation classifier
// on data sets of package signal/modclass (generated with their IQ
// records, `signal dataset --iq`): train and evaluate, or evaluate a
// checkpoint. It is what `gotrain signal classify train --model resnet`
// and `classify eval` on a checkpoint do.
type RunOptions struct {
	// Train is the training data; when nil, Checkpoint is evaluated.
	Train *modclass.Data
	// Test is the evaluation data. With Train set and Test nil,
	// TestFraction in (0, 1) holds out that fraction of Train's records
	// (split with Net.Train.Seed); 0 evaluates nothing.
	Test         *modclass.Data
	TestFraction float64
	// Checkpoint is the checkpoint file or run folder to evaluate when
	// Train is nil.
	Checkpoint string
	// Net configures the network and its training.
	Net Options
	// Hop is the distance in samples between the starts of a record's
	// windows (0: Net.Arch.Window, windows side by side).
	Hop int
	// BandDB, ConfusionPNG and SNRPNG are modclass.RunOptions': the band
	// of the headline accuracy and confusion matrix, and the PNGs.
	BandDB               [2]float64
	ConfusionPNG, SNRPNG string
	// Device names the device in the report.
	Device string
}

// Report is the outcome of Run: the forest's report keys
// (modclass.Report, whose Features and Trees it leaves out) and the
// network's. Its JSON is that of `gotrain signal classify train --model
// resnet --json`.
type Report struct {
	*modclass.Report
	// Classifier is "resnet".
	Classifier string `json:"classifier"`
	// Device is the device the network ran on.
	Device string `json:"device,omitempty"`
	// Arch is the architecture and Params its number of weights.
	Arch   Arch `json:"arch"`
	Params int  `json:"params"`
	// Window and Hop are how records were cut into windows;
	// TrainWindows and TestWindows count them.
	Window       int `json:"window"`
	Hop          int `json:"hop"`
	TrainWindows int `json:"train_windows,omitempty"`
	TestWindows  int `json:"test_windows,omitempty"`
	// WindowAccuracy is the accuracy of single windows (a record is
	// classified by the sum of its windows' log-probabilities).
	WindowAccuracy *float64 `json:"window_accuracy,omitempty"`
	// Step is the optimizer step of the weights evaluated.
	Step int64 `json:"step"`
	// Training is the training run (nil when a checkpoint was evaluated).
	Training *Result `json:"training,omitempty"`
}

// Classifier is the name of this classifier in reports and on the
// command line (--model resnet).
const Classifier = "resnet"

// DataWindows reads the IQ record of every row of d (modclass.Data.ReadIQ)
// and cuts it into windows (AppendWindows): x holds the windows, rows
// the data row of each. A record too short for one window is an error.
func DataWindows(d *modclass.Data, window, hop int) (x []float32, rows []int, err error) {
	if d.Info != nil && window > 0 {
		// Room for the windows of records of the data set's length (a
		// sample-rate offset may take one away), not grown by doubling;
		// at most 2^28 values (1 GiB) on the word of dataset.json.
		if n := NumWindows(d.Info.Options.Samples, window, hop); n > 0 {
			w := min(d.Rows, (1<<28)/(2*window)/n) * n
			x, rows = make([]float32, 0, w*2*window), make([]int, 0, w)
		}
	}
	for i := range d.Rows {
		iq, err := d.ReadIQ(i)
		if err != nil {
			return nil, nil, err
		}
		var n int
		if x, n = AppendWindows(x, iq, window, hop); n == 0 {
			return nil, nil, fmt.Errorf("iqresnet: %s row %d: a record of %d samples holds no window of %d", d.Name, i+1, len(iq), window)
		}
		for range n {
			rows = append(rows, i)
		}
	}
	return x, rows, nil
}

// Run trains the network on o.Train (or loads o.Checkpoint), evaluates it
// on the test data — each record classified by the sum of its windows'
// log-probabilities, scored per SNR as modclass scores the forest —,
// writes the PNGs o names and reports. Cancelling ctx interrupts training
// (a checkpoint is written; the error wraps train.ErrInterrupted).
func Run(ctx stdcontext.Context, backend backends.Backend, o RunOptions) (*Report, error) {
	switch {
	case o.Train == nil && o.Checkpoint == "":
		return nil, errors.New("iqresnet: no training data and no checkpoint")
	case o.Train == nil && o.Test == nil:
		return nil, errors.New("iqresnet: no test data to evaluate the checkpoint on")
	case o.Test != nil && o.TestFraction != 0:
		return nil, errors.New("iqresnet: give test data or a test fraction, not both")
	case !(o.TestFraction >= 0 && o.TestFraction < 1):
		return nil, fmt.Errorf("iqresnet: test fraction %v must be in [0, 1)", o.TestFraction)
	}
	a := o.Net.Arch
	if o.Hop < 0 {
		return nil, fmt.Errorf("iqresnet: Hop %d: want >= 1 (0: the window length)", o.Hop)
	}
	hop := o.Hop
	if hop == 0 {
		hop = a.Window // of the checkpoint's network, when evaluating one (below)
	}
	rep := &Report{Report: &modclass.Report{}, Classifier: Classifier, Device: o.Device}
	var m *Model
	if o.Train != nil {
		tr, test := o.Train, o.Test
		if o.TestFraction > 0 {
			a, b := data.TrainTestSplit(tr.Rows, o.TestFraction, uint64(o.Net.Train.Seed))
			if len(a) == 0 || len(b) == 0 {
				return nil, fmt.Errorf("iqresnet: test fraction %v leaves %d training and %d test records", o.TestFraction, len(a), len(b))
			}
			tr, test = tr.Subset(a), tr.Subset(b)
		}
		classes := tr.Classes()
		idx := map[string]int{}
		for i, c := range classes {
			idx[c] = i
		}
		if err := a.withClasses(len(classes)).Validate(); err != nil {
			return nil, err
		}
		x, rows, err := DataWindows(tr, a.Window, hop)
		if err != nil {
			return nil, err
		}
		labels := make([]int, len(rows))
		for i, r := range rows {
			k, ok := idx[tr.Labels[r]]
			if !ok {
				return nil, fmt.Errorf("iqresnet: %s row %d: label %q is not one of the classes %v", tr.Name, r+1, tr.Labels[r], classes)
			}
			labels[i] = k
		}
		res, err := Train(ctx, backend, x, labels, classes, o.Net)
		if err != nil {
			return nil, err
		}
		m, rep.Training, rep.TrainWindows = res.Model, res, len(rows)
		rep.Train, rep.TrainRows, rep.FitSeconds, rep.Model = tr.Name, tr.Rows, res.Seconds, res.Train.Checkpoint
		rep.Seed = uint64(o.Net.Train.Seed)
		o.Test = test
	} else {
		var err error
		if m, err = Load(backend, o.Checkpoint, o.Net.PredictBatch); err != nil {
			return nil, err
		}
		rep.Model = o.Checkpoint
		if o.Hop == 0 {
			hop = m.Arch.Window
		}
	}
	rep.Arch, rep.Params, rep.Window, rep.Hop, rep.Step = m.Arch, int(m.Arch.Params()), m.Arch.Window, hop, m.Step
	if o.Test == nil {
		return rep, nil
	}
	idx := map[string]int{}
	for i, c := range m.Classes {
		idx[c] = i
	}
	for r, l := range o.Test.Labels {
		if _, ok := idx[l]; !ok {
			return nil, fmt.Errorf("iqresnet: %s row %d: label %q is not a class of the model (%v)", o.Test.Name, r+1, l, m.Classes)
		}
	}
	x, rows, err := DataWindows(o.Test, m.Arch.Window, hop)
	if err != nil {
		return nil, err
	}
	lp, err := m.LogProbs(x)
	if err != nil {
		return nil, err
	}
	k := len(m.Classes)
	sums := make([]float64, o.Test.Rows*k)
	right := 0
	for w, r := range rows {
		p := lp[w*k : (w+1)*k]
		if argmax32(p) == idx[o.Test.Labels[r]] {
			right++
		}
		for c, v := range p {
			sums[r*k+c] += float64(v)
		}
	}
	pred := make([]int, o.Test.Rows)
	for r := range pred {
		pred[r] = argmax64(sums[r*k : (r+1)*k])
	}
	e, err := modclass.EvaluatePredictions(m.Classes, o.Test, pred)
	if err != nil {
		return nil, err
	}
	wa := float64(right) / float64(len(rows))
	rep.TestWindows, rep.WindowAccuracy = len(rows), &wa
	if err := rep.AddEval(e, o.Test, modclass.RunOptions{BandDB: o.BandDB, ConfusionPNG: o.ConfusionPNG, SNRPNG: o.SNRPNG}); err != nil {
		return nil, err
	}
	return rep, nil
}

// withClasses returns a with k classes.
func (a Arch) withClasses(k int) Arch {
	a.Classes = k
	return a
}

func argmax32(v []float32) int {
	best := 0
	for i, x := range v {
		if x > v[best] {
			best = i
		}
	}
	return best
}

func argmax64(v []float64) int {
	best := 0
	for i, x := range v {
		if x > v[best] {
			best = i
		}
	}
	return best
}

// WriteText writes the report as `gotrain signal classify` prints it: the
// training (or the checkpoint evaluated), the window accuracy, then the
// evaluation as the forest's report prints it.
func (r *Report) WriteText(w io.Writer) error {
	var b strings.Builder
	a := r.Arch
	net := fmt.Sprintf("resnet (%d stacks of %d filters, kernel %d, dense %d, dropout %g; %d weights)", a.Stacks, a.Filters, a.Kernel, a.Dense, a.Dropout, r.Params)
	if t := r.Training; t != nil {
		fmt.Fprintf(&b, "trained %s on %s: %d records, %d windows of %d samples (hop %d), on %s\n", net, r.Train, r.TrainRows, r.TrainWindows, r.Window, r.Hop, r.Device)
		fmt.Fprintf(&b, "%d steps (%.2f epochs, batch %d) in %s, loss %.4f -> %.4f", t.Train.Steps, t.Epochs, t.BatchSize,
			(time.Duration(t.Seconds*10) * time.Second / 10).String(), t.FirstLoss, t.Train.Loss)
		if t.Stopped != "" {
			fmt.Fprintf(&b, " (stopped: %s)", t.Stopped)
		}
		b.WriteString("\n")
		if t.ResumedFrom != "" {
			fmt.Fprintf(&b, "resumed from %s\n", t.ResumedFrom)
		}
	} else {
		fmt.Fprintf(&b, "%s, step %d, on %s\n", net, r.Step, r.Device)
	}
	if r.Model != "" {
		fmt.Fprintf(&b, "model %s\n", r.Model)
	}
	if r.WindowAccuracy != nil {
		fmt.Fprintf(&b, "test windows: %d, accuracy %.4f (a record: the sum of its windows' log-probabilities)\n", r.TestWindows, *r.WindowAccuracy)
	}
	if _, err := io.WriteString(w, b.String()); err != nil {
		return err
	}
	return r.Report.WriteEvalText(w)
}
