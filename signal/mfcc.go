package signal

import (
	"fmt"
	"math"

	"github.com/gotrain/gotrain/signal/fft"
)

// mfccBatch is how many MFCC frames are transformed at once.
const mfccBatch = 4

// mfccState computes MFCCs of the envelope as the peer defines them: frames
// of MFCCFrame samples every MFCCHop (no padding), periodic Hann window,
// power |rfft|²/frame, HTK mel triangles from 0 to fs/2 with peak 1,
// ln(max(E, 1e-10)), orthonormal DCT-II, coefficients 0..MFCCs−1.
type mfccState struct {
	frame, hop int
	plan       *fft.RealPlan
	win        []float64
	bandLo     []int       // first bin of each mel band
	bandW      [][]float64 // weights from bandLo on
	dct        []float64   // MFCCs × MelBands, row-major
	melW       []float64   // bandW's rows one after another
	band       [][2]int    // each band's first bin and weight count
	win2       []float64   // window pairs twice: w[2i], w[2i+1], w[2i], w[2i+1]
	work       [2]mfccWork // buffers of up to two goroutines
}

// mfccWork is one goroutine's MFCC buffers.
type mfccWork struct {
	z, scr []complex128 // packed frames and FFT scratch
	pow    []float64    // power spectra, interleaved: pow[k·mfccBatch + b]
	e      []float64    // mel energies, then their logs, interleaved: e[m·mfccBatch + b]
}

func (s *mfccState) init(c Config) error {
	s.frame, s.hop = c.MFCCFrame, c.MFCCHop
	p, err := fft.ForReal(s.frame)
	if err != nil {
		return fmt.Errorf("signal: MFCC: %w", err)
	}
	s.plan = p
	s.win = make([]float64, s.frame)
	for n := range s.win {
		s.win[n] = 0.5 - 0.5*math.Cos(2*math.Pi*float64(n)/float64(s.frame))
	}
	nb := s.frame/2 + 1
	for i := range s.work {
		if i > 0 && c.Threads < 2 {
			break
		}
		w := &s.work[i]
		zs := skewed[complex128](2, s.frame/2*mfccBatch, skewComplex) // alloc.go
		w.z, w.scr = zs[0], zs[1]
		w.pow = make([]float64, nb*mfccBatch)
		w.e = make([]float64, c.MelBands*mfccBatch)
	}
	s.bandLo, s.bandW = melBank(c.MelBands, s.frame, c.SampleRate)
	s.melW, s.band = nil, make([][2]int, c.MelBands)
	for m, bw := range s.bandW {
		s.band[m] = [2]int{s.bandLo[m], len(bw)}
		s.melW = append(s.melW, bw...)
	}
	s.win2 = make([]float64, 2*s.frame)
	for i := range s.frame / 2 {
		s.win2[4*i], s.win2[4*i+1] = s.win[2*i], s.win[2*i+1]
		s.win2[4*i+2], s.win2[4*i+3] = s.win[2*i], s.win[2*i+1]
	}
	s.dct = DCTOrtho(c.MFCCs, c.MelBands)
	return nil
}

// MelWeights returns the HTK mel filterbank (mel = 2595·log10(1 + f/700)):
// bands triangles with peak 1 between mel-equally-spaced points from 0 to
// fs/2, evaluated at the rfft bin frequencies k·fs/frame, as a dense
// bands × (frame/2+1) matrix, row-major. Every MFCC path uses it.
func MelWeights(bands, frame int, fs float64) []float64 {
	hz2mel := func(h float64) float64 { return 2595 * math.Log10(1+h/700) }
	mel2hz := func(m float64) float64 { return 700 * (math.Pow(10, m/2595) - 1) }
	top := hz2mel(fs / 2)
	pts := make([]float64, bands+2)
	for i := range pts {
		// np.linspace(lo, hi, n): lo + i·(hi−lo)/(n−1)
		pts[i] = mel2hz(float64(i) * top / float64(bands+1))
	}
	nb := frame/2 + 1
	w := make([]float64, bands*nb)
	for m := range bands {
		l, ce, h := pts[m], pts[m+1], pts[m+2]
		for k := range nb {
			fk := float64(k) * fs / float64(frame)
			w[m*nb+k] = math.Max(0, math.Min((fk-l)/(ce-l), (h-fk)/(h-ce)))
		}
	}
	return w
}

// melBank returns MelWeights as sparse rows: each band's first nonzero bin
// and its weights from there to its last nonzero bin.
func melBank(bands, frame int, fs float64) ([]int, [][]float64) {
	nb := frame/2 + 1
	dense := MelWeights(bands, frame, fs)
	lo := make([]int, bands)
	w := make([][]float64, bands)
	for m := range bands {
		vals := dense[m*nb : (m+1)*nb]
		first, last := -1, -1
		for k, v := range vals {
			if v > 0 {
				if first < 0 {
					first = k
				}
				last = k
			}
		}
		if first < 0 {
			first, last = 0, -1
		}
		lo[m] = first
		w[m] = append([]float64(nil), vals[first:last+1]...)
	}
	return lo, w
}

// DCTOrtho returns the first k rows of the orthonormal DCT-II of size n,
// row-major (k × n). Every MFCC path uses it.
func DCTOrtho(k, n int) []float64 {
	d := make([]float64, k*n)
	for i := range k {
		g := math.Sqrt(2 / float64(n))
		if i == 0 {
			g = math.Sqrt(1 / float64(n))
		}
		for j := range n {
			d[i*n+j] = g * math.Cos(math.Pi*float64(i)*float64(2*j+1)/float64(2*n))
		}
	}
	return d
}

// frames returns the number of MFCC frames of a record of n samples.
func (s *mfccState) frames(n int) int { return 1 + (n-s.frame)/s.hop }

// batches returns the number of frame batches of a record of n samples.
func (s *mfccState) batches(n int) int { return (s.frames(n) + mfccBatch - 1) / mfccBatch }

// prepare sizes f's MFCC slices for a record of n samples.
func (s *mfccState) prepare(n int, f *Features, c Config) {
	f.MFCCFrames = grow(f.MFCCFrames, s.frames(n)*c.MFCCs)
	f.MFCC = grow(f.MFCC, c.MFCCs)
}

// run computes every frame's coefficients and their means.
func (s *mfccState) run(env []float64, f *Features, c Config) {
	s.prepare(len(env), f, c)
	for bi := range s.batches(len(env)) {
		s.batch(env, f, c, &s.work[0], bi)
	}
	s.mean(f, c)
}

// mean sets f.MFCC to the mean of the frames' coefficients, summed in
// frame order.
func (s *mfccState) mean(f *Features, c Config) {
	nc := c.MFCCs
	nf := len(f.MFCCFrames) / nc
	clear(f.MFCC)
	for fr := range nf {
		for i, v := range f.MFCCFrames[fr*nc : fr*nc+nc] {
			f.MFCC[i] += v
		}
	}
	for i := range f.MFCC {
		f.MFCC[i] /= float64(nf)
	}
}

// batch computes the coefficients of the frames of batch bi (frames
// bi·mfccBatch on) into their rows of f.MFCCFrames, using w's buffers.
// The frames are packed two samples per complex value and interleaved,
// transformed together, and their power spectra and mel energies stay
// interleaved, so the mel sums run over four frames at once.
func (s *mfccState) batch(env []float64, f *Features, c Config, w *mfccWork, bi int) {
	nf := s.frames(len(env))
	nc := c.MFCCs
	inv := 1 / float64(s.frame)
	h := s.frame / 2
	f0 := bi * mfccBatch
	cnt := min(mfccBatch, nf-f0)
	if useAVX2 && cnt == mfccBatch {
		mfccPackAVX2(&w.z[0], &env[f0*s.hop], s.hop, &s.win2[0], h)
	} else {
		var srcs [mfccBatch][]float64
		for b := range cnt {
			srcs[b] = env[(f0+b)*s.hop : (f0+b)*s.hop+s.frame]
		}
		win := s.win[:s.frame]
		if cnt == mfccBatch {
			s0, s1, s2, s3 := srcs[0][:s.frame], srcs[1][:s.frame], srcs[2][:s.frame], srcs[3][:s.frame]
			for i := range h {
				w0, w1 := win[2*i], win[2*i+1]
				z := w.z[i*mfccBatch : i*mfccBatch+mfccBatch]
				z[0] = complex(s0[2*i]*w0, s0[2*i+1]*w1)
				z[1] = complex(s1[2*i]*w0, s1[2*i+1]*w1)
				z[2] = complex(s2[2*i]*w0, s2[2*i+1]*w1)
				z[3] = complex(s3[2*i]*w0, s3[2*i+1]*w1)
			}
		} else {
			for i := range h {
				for b := range mfccBatch {
					v := complex128(0)
					if b < cnt {
						v = complex(srcs[b][2*i]*win[2*i], srcs[b][2*i+1]*win[2*i+1])
					}
					w.z[i*mfccBatch+b] = v
				}
			}
		}
	}
	_ = s.plan.PowerPackedInterleaved(w.pow, w.z, w.scr, mfccBatch)
	if useAVX2 && len(s.melW) > 0 {
		melAVX2(&w.e[0], &s.melW[0], &s.band[0], len(s.band), &w.pow[0])
	} else {
		s.mel(w)
	}
	// The log mel energies of the four frames, in place and interleaved,
	// then the DCT of the four at once (four independent sums, each in
	// the band order of a frame on its own).
	nm := len(s.band)
	le := w.e[:nm*mfccBatch]
	finite := true
	for i, v := range le {
		le[i] = math.Max(v*inv, 1e-10)
		finite = finite && le[i] <= math.MaxFloat64 // not NaN or +Inf
	}
	if useAVX2 && finite && len(le) > 0 {
		logAVX2(&le[0], len(le), &logConsts) // math.Log's values
	} else {
		for i, v := range le {
			le[i] = math.Log(v)
		}
	}
	for i := range nc {
		d := s.dct[i*nm : (i+1)*nm]
		var v0, v1, v2, v3 float64
		for j, dj := range d {
			l := le[j*mfccBatch : j*mfccBatch+4 : j*mfccBatch+4]
			v0 += dj * l[0]
			v1 += dj * l[1]
			v2 += dj * l[2]
			v3 += dj * l[3]
		}
		vs := [mfccBatch]float64{v0, v1, v2, v3}
		for b, v := range vs[:cnt] {
			f.MFCCFrames[(f0+b)*nc+i] = v
		}
	}
}

// mel sets w.e from w.pow: each band's weighted sum, for the four frames
// at once, each summed from zero in ascending bins (as melAVX2 does).
func (s *mfccState) mel(w *mfccWork) {
	for m, bw := range s.bandW {
		var e0, e1, e2, e3 float64
		p := w.pow[s.bandLo[m]*mfccBatch:]
		p = p[:len(bw)*mfccBatch]
		for i, v := range bw {
			q := p[i*mfccBatch : i*mfccBatch+4 : i*mfccBatch+4]
			e0 += v * q[0]
			e1 += v * q[1]
			e2 += v * q[2]
			e3 += v * q[3]
		}
		e := w.e[m*mfccBatch : m*mfccBatch+4 : m*mfccBatch+4]
		e[0], e[1], e[2], e[3] = e0, e1, e2, e3
	}
}
