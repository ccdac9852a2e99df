//go:build amd64 && !purego

package signal

import (
	"math"

	"github.com/gotrain/gotrain/internal/cpufeat"
)

// kernelsBuilt tells whether this build has the assembly kernels.
const kernelsBuilt = true

// useAVX2 selects the AVX2+FMA kernels where the CPU and GOTRAIN_CPU
// (package internal/cpufeat) allow them; tests turn it off to compare.
var useAVX2 = cpufeat.HasAVX2FMA

// instFreqAVX2 returns Σd and Σd² over d_i = arg(x[i+1]·conj(x[i])) for
// i < n (n a positive multiple of 4; x holds n+1 samples), computed as
// fastAtan2 does, four pairs at a time.
//
//go:noescape
func instFreqAVX2(x *complex64, n int, c *[15][4]float64) (sum, sumsq float64)

// atanConsts are instFreqAVX2's constants, each repeated in four lanes:
// |x| mask, sign mask, tan(π/8), a tiny denominator floor, the eight
// coefficients of atanPoly, π/4, π/2 and π.
var atanConsts = func() (c [15][4]float64) {
	vals := []float64{
		math.Float64frombits(1<<63 - 1), math.Float64frombits(1 << 63), 0.41421356237309504880, 1e-300,
		0.9999999999992707, -0.333333332783843, 0.19999993188848308, -0.1428539125816608,
		0.11103534898900606, -0.08993217162984875, 0.06977004852438395, -0.03770173324445163,
		math.Pi / 4, math.Pi / 2, math.Pi,
	}
	for i, v := range vals {
		c[i] = [4]float64{v, v, v, v}
	}
	return c
}()

// specDBAVX2 writes, for k < n, dst[k·stride+b] = dbPerNeper·ln(|z[4k+b]|²·scale
// + 1e-20) for b < 4, with ln as fastLn computes it.
//
//go:noescape
func specDBAVX2(dst *float32, stride int, z *complex128, n int, scale float64, c *[16][4]float64)

// dbConsts are specDBAVX2's constants, each in four lanes.
var dbConsts = func() (c [16][4]float64) {
	bits := math.Float64frombits
	vals := []float64{
		1e-20, bits(0x3ff0000000000000 - 0x3fe6a09e667f3bcd), bits(1<<52 - 1), bits(0x3fe6a09e667f3bcd),
		bits(0x4330000000000000), 0x1p52 + 1023, math.Ln2, 1,
		2, 2.0 / 3, 2.0 / 5, 2.0 / 7, 2.0 / 9, 2.0 / 11, dbPerNeper, math.Inf(1),
	}
	for i, v := range vals {
		c[i] = [4]float64{v, v, v, v}
	}
	return c
}()

// accumulate3AVX2 accumulates, over n complex values (n even), the
// unreduced products u0 += c⊙c, p1 += b⊙c, q1 += b⊙c̃, p2 += a⊙c and
// q2 += a⊙c̃, where ⊙ is elementwise over interleaved real and imaginary
// parts and c̃ is c with the two parts swapped (see welch_amd64.s).
//
//go:noescape
func accumulate3AVX2(u0, p1, q1, p2, q2 *float64, a, b, c *complex128, n int)

// hannAVX2 adds the unreduced |Xw(k)|² of a Welch segment's windowed
// spectrum to acc[2k], acc[2k+1] for n bins (see welch_amd64.s).
//
//go:noescape
func hannAVX2(acc *float64, a, b *complex128, n int, c *[3][4]float64)

// hannConsts are hannAVX2's constants: the signs of two consecutive bins
// starting at an even one, 0.5 and 0.25.
var hannConsts = [3][4]float64{{1, 1, -1, -1}, {0.5, 0.5, 0.5, 0.5}, {0.25, 0.25, 0.25, 0.25}}

// mfccPackAVX2 packs four windowed MFCC frames of env, frame b from
// env[b·hop], two samples per complex value and interleaved across the
// frames, into z[4i+b] for i < h; win2 holds each window pair twice (see
// mfcc_amd64.s). Products only, so the values are the scalar code's.
//
//go:noescape
func mfccPackAVX2(z *complex128, env *float64, hop int, win2 *float64, h int)

// melAVX2 sums the mel bands of four interleaved power spectra:
// e[4m+b] = Σ_i w_m[i]·pow[4(first_m+i)+b], in the scalar code's order
// (see mfcc_amd64.s).
//
//go:noescape
func melAVX2(e *float64, w *float64, band *[2]int, nbands int, pow *float64)

// timeSumsAVX2 writes env[i] = |x[i]| for i < n (n a positive multiple
// of 4) and adds the time-domain sums of timeStats to acc, four lanes per
// sum (see timestats_amd64.s); c holds four ones and four zeros.
//
//go:noescape
func timeSumsAVX2(x *complex64, env *float64, n int, acc *[12][4]float64, c *[2][4]float64)

// timeConsts are timeSumsAVX2's constants.
var timeConsts = [2][4]float64{{1, 1, 1, 1}, {0, 0, 0, 0}}

// shapeAVX2 computes groups·8 outputs of one RRC polyphase branch, the
// scalar loop's sums in its order, into out[k·stride] (see
// shaping_amd64.s); sr and si point at the first output's newest symbol.
//
//go:noescape
func shapeAVX2(out *complex64, stride int, sr, si *float64, taps *float64, ntaps, groups int)

// specPackAVX2 removes the mean of four spectrogram segments (segment b
// at x[b·step:]) and writes them windowed and interleaved, in[4k+b], with
// the scalar code's sums and products (see spectrogram_amd64.s); c holds
// seg as a float64 four times.
//
//go:noescape
func specPackAVX2(in *complex128, x *complex64, step, seg int, win *float64, c *[4]float64)

// accumulate6AVX2 is four accumulate3AVX2 calls, for the blocks with
// spectra c, d, e, f (a and b the two before them), in one pass: the same
// values bit for bit, with the accumulators loaded and stored once (see
// welch_amd64.s).
//
//go:noescape
func accumulate6AVX2(u0, p1, q1, p2, q2 *float64, a, b, c, d, e, f *complex128, n int)

// hann4AVX2 is four hannAVX2 calls, for the segments made of the blocks
// p[0..4] taken two by two, in one pass: the same sums bit for bit (see
// welch_amd64.s).
//
//go:noescape
func hann4AVX2(acc *float64, p *[5]*complex128, n int, c *[3][4]float64)

// logAVX2 replaces x[i] by math.Log(x[i]) for i < n (n a positive
// multiple of 4; every x[i] positive, normal and finite), with the
// operations of the runtime's amd64 log in their order: the same values
// bit for bit (see mfcc_amd64.s).
//
//go:noescape
func logAVX2(x *float64, n int, c *[16][4]float64)

// logConsts are logAVX2's constants.
var logConsts = func() (c [16][4]float64) {
	bits := math.Float64frombits
	vals := []float64{
		bits(0x000FFFFFFFFFFFFF), 0.5, bits(0x4330000000000000), 0x1p52 + 1022, 7.07106781186547524401e-01, 1, 2,
		1.479819860511658591e-01, 1.531383769920937332e-01, 1.818357216161805012e-01, 2.222219843214978396e-01,
		2.857142874366239149e-01, 3.999999999940941908e-01, 6.666666666666735130e-01,
		1.90821492927058770002e-10, 6.93147180369123816490e-01,
	}
	for i, v := range vals {
		c[i] = [4]float64{v, v, v, v}
	}
	return c
}()
