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

// WritePlots writes to dir training_metrics.png (loss, validation
// accuracy and epoch time per epoch), expert_activations.png (each
// expert's share of the routing per epoch) and
// expert_device_distribution.png (active experts per device at the end).
func WritePlots(dir string, history []EpochRecord, active []bool, devices int) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("moe: plots: %w", err)
	}
	var files []string
	for _, p := range []struct {
		name string
		fn   func(string) error
	}{
		{PlotTrainingMetrics, func(path string) error { return plotTraining(path, history) }},
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

func plotTraining(path string, history []EpochRecord) error {
	panels := []struct {
		title, ylabel string
		lines         []any
	}{
		{"Loss", "cross-entropy", []any{
			"train (incl. balancing loss)", series(history, func(r EpochRecord) float64 { return r.TrainLoss }),
			"validation", series(history, func(r EpochRecord) float64 { return r.ValLoss })}},
		{"Validation accuracy", "accuracy", []any{
			"validation", series(history, func(r EpochRecord) float64 { return r.ValAccuracy })}},
		{"Epoch time", "seconds", []any{
			"epoch", series(history, func(r EpochRecord) float64 { return r.Seconds })}},
	}
	rows := make([][]*plot.Plot, len(panels))
	for i, pn := range panels {
		p := plot.New()
		p.Title.Text = pn.title
		p.X.Label.Text = "epoch"
		p.Y.Label.Text = pn.ylabel
		p.Add(plotter.NewGrid())
		if err := addLines(p, pn.lines...); err != nil {
			return err
		}
		rows[i] = []*plot.Plot{p}
	}
	return pngplot.Save(path, rows, draw.Tiles{PadX: vg.Millimeter, PadY: vg.Millimeter, PadTop: vg.Millimeter,
		PadBottom: vg.Millimeter, PadLeft: vg.Millimeter, PadRight: vg.Millimeter}, 6*vg.Inch, 9*vg.Inch)
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
