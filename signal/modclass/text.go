package modclass

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// WriteText writes the report as text, as `gotrain signal classify`
// prints it: for a [Demo], a line on the data sets generated; the training
// summary, the model file, then (with test data) the accuracy overall and
// in the band, the accuracy per SNR and class ([WriteSNRTable]), the
// confusion matrix over the band ([WriteConfusionTable]) and the PNG files
// written.
func (r *Report) WriteText(w io.Writer) error {
	ew := &errWriter{w: w}
	if ds := r.Generated; ds != nil && len(r.Generate) == 2 && r.Eval != nil {
		fmt.Fprintf(ew, "demo: %d + %d records of %d samples at %g Hz (%s), generated in %.1f + %.1f s\n",
			r.TrainRows, r.TestRows, ds.Samples, ds.SampleRate, strings.Join(r.Eval.Classes, " "), r.Generate[0], r.Generate[1])
	}
	if r.Train != "" {
		fmt.Fprintf(ew, "trained on %s: %d records, %d features, %d trees, %.2f s\n", r.Train, r.TrainRows, len(r.Features), r.Trees, r.FitSeconds)
	}
	if r.OOBAccuracy != nil {
		fmt.Fprintf(ew, "out-of-bag accuracy %.4f\n", *r.OOBAccuracy)
	}
	if r.Model != "" {
		fmt.Fprintf(ew, "model %s\n", r.Model)
	}
	if ew.err != nil {
		return ew.err
	}
	return r.WriteEvalText(w)
}

// WriteEvalText writes the evaluation part of [Report.WriteText]: with
// test data, the accuracy overall and in the band, the accuracy per SNR
// and class, the confusion matrix over the band and the PNG files
// written; nothing without. Other classifiers' reports print their
// evaluation with it.
func (r *Report) WriteEvalText(w io.Writer) error {
	ew := &errWriter{w: w}
	if r.Eval != nil {
		fmt.Fprintf(ew, "test %s: %d records, accuracy %.4f", r.Test, r.TestRows, r.Eval.Accuracy)
		if r.BandAcc != nil {
			fmt.Fprintf(ew, "; %g..%g dB: %.4f", r.Band[0], r.Band[1], *r.BandAcc)
		}
		fmt.Fprintln(ew)
		WriteSNRTable(ew, r.Eval)
		if r.BandConf != nil {
			fmt.Fprintf(ew, "confusion matrix, %g..%g dB (rows: true, columns: predicted):\n", r.Band[0], r.Band[1])
			WriteConfusionTable(ew, r.Eval.Classes, r.BandConf)
		}
		for _, p := range r.PNGs {
			fmt.Fprintf(ew, "wrote %s\n", p)
		}
	}
	return ew.err
}

// WriteSNRTable writes the accuracy of e per SNR bin, overall and per
// class ("-" where a bin has no record of the class), as an aligned table.
func WriteSNRTable(w io.Writer, e *Eval) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "SNR dB\trecords\taccuracy\t%s\t\n", strings.Join(e.Classes, "\t"))
	for _, b := range e.PerSNR {
		cells := make([]string, len(b.PerClass))
		for i, v := range b.PerClass {
			cells[i] = "-"
			if v >= 0 {
				cells[i] = fmt.Sprintf("%.2f", v)
			}
		}
		fmt.Fprintf(tw, "%g\t%d\t%.4f\t%s\t\n", b.SNRdB, b.Rows, b.Accuracy, strings.Join(cells, "\t"))
	}
	return tw.Flush()
}

// WriteConfusionTable writes the confusion matrix m (rows: true class,
// columns: predicted) of classes as an aligned table.
func WriteConfusionTable(w io.Writer, classes []string, m [][]int) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "\t%s\t\n", strings.Join(classes, "\t"))
	for t, row := range m {
		cells := make([]string, len(row))
		for p, v := range row {
			cells[p] = fmt.Sprint(v)
		}
		fmt.Fprintf(tw, "%s\t%s\t\n", classes[t], strings.Join(cells, "\t"))
	}
	return tw.Flush()
}

// errWriter keeps the first write error.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) Write(b []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	n, err := e.w.Write(b)
	e.err = err
	return n, err
}
