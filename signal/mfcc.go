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
	z, scr     []complex128 // packed frames and FFT scratch
	pow        []float64
	bandLo     []int       // first bin of each mel band
	bandW      [][]float64 // weights from bandLo on
	logmel     []float64
	dct        []float64 // MFCCs × MelBands, row-major
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
	s.z = make([]complex128, s.frame/2*mfccBatch)
	s.scr = make([]complex128, s.frame/2*mfccBatch)
	s.pow = make([]float64, nb*mfccBatch)
	s.bandLo, s.bandW = melBank(c.MelBands, s.frame, c.SampleRate)
	s.logmel = make([]float64, c.MelBands)
	s.dct = dctOrtho(c.MFCCs, c.MelBands)
	return nil
}

// melBank returns the HTK mel filterbank (mel = 2595·log10(1 + f/700)),
// bands triangles with peak 1 between mel-equally-spaced points from 0 to
// fs/2, evaluated at the rfft bin frequencies k·fs/frame, as sparse rows.
func melBank(bands, frame int, fs float64) ([]int, [][]float64) {
	hz2mel := func(h float64) float64 { return 2595 * math.Log10(1+h/700) }
	mel2hz := func(m float64) float64 { return 700 * (math.Pow(10, m/2595) - 1) }
	top := hz2mel(fs / 2)
	pts := make([]float64, bands+2)
	for i := range pts {
		// np.linspace(lo, hi, n): lo + i·(hi−lo)/(n−1)
		pts[i] = mel2hz(float64(i) * top / float64(bands+1))
	}
	nb := frame/2 + 1
	lo := make([]int, bands)
	w := make([][]float64, bands)
	for m := range bands {
		l, ce, h := pts[m], pts[m+1], pts[m+2]
		first, last := -1, -1
		vals := make([]float64, nb)
		for k := range nb {
			fk := float64(k) * fs / float64(frame)
			v := math.Max(0, math.Min((fk-l)/(ce-l), (h-fk)/(h-ce)))
			vals[k] = v
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

// dctOrtho returns the first k rows of the orthonormal DCT-II of size n.
func dctOrtho(k, n int) []float64 {
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

func (s *mfccState) run(env []float64, f *Features, c Config) {
	nf := 1 + (len(env)-s.frame)/s.hop
	nc := c.MFCCs
	nb := s.frame/2 + 1
	f.MFCCFrames = grow(f.MFCCFrames, nf*nc)
	f.MFCC = grow(f.MFCC, nc)
	clear(f.MFCC)
	inv := 1 / float64(s.frame)
	h := s.frame / 2
	for f0 := 0; f0 < nf; f0 += mfccBatch {
		cnt := min(mfccBatch, nf-f0)
		// Pack windowed frames two samples per complex value, interleaved.
		for b := range mfccBatch {
			if b >= cnt {
				for i := range h {
					s.z[i*mfccBatch+b] = 0
				}
				continue
			}
			src := env[(f0+b)*s.hop : (f0+b)*s.hop+s.frame]
			win := s.win[:len(src)]
			for i := range h {
				s.z[i*mfccBatch+b] = complex(src[2*i]*win[2*i], src[2*i+1]*win[2*i+1])
			}
		}
		_ = s.plan.PowerPacked(s.pow, s.z, s.scr, mfccBatch)
		for b := range cnt {
			pw := s.pow[b*nb : (b+1)*nb]
			for m, w := range s.bandW {
				var e float64
				p := pw[s.bandLo[m]:]
				p = p[:len(w)]
				for i, v := range w {
					e += v * p[i]
				}
				s.logmel[m] = math.Log(math.Max(e*inv, 1e-10))
			}
			fr := f0 + b
			row := f.MFCCFrames[fr*nc : fr*nc+nc]
			for i := range row {
				d := s.dct[i*len(s.logmel) : (i+1)*len(s.logmel)]
				var v float64
				for j, l := range s.logmel {
					v += d[j] * l
				}
				row[i] = v
				f.MFCC[i] += v
			}
		}
	}
	for i := range f.MFCC {
		f.MFCC[i] /= float64(nf)
	}
}
