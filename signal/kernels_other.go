//go:build !amd64 || purego

package signal

// kernelsBuilt tells whether this build has the assembly kernels.
const kernelsBuilt = false

// useAVX2 is false where no vector kernel exists.
var useAVX2 = false

var atanConsts [15][4]float64

func instFreqAVX2(x *complex64, n int, c *[15][4]float64) (sum, sumsq float64) { return 0, 0 }

var dbConsts [16][4]float64

func specDBAVX2(dst *float32, stride int, z *complex128, n int, scale float64, c *[16][4]float64) {}

func accumulate3AVX2(u0, p1, q1, p2, q2 *float64, a, b, c *complex128, n int) {}

func hannAVX2(acc *float64, a, b *complex128, n int, c *[3][4]float64) {}

var hannConsts [3][4]float64

func mfccPackAVX2(z *complex128, env *float64, hop int, win2 *float64, h int) {}

func melAVX2(e *float64, w *float64, band *[2]int, nbands int, pow *float64) {}

func timeSumsAVX2(x *complex64, env *float64, n int, acc *[12][4]float64, c *[2][4]float64) {}

var timeConsts [2][4]float64

func shapeAVX2(out *complex64, stride int, sr, si *float64, taps *float64, ntaps, groups int) {}

func specPackAVX2(in *complex128, x *complex64, step, seg int, win *float64, c *[4]float64) {}

func accumulate6AVX2(u0, p1, q1, p2, q2 *float64, a, b, c, d, e, f *complex128, n int) {}

func hann4AVX2(acc *float64, p *[5]*complex128, n int, c *[3][4]float64) {}

func logAVX2(x *float64, n int, c *[16][4]float64) {}

var logConsts [16][4]float64
