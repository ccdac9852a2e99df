package signal

import (
	"math"
	"math/cmplx"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// radioML2018Names are the 24 RadioML 2018.01A classes as `signal synth
// --mod` spells them (issue #23), in the data set's order.
var radioML2018Names = []string{"ook", "4ask", "8ask", "bpsk", "qpsk", "8psk", "16psk", "32psk",
	"16apsk", "32apsk", "64apsk", "128apsk", "16qam", "32qam", "64qam", "128qam", "256qam",
	"am-ssb-wc", "am-ssb-sc", "am-dsb-wc", "am-dsb-sc", "fm", "gmsk", "oqpsk"}

// TestRadioML2018Spellings checks that every one of the 24 names parses to
// itself, is listed by ModulationNames, and synthesizes a file through
// SynthFileSpec (the library call behind `signal synth`) with the
// command's default options.
func TestRadioML2018Spellings(t *testing.T) {
	if len(radioML2018Names) != 24 {
		t.Fatalf("%d names, want 24", len(radioML2018Names))
	}
	listed := map[string]bool{}
	for _, n := range strings.Split(ModulationNames(), ", ") {
		listed[n] = true
	}
	dir := t.TempDir()
	for _, name := range radioML2018Names {
		m, err := ParseModulation(name)
		if err != nil || string(m) != name {
			t.Errorf("%s: parsed as %q, %v", name, m, err)
			continue
		}
		if !listed[name] {
			t.Errorf("%s: not in ModulationNames()", name)
		}
		spec := SynthFileSpec{
			SynthSpec: SynthSpec{Mod: strings.ToUpper(name), Seconds: 0.01, Options: SynthOptions{
				SampleRate: 200000, SNRdB: 10, Seed: 1, RollOff: 0.35, SpanSymbols: 8, BT: 0.5,
				ModFreq: 1000, Deviation: 10000, Subcarriers: 64}},
			Out: filepath.Join(dir, name+".cf32"), Datatype: "cf32_le",
		}
		rep, err := spec.Synthesize()
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if rep.Samples != 2000 {
			t.Errorf("%s: %d samples, want 2000", name, rep.Samples)
		}
	}
}

// TestAPSKConstellations checks the DVB-S2/S2X APSK alphabets: the rings
// (points per ring, radius relative to the inner ring), unit mean energy,
// and the angles: phase + 2πk/n on each ring of 16, 32 and 64APSK, and
// for 128APSK the same number of points in each quadrant of each ring,
// mirrored about both axes, at the standard's first-quadrant angles.
func TestAPSKConstellations(t *testing.T) {
	for _, c := range []struct {
		m      Modulation
		n      []int
		gamma  []float64
		phase  []float64 // NaN: not evenly spaced
		source string
	}{
		{APSK16, []int{4, 12}, []float64{1, 2.85}, []float64{math.Pi / 4, math.Pi / 12}, "EN 302 307-1 16APSK 3/4"},
		{APSK32, []int{4, 12, 16}, []float64{1, 2.84, 5.27}, []float64{math.Pi / 4, math.Pi / 12, 0}, "EN 302 307-1 32APSK 3/4"},
		{APSK64, []int{8, 16, 20, 20}, []float64{1, 2.2, 3.6, 5.2},
			[]float64{math.Pi / 8, math.Pi / 16, math.Pi / 20, math.Pi / 20}, "EN 302 307-2 64APSK 4/5"},
		{APSK128, []int{16, 16, 16, 16, 16, 48}, []float64{1, 1.715, 2.118, 2.681, 2.75, 3.819},
			[]float64{math.NaN(), math.NaN(), math.NaN(), math.NaN(), math.NaN(), math.NaN()}, "EN 302 307-2 128APSK 135/180"},
	} {
		pts := constellation(c.m)
		total := 0
		for _, n := range c.n {
			total += n
		}
		if len(pts) != total {
			t.Errorf("%s: %d points, want %d", c.m, len(pts), total)
			continue
		}
		var e float64
		for _, p := range pts {
			e += real(p)*real(p) + imag(p)*imag(p)
		}
		if math.Abs(e/float64(total)-1) > 1e-12 {
			t.Errorf("%s: mean energy %v, want 1", c.m, e/float64(total))
		}
		// Group the points into rings by radius.
		sorted := append([]complex128(nil), pts...)
		sort.Slice(sorted, func(i, j int) bool { return cmplx.Abs(sorted[i]) < cmplx.Abs(sorted[j]) })
		var rings [][]complex128
		for i, p := range sorted {
			if i == 0 || cmplx.Abs(p)-cmplx.Abs(sorted[i-1]) > 1e-9 {
				rings = append(rings, nil)
			}
			rings[len(rings)-1] = append(rings[len(rings)-1], p)
		}
		if len(rings) != len(c.n) {
			t.Errorf("%s (%s): %d rings, want %d", c.m, c.source, len(rings), len(c.n))
			continue
		}
		r0 := cmplx.Abs(rings[0][0])
		for k, ring := range rings {
			if len(ring) != c.n[k] {
				t.Errorf("%s: ring %d has %d points, want %d", c.m, k+1, len(ring), c.n[k])
			}
			if g := cmplx.Abs(ring[0]) / r0; math.Abs(g-c.gamma[k]) > 1e-9 {
				t.Errorf("%s (%s): ring %d radius ratio %.6f, want %v", c.m, c.source, k+1, g, c.gamma[k])
			}
			if !math.IsNaN(c.phase[k]) {
				// Each angle is phase + 2πk/n, and the ring has n distinct ones.
				seen := map[int]bool{}
				step := 2 * math.Pi / float64(c.n[k])
				for _, p := range ring {
					j := (cmplx.Phase(p) - c.phase[k]) / step
					if math.Abs(j-math.Round(j)) > 1e-9 {
						t.Errorf("%s: ring %d point at %.4f rad is not %.4f + k·2π/%d", c.m, k+1, cmplx.Phase(p), c.phase[k], c.n[k])
					}
					seen[(int(math.Round(j))%c.n[k]+c.n[k])%c.n[k]] = true
				}
				if len(seen) != c.n[k] {
					t.Errorf("%s: ring %d has %d distinct angles, want %d", c.m, k+1, len(seen), c.n[k])
				}
				continue
			}
			// Not evenly spaced: a quarter of the points in each open
			// quadrant, and the ring is its own mirror image in both axes.
			quad := [4]int{}
			for _, p := range ring {
				if real(p) == 0 || imag(p) == 0 {
					t.Errorf("%s: ring %d point %v on an axis", c.m, k+1, p)
					continue
				}
				q := 0
				if real(p) < 0 {
					q++
				}
				if imag(p) < 0 {
					q += 2
				}
				quad[q]++
				for _, mirror := range []complex128{cmplx.Conj(p), -cmplx.Conj(p)} {
					found := false
					for _, o := range ring {
						if cmplx.Abs(o-mirror) < 1e-12 {
							found = true
						}
					}
					if !found {
						t.Errorf("%s: ring %d lacks the mirror %v of %v", c.m, k+1, mirror, p)
					}
				}
			}
			if quad != [4]int{c.n[k] / 4, c.n[k] / 4, c.n[k] / 4, c.n[k] / 4} {
				t.Errorf("%s: ring %d has %v points per quadrant, want %d each", c.m, k+1, quad, c.n[k]/4)
			}
			var first []float64 // first-quadrant angles in degrees
			for _, p := range ring {
				if real(p) > 0 && imag(p) > 0 {
					first = append(first, cmplx.Phase(p)*180/math.Pi)
				}
			}
			sort.Float64s(first)
			if want := apsk128Degrees[k]; len(first) != len(want) {
				t.Errorf("%s: ring %d has %d first-quadrant points, want %d", c.m, k+1, len(first), len(want))
			} else {
				for i := range want {
					if math.Abs(first[i]-want[i]) > 6e-4 {
						t.Errorf("%s: ring %d first-quadrant angle %d is %.4f°, want %.3f°", c.m, k+1, i+1, first[i], want[i])
					}
				}
			}
		}
		// Distinct points, no two closer than a tenth of the inner radius.
		for i := range pts {
			for j := range i {
				if cmplx.Abs(pts[i]-pts[j]) < r0/10 {
					t.Errorf("%s: points %d and %d only %.3g apart", c.m, i, j, cmplx.Abs(pts[i]-pts[j]))
				}
			}
		}
	}
}

// apsk128Degrees are the first-quadrant angles of each 128APSK ring in
// degrees, ascending (EN 302 307-2 as GNU Radio's gr-dtv transcribes it;
// docs/SIGNAL.md).
var apsk128Degrees = [6][]float64{
	{11.857, 33.107, 56.893, 78.107},
	{8.643, 36.321, 53.679, 81.357},
	{14.786, 30.179, 59.750, 75.214},
	{15.250, 29.786, 60.214, 74.786},
	{4.750, 40.214, 49.750, 85.250},
	{3.964, 11.786, 18.857, 26.143, 33.179, 41.036, 49.000, 56.786, 63.893, 71.179, 78.214, 86.000},
}

// sidebandPowers returns the Welch PSD's power below −guard Hz and above
// +guard Hz, and the frequency of its largest bin.
func sidebandPowers(t *testing.T, x []complex64, fs, guard float64) (neg, pos, peak float64) {
	t.Helper()
	e, err := NewExtractor(Config{SampleRate: fs})
	if err != nil {
		t.Fatal(err)
	}
	var f Features
	if err := e.Extract(x, &f); err != nil {
		t.Fatal(err)
	}
	best := -1.0
	for i, p := range f.PSD {
		fr := f.PSDFreq(i)
		switch {
		case fr < -guard:
			neg += p
		case fr > guard:
			pos += p
		}
		if p > best {
			best, peak = p, fr
		}
	}
	return neg, pos, peak
}

// TestAMFamily checks the four RadioML AM classes (and am, which is
// AM-DSB-WC): the carrier line, the record's mean, holds 1/(1+m²/2) of the
// power with carrier (DSB), 1/(1+m²) (SSB) and none without; DSB puts the
// same power in both sidebands, upper SSB all of it above the carrier.
func TestAMFamily(t *testing.T) {
	const fs, fm, depth = 100e3, 3000.0, 0.5
	for _, c := range []struct {
		m       Modulation
		carrier float64 // share of the power in the carrier line
		ssb     bool
	}{
		{AM, 1 / (1 + depth*depth/2), false},
		{AMDSBWC, 1 / (1 + depth*depth/2), false},
		{AMDSBSC, 0, false},
		{AMSSBWC, 1 / (1 + depth*depth), true},
		{AMSSBSC, 0, true},
	} {
		x, err := Synthesize(SynthOptions{Mod: c.m, SampleRate: fs, Samples: 1 << 16, NoNoise: true, ModFreq: fm, ModIndex: depth, Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		var mean complex128
		for _, v := range x {
			mean += complex128(v)
		}
		mean /= complex(float64(len(x)), 0)
		share := real(mean)*real(mean) + imag(mean)*imag(mean) // of unit power
		if math.Abs(share-c.carrier) > 1e-3 {
			t.Errorf("%s: carrier holds %.4f of the power, want %.4f", c.m, share, c.carrier)
		}
		neg, pos, peak := sidebandPowers(t, x, fs, fm/2)
		if c.ssb {
			if neg > 1e-4*pos {
				t.Errorf("%s: lower sideband %.3g of the upper's power, want none", c.m, neg/pos)
			}
			if c.carrier == 0 && math.Abs(peak-fm) > fs/1024 {
				t.Errorf("%s: spectral peak at %.0f Hz, want the message tone %.0f Hz", c.m, peak, fm)
			}
		} else if math.Abs(neg/pos-1) > 0.05 {
			t.Errorf("%s: sidebands %.3g and %.3g, want equal", c.m, neg, pos)
		}
	}
}

// gmskWindowShare returns the share of the GMSK frequency pulse (a
// one-symbol rectangle filtered by the Gaussian of bandwidth-time product
// bt) that falls in a one-symbol window d symbols from the pulse's centre:
// ∫ over t in [d−½, d+½] of Φ((t+½)/σ) − Φ((t−½)/σ), σ = √ln2/(2π·bt).
func gmskWindowShare(bt float64, d int) float64 {
	sigma := math.Sqrt(math.Ln2) / (2 * math.Pi * bt)
	phi := func(z float64) float64 { return 0.5 * (1 + math.Erf(z/math.Sqrt2)) }
	const steps = 2000 // midpoint rule
	var s float64
	for i := range steps {
		t := float64(d) - 0.5 + (float64(i)+0.5)/steps
		s += phi((t+0.5)/sigma) - phi((t-0.5)/sigma)
	}
	return s / steps
}

// TestGMSK checks GMSK's constant envelope and its phase: over each
// symbol the phase moves by (π/2)·Σ a_s·q(s), the symbols a_s = ±1
// weighted by the share q of each one's BT = 0.3 Gaussian frequency pulse
// that falls in that symbol (computed here from the pulse's definition),
// so a run of equal symbols turns it by ±π/2 per symbol and never more.
func TestGMSK(t *testing.T) {
	const sps = 8
	o := SynthOptions{Mod: GMSK, SampleRate: 8000, SymbolRate: 1000, Samples: 4000, NoNoise: true, Seed: 5,
		BT: 0.5, ModIndex: 1} // GMSK ignores both
	var s Synthesizer
	x := make([]complex64, o.Samples)
	if err := s.Generate(x, o); err != nil {
		t.Fatal(err)
	}
	for i, v := range x {
		if d := math.Abs(cmplx.Abs(complex128(v)) - 1); d > 1e-5 {
			t.Fatalf("sample %d: |x| = %v, want 1 (constant envelope)", i, cmplx.Abs(complex128(v)))
		}
	}
	var q [7]float64 // shares for d = −3..3
	for d := -3; d <= 3; d++ {
		q[d+3] = gmskWindowShare(GMSKBT, d)
	}
	var worst, largest float64
	for m := 1; (m+1)*sps < len(x); m++ {
		got := cmplx.Phase(complex128(x[(m+1)*sps]) * cmplx.Conj(complex128(x[m*sps])))
		// Symbol m+2 of the stream is centred on output window m.
		var want float64
		for d := -3; d <= 3; d++ {
			want += math.Pi / 2 * real(s.sym[m+2+d]) * q[d+3]
		}
		worst = max(worst, math.Abs(got-want))
		largest = max(largest, math.Abs(got))
	}
	if worst > 0.01 {
		t.Errorf("per-symbol phase change off the BT=0.3, h=0.5 prediction by up to %.4f rad", worst)
	}
	if largest > math.Pi/2+1e-3 || largest < math.Pi/2-0.01 {
		t.Errorf("largest per-symbol phase change %.4f rad, want π/2 (a run of equal symbols)", largest)
	}
}

// TestOQPSK checks that OQPSK's Q rail is half a symbol behind its I
// rail: the eye of I (mean |I| at each sampling phase) opens widest at the
// symbol instants, that of Q half a symbol later; and that an odd number
// of samples per symbol, which has no half-symbol delay, is refused.
func TestOQPSK(t *testing.T) {
	const sps = 8
	x, err := Synthesize(SynthOptions{Mod: OQPSK, SampleRate: 8000, SymbolRate: 1000, Samples: 8000, NoNoise: true,
		Seed: 2, SpanSymbols: 32})
	if err != nil {
		t.Fatal(err)
	}
	var eyeI, eyeQ [sps]float64
	for i, v := range x {
		eyeI[i%sps] += math.Abs(float64(real(v)))
		eyeQ[i%sps] += math.Abs(float64(imag(v)))
	}
	argmax := func(e [sps]float64) int {
		best := 0
		for p := range e {
			if e[p] > e[best] {
				best = p
			}
		}
		return best
	}
	if pi, pq := argmax(eyeI), argmax(eyeQ); pi != 0 || pq != sps/2 {
		t.Errorf("eyes open widest at phase %d (I) and %d (Q), want 0 and %d", pi, pq, sps/2)
	}
	_, err = Synthesize(SynthOptions{Mod: OQPSK, SampleRate: 5000, SymbolRate: 1000, Samples: 100})
	if err == nil || !strings.Contains(err.Error(), "even number of samples per symbol") {
		t.Errorf("sps 5: error %v, want one asking for an even number of samples per symbol", err)
	}
}
