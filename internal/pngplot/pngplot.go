// Package pngplot draws gonum plots into PNG files for gotrain's reports,
// so that no value a run can produce makes drawing fail: the axes of each
// plot are made drawable first (FixAxes), a panic of the drawing code is
// returned as an error, and the file is written through internal/atomicfile.
package pngplot

import (
	"fmt"
	"io"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

	"github.com/gotrain/gotrain/internal/atomicfile"
)

// maxMagnitude bounds the axis values drawn: beyond it the width of a
// range can overflow, and gonum's tick search does not end.
const maxMagnitude = 1e300

// FixAxes makes the ranges of p's axes drawable, after its data were
// added: a range with a bound that is not finite, or whose values reach
// beyond ±1e300, is refused with an error; a flat range (one point, equal
// values, or a width lost to rounding as with values of 1e16 and more)
// is widened around its values by a thousandth of their magnitude (at
// least 1), which gonum's tick marker can label.
func FixAxes(p *plot.Plot) error {
	for _, a := range []struct {
		name string
		ax   *plot.Axis
	}{{"x", &p.X}, {"y", &p.Y}} {
		lo, hi := a.ax.Min, a.ax.Max
		if math.IsNaN(lo) || math.IsNaN(hi) || math.Abs(lo) > maxMagnitude || math.Abs(hi) > maxMagnitude {
			return fmt.Errorf("the %s values (%g to %g) are beyond the plottable range ±%g", a.name, lo, hi, maxMagnitude)
		}
		if lo > hi {
			lo, hi = hi, lo
		}
		mag := max(math.Abs(lo), math.Abs(hi))
		if hi-lo <= mag*1e-9 {
			pad := max(mag*1e-3, 1)
			a.ax.Min, a.ax.Max = lo-pad, hi+pad
		}
	}
	return nil
}

// Within sets the range of ax, after the data were added, for a quantity
// that lies in [lo, hi] (an accuracy or a share: 0 and 1): the data's
// range, widened when it is flat (one point, equal values) by a twentieth
// of hi - lo on each side, and then cut to [lo, hi]. Values outside
// [lo, hi] stay visible: the range then reaches them. A flat range is so
// never widened past the bounds by FixAxes (an accuracy of 0.8 alone
// drew an axis from -0.2 to 1.8 before).
func Within(ax *plot.Axis, lo, hi float64) {
	dmin, dmax := ax.Min, ax.Max
	if math.IsNaN(dmin) || math.IsNaN(dmax) || math.IsInf(dmin, 0) || math.IsInf(dmax, 0) || !(lo < hi) {
		return // FixAxes reports what cannot be drawn
	}
	if dmin > dmax {
		dmin, dmax = dmax, dmin
	}
	if dmax-dmin <= (hi-lo)*1e-9 {
		pad := (hi - lo) / 20
		dmin, dmax = dmin-pad, dmax+pad
	}
	ax.Min = max(dmin, min(lo, ax.Min))
	ax.Max = min(dmax, max(hi, ax.Max))
}

// Save draws the plots of rows, aligned in a grid of tiles padded as t
// says (its Rows and Cols are set from rows; a single plot is
// [][]*plot.Plot{{p}} with a zero t), on a w × h canvas, and writes the
// PNG image to path through internal/atomicfile (atomically; a FIFO or a
// character device is written through). Each plot's axes go through
// FixAxes first.
func Save(path string, rows [][]*plot.Plot, t draw.Tiles, w, h vg.Length) (err error) {
	if len(rows) == 0 || len(rows[0]) == 0 {
		return fmt.Errorf("plot %s: nothing to draw", path)
	}
	for _, row := range rows {
		for _, p := range row {
			if p == nil {
				continue // an empty tile
			}
			if err := FixAxes(p); err != nil {
				return fmt.Errorf("plot %s: %w", path, err)
			}
		}
	}
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("plot %s: drawing failed: %v", path, r)
		}
	}()
	img := vgimg.New(w, h)
	dc := draw.New(img)
	t.Rows, t.Cols = len(rows), len(rows[0])
	canvases := plot.Align(rows, t, dc)
	for i := range rows {
		for j, p := range rows[i] {
			if p != nil {
				p.Draw(canvases[i][j])
			}
		}
	}
	return atomicfile.Write(path, func(w io.Writer) error {
		_, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(w)
		return err
	})
}
