package moe

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"

	"github.com/gotrain/gotrain/internal/pngplot"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Plot files WritePlots writes.
const (
	PlotTrainingMetrics    = "training_metrics.png"
	PlotExpertActivations  = "expert_activations.png"
	PlotDeviceDistribution = "expert_device_distribution.png"
)

// WritePlots writes the plots of a run without its metrics lines:
// WriteRunPlots with no steps (training_metrics.png then draws the
// epochs' figures alone).
func WritePlots(dir string, history []EpochRecord, active []bool, devices int) ([]string, error) {
	return WriteRunPlots(dir, history, nil, active, devices)
}

// WriteRunPlots writes to dir training_metrics.png (against the optimizer
// step: the training loss, the batch accuracy and the throughput of each
// logged step in steps, the harness's metrics lines, with the validation
// loss and accuracy of each epoch at its last step), expert_activations.png
// (each expert's share of the routing per epoch) and
// expert_device_distribution.png (active experts per device at the end).
// The accuracy axis stays within [0, 1].
func WriteRunPlots(dir string, history []EpochRecord, steps []map[string]any, active []bool, devices int) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("moe: plots: %w", err)
	}
	var files []string
	for _, p := range []struct {
		name string
		fn   func(string) error
	}{
		{PlotTrainingMetrics, func(path string) error { return plotTraining(path, history, steps) }},
		{PlotExpertActivations, func(path string) error { return plotActivations(path, history) }},
		{PlotDeviceDistribution, func(path string) error { return plotDevices(path, active, devices) }},
	} {
		path := filepath.Join(dir, p.name)
		if err := p.fn(path); err != nil {
			return files, fmt.Errorf("moe: plot %s: %w", path, err)
		}
		files = append(files, path)
	}
	return files, nil
}

// series returns the epoch-indexed points of f, leaving out non-finite values.
func series(history []EpochRecord, f func(EpochRecord) float64) plotter.XYs {
	var xys plotter.XYs
	for _, r := range history {
		if v := f(r); !math.IsNaN(v) && !math.IsInf(v, 0) {
			xys = append(xys, plotter.XY{X: float64(r.Epoch), Y: v})
		}
	}
	return xys
}

// atSteps returns the points of f at each epoch's last step.
func atSteps(history []EpochRecord, f func(EpochRecord) float64) plotter.XYs {
	var xys plotter.XYs
	for _, r := range history {
		if v := f(r); !math.IsNaN(v) && !math.IsInf(v, 0) {
			xys = append(xys, plotter.XY{X: float64(r.Step), Y: v})
		}
	}
	return xys
}

// stepSeries returns the points (step, key) of the metrics lines recs
// that have a finite value (events left out).
func stepSeries(recs []map[string]any, key string) plotter.XYs {
	var xys plotter.XYs
	for _, rec := range recs {
		if _, ok := rec["event"]; ok {
			continue
		}
		step, ok1 := finite(rec["step"])
		v, ok2 := finite(rec[key])
		if ok1 && ok2 {
			xys = append(xys, plotter.XY{X: step, Y: v})
		}
	}
	return xys
}

// finite returns a metrics line's value as a finite float64: a number
// read back from the log (float64) or one of the harness's own records
// (int64 steps, float64 values).
func finite(v any) (float64, bool) {
	var x float64
	switch n := v.(type) {
	case float64:
		x = n
	case int64:
		x = float64(n)
	case int:
		x = float64(n)
	default:
		return 0, false
	}
	return x, !math.IsNaN(x) && !math.IsInf(x, 0)
}

// trainingPanels are the panels of training_metrics.png: title, y label,
// bounds of the values (lo < hi) and lines (name, points).
type trainingPanel struct {
	title, ylabel string
	lo, hi        float64
	lines         []any
}

func trainingPanels(history []EpochRecord, steps []map[string]any) []trainingPanel {
	train := stepSeries(steps, "loss")
	if len(train) == 0 { // no metrics lines: the epochs' mean training loss
		train = atSteps(history, func(r EpochRecord) float64 { return r.TrainLoss })
	}
	third := trainingPanel{"Throughput", "examples/s", 0, 0, []any{"training", stepSeries(steps, "samples_per_s")}}
	if len(steps) == 0 {
		third = trainingPanel{"Epoch time", "seconds", 0, 0, []any{"epoch", atSteps(history, func(r EpochRecord) float64 { return r.Seconds })}}
	}
	return []trainingPanel{
		{"Loss", "cross-entropy", 0, 0, []any{
			"train (incl. balancing loss)", train,
			"validation", atSteps(history, func(r EpochRecord) float64 { return r.ValLoss })}},
		{"Accuracy", "accuracy", 0, 1, []any{
			"train (batch)", stepSeries(steps, "accuracy"),
			"validation", atSteps(history, func(r EpochRecord) float64 { return r.ValAccuracy })}},
		third,
	}
}

func plotTraining(path string, history []EpochRecord, steps []map[string]any) error {
	rows, err := trainingPlots(history, steps)
	if err != nil {
		return err
	}
	return pngplot.Save(path, rows, draw.Tiles{PadX: vg.Millimeter, PadY: vg.Millimeter, PadTop: vg.Millimeter,
		PadBottom: vg.Millimeter, PadLeft: vg.Millimeter, PadRight: vg.Millimeter}, 6*vg.Inch, 9*vg.Inch)
}

// trainingPlots are the panels of training_metrics.png, one per row.
func trainingPlots(history []EpochRecord, steps []map[string]any) ([][]*plot.Plot, error) {
	panels := trainingPanels(history, steps)
	rows := make([][]*plot.Plot, len(panels))
	for i, pn := range panels {
		p := plot.New()
		p.Title.Text = pn.title
		p.X.Label.Text = "step"
		p.Y.Label.Text = pn.ylabel
		p.Add(plotter.NewGrid())
		if err := addLines(p, pn.lines...); err != nil {
			return nil, err
		}
		if p.X.Min > p.X.Max { // no point at all: an empty panel
			p.X.Min, p.X.Max, p.Y.Min, p.Y.Max = 0, 1, 0, 1
		}
		if pn.lo < pn.hi {
			pngplot.Within(&p.Y, pn.lo, pn.hi)
		}
		rows[i] = []*plot.Plot{p}
	}
	return rows, nil
}

// addLines adds name, XYs pairs that have points.
func addLines(p *plot.Plot, lines ...any) error {
	var args []any
	for i := 0; i+1 < len(lines); i += 2 {
		if xys := lines[i+1].(plotter.XYs); len(xys) > 0 {
			args = append(args, lines[i], xys)
		}
	}
	if len(args) == 0 {
		return nil
	}
	return plotutil.AddLinePoints(p, args...)
}

func plotActivations(path string, history []EpochRecord) error {
	p := plot.New()
	p.Title.Text = "Routing share per expert"
	p.X.Label.Text = "epoch"
	p.Y.Label.Text = "share of routing assignments"
	p.Add(plotter.NewGrid())
	slots := 0
	for _, r := range history {
		slots = max(slots, len(r.Load))
	}
	var lines []any
	for s := range slots {
		used := false
		xys := series(history, func(r EpochRecord) float64 {
			if s < len(r.Load) && r.Load[s] > 0 {
				used = true
				return r.Load[s]
			}
			return 0
		})
		if used {
			lines = append(lines, "expert "+strconv.Itoa(s), xys)
		}
	}
	if err := addLines(p, lines...); err != nil {
		return err
	}
	p.Legend.Top = true
	return pngplot.Save(path, [][]*plot.Plot{{p}}, draw.Tiles{}, 6*vg.Inch, 4*vg.Inch)
}

func plotDevices(path string, active []bool, devices int) error {
	counts := Placement(active, devices)
	vals := make(plotter.Values, len(counts))
	names := make([]string, len(counts))
	for i, c := range counts {
		vals[i] = float64(c)
		names[i] = "device " + strconv.Itoa(i)
	}
	p := plot.New()
	p.Title.Text = "Experts per device"
	p.Y.Label.Text = "active experts"
	bars, err := plotter.NewBarChart(vals, vg.Points(30))
	if err != nil {
		return err
	}
	p.Add(bars)
	p.NominalX(names...)
	p.Y.Min = 0
	return pngplot.Save(path, [][]*plot.Plot{{p}}, draw.Tiles{}, 4*vg.Inch, 3*vg.Inch)
}
