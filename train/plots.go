package train

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"

	"github.com/gotrain/gotrain/internal/pngplot"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// PlotSeries is one PNG plot of a metric against the optimizer step: a
// point per logged step (a metrics line every Config.LogEvery steps, the
// first step of a run and the last), joined by lines.
type PlotSeries struct {
	// File is the PNG file name, e.g. "loss.png".
	File string
	// Key is the metrics-log field plotted, e.g. "loss".
	Key string
	// Title and YLabel label the plot.
	Title, YLabel string
	// Also are fields drawn as further lines in the same plot, when the
	// log has them (the evaluation's val_loss beside the loss); a plot
	// with several lines has a legend.
	Also []string
	// Lo and Hi, when Lo < Hi, bound the quantity (0 and 1 for an
	// accuracy): the axis stays within them (pngplot.Within).
	Lo, Hi float64
}

// DefaultPlots are the plots Run writes to Config.PlotsDir. A plot whose
// metrics never appear in the log (accuracy when the model reports none,
// GPU utilisation without nvidia-smi) is not written.
var DefaultPlots = []PlotSeries{
	{File: "loss.png", Key: "loss", Title: "Loss", YLabel: "loss", Also: []string{"val_loss"}},
	{File: "accuracy.png", Key: "accuracy", Title: "Accuracy", YLabel: "accuracy", Also: []string{"val_accuracy"}, Lo: 0, Hi: 1},
	{File: "throughput.png", Key: "samples_per_s", Title: "Throughput", YLabel: "examples/s"},
	{File: "learning_rate.png", Key: "lr", Title: "Learning rate", YLabel: "learning rate"},
	{File: "gpu_utilization.png", Key: "gpu_util_percent", Title: "GPU utilisation", YLabel: "%"},
}

// ReadMetricsLog reads a JSON-lines metrics log (see MetricsLog).
func ReadMetricsLog(path string) ([]map[string]any, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("train: reading metrics log: %w", err)
	}
	defer f.Close()
	var recs []map[string]any
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64*1024), 16<<20)
	for line := 1; sc.Scan(); line++ {
		if len(sc.Bytes()) == 0 {
			continue
		}
		var rec map[string]any
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			return nil, fmt.Errorf("train: metrics log %s line %d: %w", path, line, err)
		}
		recs = append(recs, rec)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("train: reading metrics log %s: %w", path, err)
	}
	return recs, nil
}

// number returns rec[key] as a finite float64.
func number(rec map[string]any, key string) (float64, bool) {
	var v float64
	switch x := rec[key].(type) {
	case float64:
		v = x
	case float32:
		v = float64(x)
	case int:
		v = float64(x)
	case int64:
		v = float64(x)
	default:
		return 0, false
	}
	return v, !math.IsNaN(v) && !math.IsInf(v, 0)
}

// PlotMetrics writes one PNG per series in plots (DefaultPlots if nil) to
// dir, plotting each record's series value against its "step". Records
// with an "event" field (skipped steps) and non-finite values are left
// out. It returns the files written; a series with no point writes none.
func PlotMetrics(recs []map[string]any, dir string, plots []PlotSeries) ([]string, error) {
	if plots == nil {
		plots = DefaultPlots
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("train: plots: %w", err)
	}
	var written []string
	for _, ps := range plots {
		p, err := metricPlot(recs, ps)
		if err != nil {
			return written, err
		}
		if p == nil {
			continue
		}
		path := filepath.Join(dir, ps.File)
		if err := pngplot.Save(path, [][]*plot.Plot{{p}}, draw.Tiles{}, 6*vg.Inch, 4*vg.Inch); err != nil {
			return written, fmt.Errorf("train: writing plot %s: %w", path, err)
		}
		written = append(written, path)
	}
	return written, nil
}

// metricSeries is the points (step, value) of the field key in recs, in
// their order: one per record that has a finite value, records of events
// (skipped steps) left out.
func metricSeries(recs []map[string]any, key string) plotter.XYs {
	var xys plotter.XYs
	for _, rec := range recs {
		if _, ok := rec["event"]; ok {
			continue
		}
		step, ok1 := number(rec, "step")
		v, ok2 := number(rec, key)
		if ok1 && ok2 {
			xys = append(xys, plotter.XY{X: step, Y: v})
		}
	}
	return xys
}

// metricPlot is the plot of ps for recs, nil when none of its fields has
// a point.
func metricPlot(recs []map[string]any, ps PlotSeries) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = ps.Title
	p.X.Label.Text = "step"
	p.Y.Label.Text = ps.YLabel
	p.Add(plotter.NewGrid())
	lines := 0
	for i, key := range append([]string{ps.Key}, ps.Also...) {
		xys := metricSeries(recs, key)
		if len(xys) == 0 {
			continue
		}
		line, points, err := plotter.NewLinePoints(xys)
		if err != nil {
			return nil, fmt.Errorf("train: plot %s: %w", ps.File, err)
		}
		line.Color, points.Color = plotutil.Color(i), plotutil.Color(i)
		points.Shape = plotutil.Shape(i)
		points.Radius = vg.Points(1.5)
		p.Add(line, points)
		p.Legend.Add(key, line, points)
		lines++
	}
	if lines == 0 {
		return nil, nil
	}
	if lines < 2 {
		p.Legend = plot.NewLegend() // one line: the title says what it is
	}
	p.Legend.Top = true
	if ps.Lo < ps.Hi {
		pngplot.Within(&p.Y, ps.Lo, ps.Hi)
	}
	return p, nil
}
