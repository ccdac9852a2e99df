package signal

import (
	"math"
	"math/cmplx"
	"testing"
)

// TestConstellations checks each linear modulation's alphabet: its size,
// a mean symbol energy of 1, distinct points, and its defining shape
// (points on the unit circle for PSK, on the real axis for ASK, an odd
// grid for QAM whose cross forms lack their corners).
func TestConstellations(t *testing.T) {
	for _, c := range []struct {
		m    Modulation
		n    int
		kind string
		side int // QAM: the grid's side; cross forms lack points beyond the cross
	}{
		{BPSK, 2, "psk", 0}, {QPSK, 4, "psk", 0}, {PSK8, 8, "psk", 0}, {PSK16, 16, "psk", 0}, {PSK32, 32, "psk", 0},
		{OOK, 2, "ook", 0}, {ASK4, 4, "ask", 0}, {ASK8, 8, "ask", 0},
		{QAM16, 16, "qam", 4}, {QAM32, 32, "qam", 6}, {QAM64, 64, "qam", 8}, {QAM128, 128, "qam", 12}, {QAM256, 256, "qam", 16},
	} {
		pts := constellation(c.m)
		if len(pts) != c.n {
			t.Errorf("%s: %d points, want %d", c.m, len(pts), c.n)
			continue
		}
		var e float64
		seen := map[complex128]bool{}
		for _, p := range pts {
			e += real(p)*real(p) + imag(p)*imag(p)
			seen[complex(math.Round(real(p)*1e9), math.Round(imag(p)*1e9))] = true
		}
		if math.Abs(e/float64(c.n)-1) > 1e-12 || len(seen) != c.n {
			t.Errorf("%s: mean energy %v, %d distinct points of %d", c.m, e/float64(c.n), len(seen), c.n)
		}
		switch c.kind {
		case "psk":
			for _, p := range pts {
				if math.Abs(cmplx.Abs(p)-1) > 1e-12 {
					t.Errorf("%s: point %v off the unit circle", c.m, p)
				}
			}
		case "ask":
			for _, p := range pts {
				if imag(p) != 0 {
					t.Errorf("%s: point %v off the real axis", c.m, p)
				}
			}
		case "ook":
			if pts[0] != 0 || pts[1] != complex(math.Sqrt2, 0) {
				t.Errorf("ook: points %v, want 0 and √2", pts)
			}
		case "qam":
			// Undo the scaling: the smallest |coordinate| is 1 on the grid.
			unit := math.Inf(1)
			for _, p := range pts {
				unit = min(unit, math.Abs(real(p)))
			}
			corner := map[int]int{6: 1, 12: 2}[c.side]
			for _, p := range pts {
				i, q := real(p)/unit, imag(p)/unit
				if math.Abs(i-math.Round(i)) > 1e-9 || int(math.Round(math.Abs(i)))%2 != 1 || math.Abs(i) > float64(c.side-1)+1e-9 {
					t.Errorf("%s: coordinate %v is not an odd grid value", c.m, i)
				}
				edge := float64(c.side - 1 - 2*corner)
				if corner > 0 && math.Abs(i) > edge+1e-9 && math.Abs(q) > edge+1e-9 {
					t.Errorf("%s: point (%v, %v) lies in a removed corner", c.m, i, q)
				}
			}
		}
	}
}
