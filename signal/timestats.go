package signal

import "math"

// timeStats computes the sample-domain features in one pass over x: RSSI,
// the cumulants, instantaneous amplitude, phase and frequency statistics,
// and the envelope |x| for the MFCCs.
func (e *Extractor) timeStats(x []complex64, f *Features) {
	env := e.env[:len(x)]
	var (
		p, amp     float64 // Σ|x|², Σ|x|
		m20r, m20i float64 // Σ x²
		m40r, m40i float64 // Σ x⁴
		m41r, m41i float64 // Σ x²·|x|²
		m42        float64 // Σ |x|⁴
		ur, ui     float64 // Σ x/|x|
		fsum, fsq  float64 // Σ Δφ, Σ Δφ² (phase steps)
		start      int
	)
	if n := len(x) &^ 3; useAVX2 && n > 0 {
		// Four lanes per sum, added up here.
		var acc [12][4]float64
		timeSumsAVX2(&x[0], &env[0], n, &acc, &timeConsts)
		lanes := func(r int) float64 { a := acc[r]; return (a[0] + a[1]) + (a[2] + a[3]) }
		p, amp, ur, ui = lanes(0), lanes(1), lanes(2), lanes(3)
		m20r, m20i, m40r, m40i = lanes(4), lanes(5), lanes(6), lanes(7)
		m41r, m41i, m42 = lanes(8), lanes(9), lanes(10)
		start = n
	}
	for i := start; i < len(x); i++ {
		v := x[i]
		re, im := float64(real(v)), float64(imag(v))
		q := re*re + im*im
		a := math.Sqrt(q)
		env[i] = a
		p += q
		amp += a
		if a > 0 {
			ia := 1 / a
			ur += re * ia
			ui += im * ia
		}
		// x² = (re² − im²) + 2i·re·im
		s2r, s2i := re*re-im*im, 2*re*im
		m20r += s2r
		m20i += s2i
		m40r += s2r*s2r - s2i*s2i
		m40i += s2r*s2i + s2i*s2r
		m41r += s2r * q
		m41i += s2i * q
		m42 += q * q
	}
	m20, m40, m41 := complex(m20r, m20i), complex(m40r, m40i), complex(m41r, m41i)
	fsum, fsq = instFreqSums(x)
	n := float64(len(x))
	p /= n
	f.RSSIdBFS = 10 * math.Log10(p)
	f.RSSIdBm = 10 * math.Log10(p/e.cfg.Impedance/1e-3)
	f.InstAmpMean = amp / n
	f.InstAmpStd = math.Sqrt(math.Max(0, p-f.InstAmpMean*f.InstAmpMean))
	r := math.Hypot(ur, ui) / n
	f.InstPhaseMean = math.Atan2(ui, ur)
	f.InstPhaseStd = math.Sqrt(math.Max(0, -2*math.Log(r)))
	if len(x) > 1 {
		k := e.cfg.SampleRate / (2 * math.Pi)
		nd := n - 1
		mean := fsum / nd
		f.InstFreqMean = mean * k
		f.InstFreqStd = math.Sqrt(math.Max(0, fsq/nd-mean*mean)) * k
	}
	c := complex(1/n, 0)
	m20 *= c
	m40 *= c
	m41 *= c
	m42 /= n
	c21 := p
	f.C21 = c21
	if c21 > 0 {
		c40 := m40 - 3*mul(m20, m20)
		c41 := m41 - complex(3*c21, 0)*m20
		c42 := m42 - (real(m20)*real(m20) + imag(m20)*imag(m20)) - 2*c21*c21
		f.C20 = m20 / complex(c21, 0)
		f.C40 = c40 / complex(c21*c21, 0)
		f.C41 = c41 / complex(c21*c21, 0)
		f.C42 = c42 / (c21 * c21)
	} else {
		f.C20, f.C40, f.C41, f.C42 = 0, 0, 0, 0
	}
}

// instFreqSums returns Σd and Σd² over the phase steps
// d_i = arg(x[i+1]·conj(x[i])), i < len(x)−1.
func instFreqSums(x []complex64) (sum, sumsq float64) {
	start := 0
	if n := (len(x) - 1) &^ 3; useAVX2 && n > 0 {
		sum, sumsq = instFreqAVX2(&x[0], n, &atanConsts)
		start = n
	}
	for i := start; i+1 < len(x); i++ {
		pr, pi := float64(real(x[i])), float64(imag(x[i]))
		re, im := float64(real(x[i+1])), float64(imag(x[i+1]))
		d := fastAtan2(im*pr-re*pi, re*pr+im*pi)
		sum += d
		sumsq += d * d
	}
	return sum, sumsq
}
