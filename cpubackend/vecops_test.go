package cpubackend

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gomlx/gomlx/backends"
)

// eachVecPath runs f once for each vector path the CPU, the build and
// GOTRAIN_CPU allow (AVX-512, AVX2), with that path selected; goLoops runs
// its function with the vector loops off (the Go loops, the reference).
// It skips t when there is none.
func eachVecPath(t *testing.T, f func(t *testing.T, goLoops func(func()))) {
	saved512, saved2 := hasVecAVX512, hasVecAVX2
	defer func() { hasVecAVX512, hasVecAVX2 = saved512, saved2 }()
	var paths []string
	if startVec {
		paths = append(paths, "avx512")
	}
	if startVecAVX2 {
		paths = append(paths, "avx2")
	}
	if len(paths) == 0 {
		t.Skip("vector loops off (CPU, build or GOTRAIN_CPU): only the Go loops run")
	}
	for _, path := range paths {
		t.Run(path, func(t *testing.T) {
			set := func() { hasVecAVX512, hasVecAVX2 = path == "avx512", path == "avx2" }
			set()
			f(t, func(g func()) {
				hasVecAVX512, hasVecAVX2 = false, false
				g()
				set()
			})
		})
	}
}

// TestVecBinaryMatchesGo checks that the fused programs' binary operations
// give the same bits with the AVX-512 and AVX2 loops as with the Go loops
// alone, for vector and scalar operands, every length up to 70 and special
// values.
func TestVecBinaryMatchesGo(t *testing.T) {
	eachVecPath(t, testVecBinaryMatchesGo)
}

func testVecBinaryMatchesGo(t *testing.T, goLoops func(func())) {
	r := rand.New(rand.NewPCG(1, 2))
	specials := []float32{0, float32(math.Copysign(0, -1)), 1e-45, -1e-45, 1e-38, float32(math.Inf(1)),
		float32(math.Inf(-1)), float32(math.NaN()), math.MaxFloat32, 1, -1}
	gen := func(n int) []float32 {
		v := make([]float32, n)
		for i := range v {
			if r.IntN(4) == 0 {
				v[i] = specials[r.IntN(len(specials))]
			} else {
				v[i] = float32(r.NormFloat64() * math.Pow(10, r.Float64()*10-5))
			}
		}
		return v
	}
	ops := []backends.OpType{backends.OpTypeAdd, backends.OpTypeSub, backends.OpTypeMul, backends.OpTypeDiv,
		backends.OpTypeMax, backends.OpTypeMin}
	for _, op := range ops {
		for n := 1; n <= 70; n++ {
			for mode := 0; mode < 3; mode++ {
				a, b := gen(n), gen(n)
				as, bs := gen(1)[0], gen(1)[0]
				aScalar, bScalar := mode == 2, mode == 1
				got, want := make([]float32, n), make([]float32, n)
				binaryChunk(op, got, a, &as, aScalar, b, &bs, bScalar)
				goLoops(func() { binaryChunk(op, want, a, &as, aScalar, b, &bs, bScalar) })
				for i := range want {
					// Go does not define which NaN max and min return (the
					// compiled code and the runtime's fmax differ); any NaN
					// stands for a NaN there.
					minMax := op == backends.OpTypeMax || op == backends.OpTypeMin
					if minMax && math.IsNaN(float64(want[i])) && math.IsNaN(float64(got[i])) {
						continue
					}
					if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
						t.Fatalf("%s mode %d n %d [%d]: %g (%#x), Go loop %g (%#x)", op, mode, n, i,
							got[i], math.Float32bits(got[i]), want[i], math.Float32bits(want[i]))
					}
				}
			}
		}
	}
}

// TestVecSqrtMatchesGo checks the AVX-512 and AVX2 square roots against
// Go's float32(math.Sqrt(float64(x))) bit for bit, specials and subnormals
// included.
func TestVecSqrtMatchesGo(t *testing.T) {
	eachVecPath(t, func(t *testing.T, _ func(func())) { testVecSqrtMatchesGo(t) })
}

func testVecSqrtMatchesGo(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 3))
	xs := []float32{0, float32(math.Copysign(0, -1)), 1e-45, 3e-39, -1, -1e-45, 1, 2, 4, math.MaxFloat32,
		float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN())}
	for range 100000 {
		xs = append(xs, math.Float32frombits(r.Uint32()&0x7fffffff))
	}
	for n := 1; n <= len(xs); n += 1 + n/3 {
		got := make([]float32, n)
		unaryChunk(backends.OpTypeSqrt, got, xs[:n])
		for i, x := range xs[:n] {
			want := float32(math.Sqrt(float64(x)))
			if math.Float32bits(got[i]) != math.Float32bits(want) {
				t.Fatalf("sqrt(%g) = %g (%#x), Go %g (%#x)", x, got[i], math.Float32bits(got[i]), want, math.Float32bits(want))
			}
		}
	}
}

// TestVecSignMatchesGo checks the AVX-512 and AVX2 Sign against the Go
// loop bit for bit: ±0, subnormals, ±Inf, NaNs with any payload, random
// bit patterns.
func TestVecSignMatchesGo(t *testing.T) {
	eachVecPath(t, testVecSignMatchesGo)
}

func testVecSignMatchesGo(t *testing.T, goLoops func(func())) {
	r := rand.New(rand.NewPCG(4, 5))
	xs := []float32{0, float32(math.Copysign(0, -1)), 1e-45, -1e-45, 1, -1, float32(math.Inf(1)), float32(math.Inf(-1)),
		float32(math.NaN()), math.Float32frombits(0xffc00001), math.Float32frombits(0x7f800001), math.MaxFloat32}
	for range 10000 {
		xs = append(xs, math.Float32frombits(r.Uint32()))
	}
	for _, n := range []int{1, 15, 16, 17, 33, len(xs)} {
		got, want := make([]float32, n), make([]float32, n)
		signFloat32(got, xs[:n])
		goLoops(func() { signFloat32(want, xs[:n]) })
		for i := range want {
			if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
				t.Fatalf("sign(%g = %#x) = %g with vector loops, %g in Go", xs[i], math.Float32bits(xs[i]), got[i], want[i])
			}
		}
	}
}

// TestMaxOfMatchesLoop compares the vectorised maximum of a row with Go's
// max applied in order, on signed zeros, infinities and NaNs.
func TestMaxOfMatchesLoop(t *testing.T) {
	r := rand.New(rand.NewPCG(6, 7))
	lowest := float32(-math.MaxFloat32)
	specials := []float32{0, float32(math.Copysign(0, -1)), float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()), lowest}
	for trial := 0; trial < 2000; trial++ {
		n := 1 + r.IntN(100)
		x := make([]float32, n)
		for i := range x {
			switch r.IntN(10) {
			case 0:
				x[i] = specials[r.IntN(len(specials))]
			case 1:
				x[i] = float32(math.Copysign(0, -1))
			default:
				x[i] = float32(-r.Float64() * 10)
			}
		}
		want := lowest
		for _, v := range x {
			want = max(want, v)
		}
		got := maxOf(x, lowest)
		if math.IsNaN(float64(want)) != math.IsNaN(float64(got)) || (!math.IsNaN(float64(want)) && math.Float32bits(got) != math.Float32bits(want)) {
			t.Fatalf("max of %v = %g, in-order loop %g", x, got, want)
		}
	}
}
