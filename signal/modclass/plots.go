package modclass

import (
	"fmt"
	"image/color"

	"github.com/gotrain/gotrain/internal/pngplot"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// confusionGrid is the row-normalised confusion matrix as a heat-map grid:
// column c is the predicted class, row r the true class drawn from the top
// (row 0 of the grid is the last class).
type confusionGrid struct {
	frac [][]float64 // [true][pred]
}

func (g confusionGrid) Dims() (c, r int)   { return len(g.frac), len(g.frac) }
func (g confusionGrid) Z(c, r int) float64 { return g.frac[len(g.frac)-1-r][c] }
func (g confusionGrid) X(c int) float64    { return float64(c) }
func (g confusionGrid) Y(r int) float64    { return float64(r) }

// whiteBlue is a palette from white to dark blue.
type whiteBlue int

func (n whiteBlue) Colors() []color.Color {
	cs := make([]color.Color, int(n))
	for i := range cs {
		t := float64(i) / float64(int(n)-1)
		cs[i] = color.RGBA{R: uint8(255 - t*(255-8)), G: uint8(255 - t*(255-48)), B: uint8(255 - t*(255-107)), A: 255}
	}
	return cs
}

// WriteConfusionPNG draws e's confusion matrix, each row normalised to the
// true class's records, with the percentage in each cell, as a PNG file.
func WriteConfusionPNG(path string, e *Eval, title string) error {
	k := len(e.Classes)
	if k == 0 {
		return fmt.Errorf("modclass: no classes to plot")
	}
	frac := make([][]float64, k)
	for t := range frac {
		frac[t] = make([]float64, k)
		n := 0
		for _, v := range e.Confusion[t] {
			n += v
		}
		for p, v := range e.Confusion[t] {
			if n > 0 {
				frac[t][p] = float64(v) / float64(n)
			}
		}
	}
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = "predicted"
	p.Y.Label.Text = "true"
	hm := plotter.NewHeatMap(confusionGrid{frac}, whiteBlue(64))
	hm.Min, hm.Max = 0, 1
	p.Add(hm)
	var xys plotter.XYs
	var labels []string
	for t := range k {
		for c := range k {
			xys = append(xys, plotter.XY{X: float64(c), Y: float64(k - 1 - t)})
			labels = append(labels, fmt.Sprintf("%.0f", 100*frac[t][c]))
		}
	}
	lab, err := plotter.NewLabels(plotter.XYLabels{XYs: xys, Labels: labels})
	if err != nil {
		return fmt.Errorf("modclass: confusion plot: %w", err)
	}
	for i := range lab.TextStyle {
		t, c := i/k, i%k
		lab.TextStyle[i].XAlign = text.XCenter
		lab.TextStyle[i].YAlign = text.YCenter
		if frac[t][c] > 0.55 {
			lab.TextStyle[i].Color = color.White
		}
		if frac[t][c] == 0 {
			lab.TextStyle[i].Color = color.Gray{Y: 170}
		}
	}
	p.Add(lab)
	var xt, yt []plot.Tick
	for i, c := range e.Classes {
		xt = append(xt, plot.Tick{Value: float64(i), Label: c})
		yt = append(yt, plot.Tick{Value: float64(k - 1 - i), Label: c})
	}
	p.X.Tick.Marker = plot.ConstantTicks(xt)
	p.Y.Tick.Marker = plot.ConstantTicks(yt)
	p.X.Min, p.X.Max = -0.5, float64(k)-0.5
	p.Y.Min, p.Y.Max = -0.5, float64(k)-0.5
	return savePlot(path, p, 7*vg.Inch, 6*vg.Inch)
}

// WriteSNRPNG draws the accuracy against the SNR: all classes (thick) and
// each class, as a PNG file.
func WriteSNRPNG(path string, e *Eval, title string) error {
	if len(e.PerSNR) == 0 {
		return fmt.Errorf("modclass: no SNR bins to plot")
	}
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = "SNR (dB, full band)"
	p.Y.Label.Text = "accuracy"
	p.Y.Min, p.Y.Max = 0, 1.02
	p.Add(plotter.NewGrid())
	p.Legend.Top = false
	p.Legend.Left = false
	for c, name := range e.Classes {
		var xys plotter.XYs
		for _, b := range e.PerSNR {
			if b.PerClass[c] >= 0 {
				xys = append(xys, plotter.XY{X: b.SNRdB, Y: b.PerClass[c]})
			}
		}
		if len(xys) == 0 {
			continue
		}
		l, err := plotter.NewLine(xys)
		if err != nil {
			return fmt.Errorf("modclass: SNR plot: %w", err)
		}
		l.Color = plotutil.Color(c)
		l.Dashes = plotutil.Dashes(c / 7)
		l.Width = vg.Points(1)
		p.Add(l)
		p.Legend.Add(name, l)
	}
	var xys plotter.XYs
	for _, b := range e.PerSNR {
		xys = append(xys, plotter.XY{X: b.SNRdB, Y: b.Accuracy})
	}
	line, pts, err := plotter.NewLinePoints(xys)
	if err != nil {
		return fmt.Errorf("modclass: SNR plot: %w", err)
	}
	line.Width = vg.Points(3)
	pts.Radius = vg.Points(2.5)
	p.Add(line, pts)
	p.Legend.Add("all", line, pts)
	return savePlot(path, p, 7*vg.Inch, 4.5*vg.Inch)
}

// savePlot writes p to path as a PNG image of w × h, with a small margin
// on the right and at the top (gonum/plot draws up to the canvas edge
// there).
func savePlot(path string, p *plot.Plot, w, h vg.Length) error {
	if err := pngplot.Save(path, [][]*plot.Plot{{p}}, draw.Tiles{PadRight: vg.Points(12), PadTop: vg.Points(4)}, w, h); err != nil {
		return fmt.Errorf("modclass: %w", err)
	}
	return nil
}
