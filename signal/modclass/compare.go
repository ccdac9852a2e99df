package modclass

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"strings"
	"text/tabwriter"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"

	"github.com/gotrain/gotrain/internal/readlimit"
)

// Comparison is the accuracy per SNR of several classifiers evaluated on
// the same test data: Names[i] is the classifier of Evals[i].
type Comparison struct {
	Names []string
	Evals []*Eval
	// BandDB is the SNR range of the band row (the report's band).
	BandDB [2]float64
}

// maxReportBytes bounds a JSON report read by ReadReportEval.
const maxReportBytes = 64 << 20

// ReportEval is what [ReadReportEval] reads of a report.
type ReportEval struct {
	// Eval is the report's evaluation and Band its band.
	Eval *Eval
	Band [2]float64
	// Classifier is the report's "classifier" ("resnet"), or "forest" for
	// a report with trees.
	Classifier string
}

// ReadReportEval reads the evaluation ("eval") of a JSON report written
// by `gotrain signal classify train/eval --json` (any classifier's), its
// band and its classifier. The file may hold at most 64 MiB.
func ReadReportEval(path string) (*ReportEval, error) {
	b, err := readlimit.ReadFile(path, maxReportBytes, "a report's size")
	if err != nil {
		return nil, fmt.Errorf("modclass: %w", err)
	}
	var r struct {
		Eval       *Eval      `json:"eval"`
		Band       [2]float64 `json:"band_db"`
		Classifier string     `json:"classifier"`
		Trees      int        `json:"trees"`
	}
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("modclass: %s: %w", path, err)
	}
	if r.Eval == nil || len(r.Eval.PerSNR) == 0 {
		return nil, fmt.Errorf("modclass: %s: no evaluation per SNR (a report of classify train with test data, or of classify eval)", path)
	}
	for _, s := range r.Eval.PerSNR {
		if s.Rows < 1 || s.Correct < 0 || s.Correct > s.Rows || !finite(s.SNRdB) {
			return nil, fmt.Errorf("modclass: %s: SNR bin %v: %d of %d records right is not a count", path, s.SNRdB, s.Correct, s.Rows)
		}
	}
	if r.Classifier == "" && r.Trees > 0 {
		r.Classifier = "forest"
	}
	return &ReportEval{Eval: r.Eval, Band: r.Band, Classifier: r.Classifier}, nil
}

// Validate checks that c compares at least one evaluation, with a name
// each.
func (c *Comparison) Validate() error {
	switch {
	case len(c.Evals) == 0:
		return errors.New("modclass: nothing to compare")
	case len(c.Names) != len(c.Evals):
		return fmt.Errorf("modclass: %d names for %d evaluations", len(c.Names), len(c.Evals))
	}
	for i, e := range c.Evals {
		if e == nil || len(e.PerSNR) == 0 {
			return fmt.Errorf("modclass: %s: no evaluation per SNR", c.Names[i])
		}
	}
	return nil
}

// snrs returns the union of the evaluations' SNR bins, lowest first.
func (c *Comparison) snrs() []float64 {
	seen := map[float64]bool{}
	var out []float64
	for _, e := range c.Evals {
		for _, b := range e.PerSNR {
			if !seen[b.SNRdB] {
				seen[b.SNRdB] = true
				out = append(out, b.SNRdB)
			}
		}
	}
	sort.Float64s(out)
	return out
}

// bin returns e's bin at snr, or nil.
func bin(e *Eval, snr float64) *SNRBin {
	for i := range e.PerSNR {
		if e.PerSNR[i].SNRdB == snr {
			return &e.PerSNR[i]
		}
	}
	return nil
}

// pooled returns the records and right predictions of e's bins in [lo, hi].
func pooled(e *Eval, lo, hi float64) (rows, correct int) {
	for _, b := range e.PerSNR {
		if b.SNRdB >= lo-1e-9 && b.SNRdB <= hi+1e-9 {
			rows, correct = rows+b.Rows, correct+b.Correct
		}
	}
	return rows, correct
}

// WriteTable writes the accuracy of every classifier per SNR bin (in %,
// "-" where it has no record), then over the band and over every SNR, as
// an aligned text table, or with markdown as a Markdown table. The records
// column is the first evaluation's.
func (c *Comparison) WriteTable(w io.Writer, markdown bool) error {
	if err := c.Validate(); err != nil {
		return err
	}
	rows := [][]string{append([]string{"SNR (dB)", "records"}, c.Names...)}
	pct := func(correct, n int) string {
		if n == 0 {
			return "-"
		}
		return fmt.Sprintf("%.1f %%", 100*float64(correct)/float64(n))
	}
	for _, s := range c.snrs() {
		row := []string{fmt.Sprint(s), "-"}
		if b := bin(c.Evals[0], s); b != nil {
			row[1] = fmt.Sprint(b.Rows)
		}
		for _, e := range c.Evals {
			cell := "-"
			if b := bin(e, s); b != nil {
				cell = pct(b.Correct, b.Rows)
			}
			row = append(row, cell)
		}
		rows = append(rows, row)
	}
	lo, hi := c.BandDB[0], c.BandDB[1]
	for _, r := range [][2]float64{{lo, hi}, {math.Inf(-1), math.Inf(1)}} {
		label := fmt.Sprintf("%g to %g", r[0], r[1])
		if math.IsInf(r[0], 0) {
			label = "all"
		}
		n, _ := pooled(c.Evals[0], r[0], r[1])
		row := []string{label, fmt.Sprint(n)}
		for _, e := range c.Evals {
			n, k := pooled(e, r[0], r[1])
			row = append(row, pct(k, n))
		}
		rows = append(rows, row)
	}
	if markdown {
		var b strings.Builder
		for i, r := range rows {
			b.WriteString("| " + strings.Join(r, " | ") + " |\n")
			if i == 0 {
				b.WriteString("|" + strings.Repeat("---:|", len(r)) + "\n")
			}
		}
		_, err := io.WriteString(w, b.String())
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t\n", strings.Join(r, "\t"))
	}
	return tw.Flush()
}

// WritePNG draws every classifier's accuracy against the SNR, one line
// with points each, y from 0 to 1, as a PNG file.
func (c *Comparison) WritePNG(path, title string) error {
	if err := c.Validate(); err != nil {
		return err
	}
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = "SNR (dB, full band)"
	p.Y.Label.Text = "accuracy"
	p.Y.Min, p.Y.Max = 0, 1.02
	p.Add(plotter.NewGrid())
	p.Legend.Top = true
	p.Legend.Left = true
	for i, e := range c.Evals {
		var xys plotter.XYs
		for _, b := range e.PerSNR {
			xys = append(xys, plotter.XY{X: b.SNRdB, Y: float64(b.Correct) / float64(b.Rows)})
		}
		line, pts, err := plotter.NewLinePoints(xys)
		if err != nil {
			return fmt.Errorf("modclass: comparison plot: %w", err)
		}
		line.Color, pts.Color = plotutil.Color(i), plotutil.Color(i)
		line.Width = vg.Points(2)
		pts.Shape = plotutil.Shape(i)
		pts.Radius = vg.Points(3)
		p.Add(line, pts)
		p.Legend.Add(c.Names[i], line, pts)
	}
	return savePlot(path, p, 7*vg.Inch, 4.5*vg.Inch)
}
