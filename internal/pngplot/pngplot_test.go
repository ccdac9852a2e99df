package pngplot

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// linePlot returns a plot of ys against their index.
func linePlot(t *testing.T, ys ...float64) *plot.Plot {
	t.Helper()
	p := plot.New()
	xys := make(plotter.XYs, len(ys))
	for i, y := range ys {
		xys[i] = plotter.XY{X: float64(i + 1), Y: y}
	}
	l, err := plotter.NewLine(xys)
	if err != nil {
		t.Fatal(err)
	}
	p.Add(l)
	return p
}

// saveWithin saves p and fails the test if drawing does not end in 20 s.
func saveWithin(t *testing.T, p *plot.Plot, path string) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- Save(path, [][]*plot.Plot{{p}}, draw.Tiles{}, 3*vg.Inch, 2*vg.Inch) }()
	select {
	case err := <-done:
		return err
	case <-time.After(20 * time.Second):
		t.Fatal("drawing did not end")
		return nil
	}
}

// TestSaveDrawsExtremeValues checks that series a diverging run can log —
// one point, equal values, values of 1e16 and up to ±1e300, tiny ones —
// are drawn (gonum alone panics with "illegal range" on a flat range of
// large values).
func TestSaveDrawsExtremeValues(t *testing.T) {
	for _, ys := range [][]float64{
		{-1e300}, {1e300}, {1e16}, {1e17, 1e17}, {-1e300, -1e300}, {1e-300}, {0}, {1, 2, 3}, {-1e300, 1e300},
	} {
		path := filepath.Join(t.TempDir(), "p.png")
		if err := saveWithin(t, linePlot(t, ys...), path); err != nil {
			t.Errorf("%v: %v", ys, err)
			continue
		}
		b, err := os.ReadFile(path)
		if err != nil || !bytes.HasPrefix(b, []byte("\x89PNG")) {
			t.Errorf("%v: not a PNG: %v", ys, err)
		}
	}
}

// TestSaveRefusesBeyondRange checks that values whose range overflows
// (gonum's tick search never ends on them) are an error, promptly, and
// write nothing.
func TestSaveRefusesBeyondRange(t *testing.T) {
	path := filepath.Join(t.TempDir(), "p.png")
	err := saveWithin(t, linePlot(t, -1.7e308, 1.7e308), path)
	if err == nil || !strings.Contains(err.Error(), "plottable range") {
		t.Errorf("err = %v; want a refusal", err)
	}
	if _, serr := os.Stat(path); serr == nil {
		t.Error("a file was written")
	}
}

// panicky is a plotter whose drawing panics.
type panicky struct{}

func (panicky) Plot(draw.Canvas, *plot.Plot) { panic("boom") }

// TestSaveReturnsDrawingPanics checks that a panic while drawing is an
// error naming the file, and that nothing is written.
func TestSaveReturnsDrawingPanics(t *testing.T) {
	p := linePlot(t, 1, 2)
	p.Add(panicky{})
	path := filepath.Join(t.TempDir(), "p.png")
	if err := saveWithin(t, p, path); err == nil || !strings.Contains(err.Error(), "boom") || !strings.Contains(err.Error(), path) {
		t.Errorf("err = %v; want the panic as an error naming the file", err)
	}
	if _, serr := os.Stat(path); serr == nil {
		t.Error("a file was written")
	}
}

// TestWithin checks the ranges Within gives a bounded quantity: inside
// [0, 1] for accuracies, flat ones widened without crossing a bound, and
// values beyond the bounds still shown; then FixAxes keeps them.
func TestWithin(t *testing.T) {
	for _, c := range []struct {
		ys     []float64
		lo, hi float64
	}{
		{[]float64{0.8}, 0.75, 0.85}, // one point: was -0.2 to 1.8
		{[]float64{1, 1}, 0.95, 1},
		{[]float64{0}, 0, 0.05},
		{[]float64{0.5, 0.9, 0.7}, 0.5, 0.9},
		{[]float64{1.2}, 1.15, 1.2}, // not an accuracy: the value stays visible
		{[]float64{-0.1, 0.5}, -0.1, 0.5},
	} {
		p := linePlot(t, c.ys...)
		Within(&p.Y, 0, 1)
		if err := FixAxes(p); err != nil {
			t.Fatal(err)
		}
		if d := max(abs(p.Y.Min-c.lo), abs(p.Y.Max-c.hi)); d > 1e-12 {
			t.Errorf("%v: axis %g to %g, want %g to %g", c.ys, p.Y.Min, p.Y.Max, c.lo, c.hi)
		}
	}
	path := filepath.Join(t.TempDir(), "acc.png")
	p := linePlot(t, 0.8)
	Within(&p.Y, 0, 1)
	if err := saveWithin(t, p, path); err != nil {
		t.Fatal(err)
	}
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}
