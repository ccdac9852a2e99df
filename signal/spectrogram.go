package signal

import (
	"fmt"
	"math"

	"github.com/gotrain/gotrain/signal/fft"
)

// dbPerNeper is 10/ln 10: 10·log10(v) = dbPerNeper·ln v.
const dbPerNeper = 4.342944819032518

// specBatch is how many spectrogram segments are transformed at once.
const specBatch = 4

// specState computes scipy.signal.spectrogram(x, fs, nperseg, noverlap,
// return_onesided=False) with its defaults (Tukey(0.25) window, constant
// detrend, density scaling), then 10·log10(S + 1e-20).
type specState struct {
	seg, step int
	plan      *fft.Plan
	win       []float64
	work      [2]specWork // buffers of up to two goroutines
	scale     float64
}

// specWork is one goroutine's spectrogram buffers.
type specWork struct {
	in, out []complex128 // specBatch interleaved segments
	scratch []complex128
}

// specChunk is how many batches of specBatch segments one goroutine takes
// at a time when two share the spectrogram (so that they seldom write the
// same cache lines of the output).
const specChunk = 8

func (s *specState) init(c Config) error {
	s.seg = c.SpectrogramSegment
	s.step = s.seg - c.SpectrogramOverlap
	p, err := fft.For(s.seg)
	if err != nil {
		return fmt.Errorf("signal: spectrogram: %w", err)
	}
	s.plan = p
	s.win = TukeyWindow(s.seg, 0.25)
	var sw float64
	for _, v := range s.win {
		sw += v * v
	}
	s.scale = 1 / (c.SampleRate * sw)
	for i := range s.work {
		if i > 0 && c.Threads < 2 {
			break
		}
		w := &s.work[i]
		b := skewed[complex128](3, s.seg*specBatch, skewComplex) // alloc.go
		w.in, w.out, w.scratch = b[0], b[1], b[2]
	}
	return nil
}

// TukeyWindow returns scipy.signal.get_window(("tukey", alpha), m): the
// periodic Tukey window, that is the symmetric one of length m+1 without
// its last point (the spectrogram's window; the graph path uses it too).
func TukeyWindow(m int, alpha float64) []float64 {
	n := m + 1
	w := make([]float64, n)
	width := int(math.Floor(alpha * float64(n-1) / 2))
	for i := range w {
		switch {
		case i <= width:
			w[i] = 0.5 * (1 + math.Cos(math.Pi*(-1+2*float64(i)/alpha/float64(n-1))))
		case i < n-width-1:
			w[i] = 1
		default:
			w[i] = 0.5 * (1 + math.Cos(math.Pi*(-2/alpha+1+2*float64(i)/alpha/float64(n-1))))
		}
	}
	return w[:m]
}

// frames returns the number of spectrogram segments of a record of n samples.
func (s *specState) frames(n, overlap int) int { return (n - overlap) / s.step }

// chunks returns the number of chunks of specChunk batches of a record of
// n samples.
func (s *specState) chunks(n, overlap int) int {
	nb := (s.frames(n, overlap) + specBatch - 1) / specBatch
	return (nb + specChunk - 1) / specChunk
}

// prepare sizes f's spectrogram for a record of n samples.
func (s *specState) prepare(n int, f *Features, c Config) {
	frames := s.frames(n, c.SpectrogramOverlap)
	f.SpecBins, f.SpecFrames = s.seg, frames
	f.Spectrogram = grow(f.Spectrogram, s.seg*frames)
}

func (s *specState) run(x []complex64, f *Features, c Config) {
	s.prepare(len(x), f, c)
	for ci := range s.chunks(len(x), c.SpectrogramOverlap) {
		s.chunk(x, f, &s.work[0], ci)
	}
}

// chunk computes the segments of chunk ci (batches ci·specChunk on) into
// their columns of f.Spectrogram, using w's buffers.
func (s *specState) chunk(x []complex64, f *Features, w *specWork, ci int) {
	seg, step := s.seg, s.step
	frames := f.SpecFrames
	out := f.Spectrogram
	lo := ci * specChunk * specBatch
	hi := min(frames, lo+specChunk*specBatch)
	for t0 := lo; t0 < hi; t0 += specBatch {
		nb := min(specBatch, frames-t0)
		if useAVX2 && nb == specBatch {
			segLen := [4]float64{float64(seg), float64(seg), float64(seg), float64(seg)}
			specPackAVX2(&w.in[0], &x[t0*step], step, seg, &s.win[0], &segLen)
		} else {
			for b := range specBatch {
				if b >= nb {
					for k := range seg {
						w.in[k*specBatch+b] = 0
					}
					continue
				}
				xs := x[(t0+b)*step : (t0+b)*step+seg]
				var mr, mi float64
				for _, v := range xs {
					mr += float64(real(v))
					mi += float64(imag(v))
				}
				mean := complex(mr/float64(seg), mi/float64(seg))
				for k, v := range xs {
					w.in[k*specBatch+b] = (complex128(v) - mean) * complex(s.win[k], 0)
				}
			}
		}
		_ = s.plan.ForwardBatch(w.out, w.in, w.scratch, specBatch)
		if useAVX2 && nb == specBatch {
			// out[k·frames + t0 + b] for k < seg, b < 4: the last row ends
			// at (seg−1)·frames + t0 + 3 < len(out).
			specDBAVX2(&out[t0], frames, &w.out[0], seg, s.scale, &dbConsts)
			continue
		}
		for k := range seg {
			row := out[k*frames+t0 : k*frames+t0+nb]
			z := w.out[k*specBatch : k*specBatch+nb]
			for b, v := range z {
				p := (real(v)*real(v) + imag(v)*imag(v)) * s.scale
				row[b] = float32(dbPerNeper * fastLn(p+1e-20))
			}
		}
	}
}
