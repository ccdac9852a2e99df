package signal

import "math"

// RRCTaps returns the root-raised-cosine filter with roll-off beta, sps
// samples per symbol and a span of span symbols: span·sps+1 taps at
// t = k/sps − span/2 symbols, scaled to unit energy. It is the peer
// script's rrc_taps, including its values at t = 0 and |4βt| = 1.
func RRCTaps(beta float64, sps, span int) []float64 {
	n := span*sps + 1
	h := make([]float64, n)
	var e float64
	for i := range h {
		t := (float64(i) - float64(span*sps)/2) / float64(sps)
		switch {
		case math.Abs(t) < 1e-12:
			h[i] = 1 - beta + 4*beta/math.Pi
		case math.Abs(math.Abs(4*beta*t)-1) < 1e-12:
			h[i] = beta / math.Sqrt2 * ((1+2/math.Pi)*math.Sin(math.Pi/(4*beta)) + (1-2/math.Pi)*math.Cos(math.Pi/(4*beta)))
		default:
			h[i] = (math.Sin(math.Pi*t*(1-beta)) + 4*beta*t*math.Cos(math.Pi*t*(1+beta))) /
				(math.Pi * t * (1 - (4*beta*t)*(4*beta*t)))
		}
		e += h[i] * h[i]
	}
	g := 1 / math.Sqrt(e)
	for i := range h {
		h[i] *= g
	}
	return h
}

// constellation returns the unit-average-energy symbol alphabet of a
// linear modulation (and OQPSK, whose alphabet is QPSK's): BPSK ±1; QPSK
// exp(i(π/4 + kπ/2)); 8PSK exp(ikπ/4); square 16QAM and 64QAM with
// odd-integer levels scaled to unit energy; the others as docs/SIGNAL.md
// describes them.
func constellation(m Modulation) []complex128 {
	switch m {
	case BPSK:
		return []complex128{1, -1}
	case QPSK, OQPSK:
		c := make([]complex128, 4)
		for k := range c {
			c[k] = cis(math.Pi/4 + float64(k)*math.Pi/2)
		}
		return c
	case PSK8:
		c := make([]complex128, 8)
		for k := range c {
			c[k] = cis(float64(k) * math.Pi / 4)
		}
		return c
	case QAM16, QAM64, QAM256:
		side := map[Modulation]int{QAM16: 4, QAM64: 8, QAM256: 16}[m]
		return unitEnergy(squareGrid(side, 0))
	case QAM32:
		return unitEnergy(squareGrid(6, 1)) // the 6x6 grid less its corner points
	case QAM128:
		return unitEnergy(squareGrid(12, 2)) // the 12x12 grid less 2x2 at each corner
	case OOK:
		return []complex128{0, complex(math.Sqrt2, 0)}
	case ASK4, ASK8:
		n := 4
		if m == ASK8 {
			n = 8
		}
		c := make([]complex128, n)
		for k := range c {
			c[k] = complex(float64(2*k-n+1), 0)
		}
		return unitEnergy(c)
	case APSK16, APSK32, APSK64:
		return unitEnergy(apsk(apskRings[m]))
	case APSK128:
		return unitEnergy(apsk128())
	case PSK16, PSK32:
		n := 16
		if m == PSK32 {
			n = 32
		}
		c := make([]complex128, n)
		for k := range c {
			c[k] = cis(2 * math.Pi * float64(k) / float64(n))
		}
		return c
	}
	return nil
}

// apskRing is one ring of an APSK constellation: n points at radius gamma
// (relative to the innermost ring) and angles phase + 2πk/n.
type apskRing struct {
	n            int
	gamma, phase float64
}

// apskRings holds the DVB-S2 (ETSI EN 302 307-1) and DVB-S2X (EN 302 307-2)
// rings used for 16APSK (4+12, code rate 3/4), 32APSK (4+12+16, rate 3/4)
// and 64APSK (8+16+20+20, rate 4/5); docs/SIGNAL.md gives the sources.
var apskRings = map[Modulation][]apskRing{
	APSK16: {{4, 1, math.Pi / 4}, {12, 2.85, math.Pi / 12}},
	APSK32: {{4, 1, math.Pi / 4}, {12, 2.84, math.Pi / 12}, {16, 5.27, 0}},
	APSK64: {{8, 1, math.Pi / 8}, {16, 2.2, math.Pi / 16}, {20, 3.6, math.Pi / 20}, {20, 5.2, math.Pi / 20}},
}

// apsk returns the points of the rings, innermost first.
func apsk(rings []apskRing) []complex128 {
	var c []complex128
	for _, r := range rings {
		for k := range r.n {
			c = append(c, complex(r.gamma, 0)*cis(r.phase+2*math.Pi*float64(k)/float64(r.n)))
		}
	}
	return c
}

// DVB-S2X 128APSK (code rate 135/180): six rings of 16, 16, 16, 16, 16 and
// 48 points whose angles are not evenly spaced. apsk128Gamma are the radii
// relative to the innermost ring; apsk128Quadrant the angles of each
// ring's points in the first quadrant, as fractions num/den of π. The
// other quadrants mirror them: θ, π − θ, π + θ, −θ.
var (
	apsk128Gamma    = [6]float64{1, 1.715, 2.118, 2.681, 2.75, 3.819}
	apsk128Quadrant = [6][][2]int{
		{{83, 1260}, {103, 560}, {243, 560}, {177, 560}},
		{{121, 2520}, {113, 560}, {1139, 2520}, {167, 560}},
		{{23, 280}, {169, 1008}, {117, 280}, {239, 720}},
		{{61, 720}, {139, 840}, {349, 840}, {281, 840}},
		{{19, 720}, {563, 2520}, {341, 720}, {199, 720}},
		{{11, 105}, {37, 1680}, {11, 168}, {61, 420}, {383, 1680}, {929, 5040},
			{1993, 5040}, {43, 90}, {73, 168}, {1789, 5040}, {49, 180}, {53, 168}},
	}
)

// apsk128 returns the 128APSK points, ring by ring.
func apsk128() []complex128 {
	c := make([]complex128, 0, 128)
	for r, q := range apsk128Quadrant {
		g := complex(apsk128Gamma[r], 0)
		for _, mirror := range [4]func(float64) float64{
			func(t float64) float64 { return t },
			func(t float64) float64 { return math.Pi - t },
			func(t float64) float64 { return math.Pi + t },
			func(t float64) float64 { return -t },
		} {
			for _, f := range q {
				c = append(c, g*cis(mirror(math.Pi*float64(f[0])/float64(f[1]))))
			}
		}
	}
	return c
}

// squareGrid returns the points of a side x side grid of odd coordinates
// (±1, ±3, ...), less a corner x corner square at each of its corners (the
// cross constellations: 32QAM from 6x6 less 1x1, 128QAM from 12x12 less
// 2x2).
func squareGrid(side, corner int) []complex128 {
	c := make([]complex128, 0, side*side)
	for i := range side {
		for q := range side {
			ci := i < corner || i >= side-corner
			cq := q < corner || q >= side-corner
			if ci && cq {
				continue
			}
			c = append(c, complex(float64(2*i-side+1), float64(2*q-side+1)))
		}
	}
	return c
}

// unitEnergy scales c to a mean symbol energy of 1.
func unitEnergy(c []complex128) []complex128 {
	var e float64
	for _, v := range c {
		e += real(v)*real(v) + imag(v)*imag(v)
	}
	g := complex(1/math.Sqrt(e/float64(len(c))), 0)
	for i := range c {
		c[i] *= g
	}
	return c
}

// shapeLinear writes RRC-shaped random symbols into out: out[n] is the
// filter output at sample start+n of a stationary symbol stream whose
// symbol i sits at sample i·sps, with the filter's delay removed (so
// symbol i peaks at sample i·sps).
func (s *Synthesizer) shapeLinear(out []complex64, o SynthOptions, start int) {
	sps := int(math.Round(o.SampleRate / o.SymbolRate))
	if s.taps == nil || s.tapsO.RollOff != o.RollOff || s.tapsO.SpanSymbols != o.SpanSymbols ||
		s.tapsO.SampleRate/s.tapsO.SymbolRate != o.SampleRate/o.SymbolRate {
		s.taps = RRCTaps(o.RollOff, sps, o.SpanSymbols)
		s.tapsO = o
	}
	h := s.taps
	nt := len(h)
	d := (nt - 1) / 2
	// Symbols i in [iMin, iMax] reach the record.
	first := start + d - (nt - 1)
	iMin := floorDiv(first, sps)
	iMax := floorDiv(start+len(out)-1+d, sps)
	if s.alphaMod != o.Mod {
		s.alphabet, s.alphaMod = constellation(o.Mod), o.Mod
	}
	alphabet := s.alphabet
	r := newStream(o.Seed, streamSymbols)
	s.sym = grow(s.sym, iMax-iMin+1)
	sym := s.sym
	for i := range sym {
		sym[i] = alphabet[r.intn(len(alphabet))]
	}
	// Polyphase: output at t = a + d uses taps phi, phi+sps, ... with
	// symbols top, top−1, ... where phi = t mod sps and top = (t−phi)/sps.
	//
	// Four outputs of one polyphase branch are computed together, which
	// gives eight independent accumulation chains; every output still
	// sums its taps in ascending order from zero, as the direct loop does.
	// Blocks of blk symbols are outermost so that the outputs they write
	// stay in cache across the branches.
	s.initPhases(h, sps)
	t := start + d
	phi0 := t - floorDiv(t, sps)*sps
	top0 := floorDiv(t, sps) - iMin
	s.symRe = grow(s.symRe, len(sym))
	s.symIm = grow(s.symIm, len(sym))
	for i, v := range sym {
		s.symRe[i], s.symIm[i] = real(v), imag(v)
	}
	sr, si := s.symRe, s.symIm
	const blk = 512 // outputs per branch and block
	for m0 := 0; m0*sps < len(out); m0 += blk {
		for ph := range sps {
			// Output n has branch (phi0+n) mod sps; the first output of
			// branch ph is n0, with top = top0 + (phi0+n0)/sps, and
			// each later one is one symbol on.
			n0 := (ph - phi0 + sps) % sps
			if n0 >= len(out) {
				continue
			}
			cnt := (len(out) - n0 + sps - 1) / sps
			if m0 >= cnt {
				continue
			}
			hi := min(m0+blk, cnt)
			top := top0 + (phi0+n0)/sps
			taps := s.phases[ph]
			m := m0
			if g := (hi - m) / 8; useAVX2 && g > 0 && len(taps) > 0 {
				b := top + m
				shapeAVX2(&out[n0+m*sps], sps, &sr[b], &si[b], &taps[0], len(taps), g)
				m += 8 * g
			}
			for ; m+4 <= hi; m += 4 {
				var r0, r1, r2, r3, i0, i1, i2, i3 float64
				b := top + m
				for q, hq := range taps {
					j := b - q
					a := sr[j : j+4 : j+4]
					c := si[j : j+4 : j+4]
					r0 += hq * a[0]
					r1 += hq * a[1]
					r2 += hq * a[2]
					r3 += hq * a[3]
					i0 += hq * c[0]
					i1 += hq * c[1]
					i2 += hq * c[2]
					i3 += hq * c[3]
				}
				n := n0 + m*sps
				out[n] = complex64(complex(r0, i0))
				out[n+sps] = complex64(complex(r1, i1))
				out[n+2*sps] = complex64(complex(r2, i2))
				out[n+3*sps] = complex64(complex(r3, i3))
			}
			for ; m < hi; m++ {
				var re, im float64
				b := top + m
				for q, hq := range taps {
					re += hq * sr[b-q]
					im += hq * si[b-q]
				}
				out[n0+m*sps] = complex64(complex(re, im))
			}
		}
	}
}

// initPhases splits the taps h into sps polyphase branches: branch phi
// holds h[phi], h[phi+sps], ... in that order.
func (s *Synthesizer) initPhases(h []float64, sps int) {
	if len(s.phases) == sps && s.phaseTaps == len(h) && s.phaseSrc == &h[0] {
		return
	}
	s.phases = make([][]float64, sps)
	for phi := range sps {
		for k := phi; k < len(h); k += sps {
			s.phases[phi] = append(s.phases[phi], h[k])
		}
	}
	s.phaseTaps, s.phaseSrc = len(h), &h[0]
}

// floorDiv returns ⌊a/b⌋ for b > 0.
func floorDiv(a, b int) int {
	q := a / b
	if a%b != 0 && a < 0 {
		q--
	}
	return q
}

// GMSKBT is the bandwidth-time product of GMSK's Gaussian filter (GSM's).
const GMSKBT = 0.3

// fsk writes continuous-phase FSK (levels ±1 or ±1, ±3), GFSK (binary,
// Gaussian frequency pulse of bandwidth-time product BT spanning four
// symbols) or GMSK (GFSK with BT = GMSKBT and h = 0.5): the instantaneous
// frequency is level·h·SymbolRate/2, h = ModIndex but for GMSK.
func (s *Synthesizer) fsk(out []complex128, o SynthOptions) {
	sps := int(math.Round(o.SampleRate / o.SymbolRate))
	levels := []float64{-1, 1}
	if o.Mod == FSK4 {
		levels = []float64{-3, -1, 1, 3}
	}
	var g []float64
	h := o.ModIndex
	switch o.Mod {
	case GFSK:
		g = gaussianPulse(o.BT, sps, 4)
	case GMSK:
		g, h = gaussianPulse(GMSKBT, sps, 4), 0.5
	}
	lead := len(g) / 2
	n := len(out)
	r := newStream(o.Seed, streamSymbols)
	s.sym = grow(s.sym, (n+2*lead)/sps+2)
	for i := range s.sym {
		s.sym[i] = complex(levels[r.intn(len(levels))], 0)
	}
	nrz := func(k int) float64 { return real(s.sym[k/sps]) }
	dev := 2 * math.Pi * h * o.SymbolRate / 2 / o.SampleRate
	var phase float64
	for i := range out {
		var f float64
		if g == nil {
			f = nrz(i)
		} else {
			for k, w := range g {
				f += w * nrz(i+2*lead-k)
			}
		}
		out[i] = cis(phase)
		phase += dev * f
		if phase > math.Pi {
			phase -= 2 * math.Pi
		} else if phase < -math.Pi {
			phase += 2 * math.Pi
		}
	}
}

// gaussianPulse returns the GFSK Gaussian filter, span symbols long at sps
// samples per symbol, normalised to unit sum.
func gaussianPulse(bt float64, sps, span int) []float64 {
	n := span*sps + 1
	g := make([]float64, n)
	var sum float64
	for i := range g {
		t := (float64(i) - float64(n-1)/2) / float64(sps) // in symbols
		g[i] = math.Exp(-2 * math.Pi * math.Pi * bt * bt * t * t / math.Ln2)
		sum += g[i]
	}
	for i := range g {
		g[i] /= sum
	}
	return g
}
