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
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// PlotSeries is one PNG plot of a metric against the optimizer step.
type PlotSeries struct {
	// File is the PNG file name, e.g. "loss.png".
	File string
	// Key is the metrics-log field plotted, e.g. "loss".
	Key string
	// Title and YLabel label the plot.
	Title, YLabel string
}

// DefaultPlots are the plots Run writes to Config.PlotsDir. A plot whose
// metric never appears in the log (accuracy when the model reports none,
// GPU utilisation without nvidia-smi) is not written.
var DefaultPlots = []PlotSeries{
	{File: "loss.png", Key: "loss", Title: "Training loss", YLabel: "loss"},
	{File: "accuracy.png", Key: "accuracy", Title: "Accuracy", YLabel: "accuracy"},
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
		var xys plotter.XYs
		for _, rec := range recs {
			if _, ok := rec["event"]; ok {
				continue
			}
			step, ok1 := number(rec, "step")
			v, ok2 := number(rec, ps.Key)
			if ok1 && ok2 {
				xys = append(xys, plotter.XY{X: step, Y: v})
			}
		}
		if len(xys) == 0 {
			continue
		}
		p := plot.New()
		p.Title.Text = ps.Title
		p.X.Label.Text = "step"
		p.Y.Label.Text = ps.YLabel
		p.Add(plotter.NewGrid())
		line, points, err := plotter.NewLinePoints(xys)
		if err != nil {
			return written, fmt.Errorf("train: plot %s: %w", ps.File, err)
		}
		points.Radius = vg.Points(1.5)
		p.Add(line, points)
		path := filepath.Join(dir, ps.File)
		if err := pngplot.Save(path, [][]*plot.Plot{{p}}, draw.Tiles{}, 6*vg.Inch, 4*vg.Inch); err != nil {
			return written, fmt.Errorf("train: writing plot %s: %w", path, err)
		}
		written = append(written, path)
	}
	return written, nil
}
