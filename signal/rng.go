package signal

import (
	"math"
	"math/bits"

	"github.com/gotrain/gotrain/rng"
)

// The random streams.
//
// Every random draw comes from gotrain's counter-based SplitMix64 stream
// (package rng): the i-th value of a stream is rng.At(key, i) with
// key = rng.Key(seed, 0, purpose). Symbols and noise use separate
// purposes, so the same seed gives the same symbols at every SNR.

// Stream purposes.
const (
	streamSymbols uint64 = 0x5349474e414c0001 // "SIGNAL" 1
	streamNoise   uint64 = 0x5349474e414c0002
)

// stream reads one random stream sequentially.
type stream struct{ state uint64 }

func newStream(seed, purpose uint64) stream {
	return stream{state: rng.Key(seed, 0, purpose)}
}

// next returns rng.At(key, i) for the i-th call.
func (r *stream) next() uint64 {
	r.state += rng.Golden
	return rng.Mix(r.state)
}

// intn returns a uniform integer in [0, n) (Lemire's multiply-shift; the
// bias is below n/2^64).
func (r *stream) intn(n int) int {
	hi, _ := bits.Mul64(r.next(), uint64(n))
	return int(hi)
}

// float64 returns a uniform value in (0, 1).
func (r *stream) float64() float64 {
	return (float64(r.next()>>11) + 0.5) * 0x1p-53
}

// Ziggurat tables for the standard normal distribution (Marsaglia and
// Tsang, 128 layers). zigX[1] = r is the start of the tail, zigX[0] the
// pseudo-width of the base layer, zigX[128] = 0; zigF[i] = exp(−zigX[i]²/2).
const (
	zigLayers = 128
	zigR      = 3.442619855899
	zigV      = 9.91256303526217e-3
)

var zigX, zigW, zigF [zigLayers + 1]float64

func init() {
	f := func(x float64) float64 { return math.Exp(-0.5 * x * x) }
	zigX[1] = zigR
	zigX[0] = zigV / f(zigR)
	for i := 1; i < zigLayers-1; i++ {
		zigX[i+1] = math.Sqrt(-2 * math.Log(zigV/zigX[i]+f(zigX[i])))
	}
	zigX[zigLayers] = 0
	for i := range zigX {
		zigF[i] = f(zigX[i])
		zigW[i] = zigX[i] * 0x1p-52
	}
}

// norm returns a standard normal value.
func (r *stream) norm() float64 {
	for {
		u := r.next()
		i := u & (zigLayers - 1)
		// The top 53 bits as a signed value in [−2^52, 2^52), centred.
		z := (float64(int64(u)>>11) + 0.5) * zigW[i]
		if math.Abs(z) < zigX[i+1] {
			return z
		}
		if i == 0 {
			return r.tail(z < 0)
		}
		if zigF[i]+r.float64()*(zigF[i+1]-zigF[i]) < math.Exp(-0.5*z*z) {
			return z
		}
	}
}

// fillNorm fills dst with standard normal values: the same values, in
// the same order, as len(dst) calls of norm. The ziggurat's fast path
// (about 99 % of draws) is inline; the rest goes through norm's slow path.
func (r *stream) fillNorm(dst []float64) {
	// The state stays in a register (through memory it would make every
	// draw wait for the previous one's store).
	st := r.state
	for k := range dst {
		st += rng.Golden
		u := rng.Mix(st)
		i := u & (zigLayers - 1)
		z := (float64(int64(u)>>11) + 0.5) * zigW[i]
		if math.Abs(z) < zigX[i+1] {
			dst[k] = z
			continue
		}
		r.state = st
		dst[k] = r.normSlow(z, i)
		st = r.state
	}
	r.state = st
}

// fillNormTracked is fillNorm that also records in starts[k] the stream
// state at the start of draw k, for k < len(starts) ≤ len(dst).
func (r *stream) fillNormTracked(dst []float64, starts []uint64) {
	for k := range starts {
		starts[k] = r.state
		dst[k] = r.norm()
	}
	r.fillNorm(dst[len(starts):])
}

// normSlow finishes a draw of norm whose first candidate z from layer i
// fell outside the layer's rectangle core.
func (r *stream) normSlow(z float64, i uint64) float64 {
	for {
		if i == 0 {
			return r.tail(z < 0)
		}
		if zigF[i]+r.float64()*(zigF[i+1]-zigF[i]) < math.Exp(-0.5*z*z) {
			return z
		}
		u := r.next()
		i = u & (zigLayers - 1)
		z = (float64(int64(u)>>11) + 0.5) * zigW[i]
		if math.Abs(z) < zigX[i+1] {
			return z
		}
	}
}

// tail samples the normal tail beyond zigR (Marsaglia 1964).
func (r *stream) tail(neg bool) float64 {
	for {
		a := -math.Log(r.float64()) / zigR
		b := -math.Log(r.float64())
		if b+b >= a*a {
			if neg {
				return -(zigR + a)
			}
			return zigR + a
		}
	}
}
