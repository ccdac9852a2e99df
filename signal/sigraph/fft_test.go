package sigraph

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"sync"
	"testing"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/pkg/core/dtypes"
	"github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/tensors"

	"github.com/gotrain/gotrain/device"
	"github.com/gotrain/gotrain/signal/fft"
)

var (
	testBackendOnce sync.Once
	testBackend     backends.Backend
	testBackendErr  error
)

// testDevice is the device the package's graph tests run on:
// $GOTRAIN_TEST_DEVICE when set (scripts/gpu-verify.sh runs this package's
// test binary with it set to the GPU), else go, GoMLX's pure-Go simplego.
func testDevice() string {
	if d := os.Getenv("GOTRAIN_TEST_DEVICE"); d != "" {
		return d
	}
	return "go"
}

// graphBackend returns one backend of testDevice for the package's tests
// (simplego with ops_sequential, as device.Open gives it: see the simplego
// worker-pool deadlock in shared/notes/gomlx-v0.26.md).
func graphBackend(t testing.TB) backends.Backend {
	t.Helper()
	testBackendOnce.Do(func() {
		_, testBackend, testBackendErr = device.Open(testDevice())
	})
	if testBackendErr != nil {
		t.Fatalf("opening the test device %q: %v", testDevice(), testBackendErr)
	}
	return testBackend
}

// graphFFT runs plan.fft on a batch of sequences (rows of re/im, each of
// length nIn) in dtype dt and returns the complex bins.
func graphFFT(t testing.TB, plan fftPlan, dt dtypes.DType, rows [][]complex128, nIn, n, nOut int, inverse, realIn bool) [][]complex128 {
	t.Helper()
	b := graphBackend(t)
	exec, err := graph.NewExec(b, func(re, im *graph.Node) (*graph.Node, *graph.Node) {
		x := cnode{graph.ConvertDType(re, dt), graph.ConvertDType(im, dt)}
		if realIn {
			x.im = nil
		}
		y := plan.fft(x, nIn, n, nOut, inverse)
		return graph.ConvertDType(y.re, dtypes.Float64), graph.ConvertDType(y.im, dtypes.Float64)
	})
	if err != nil {
		t.Fatal(err)
	}
	defer exec.Finalize()
	re, im := make([]float64, len(rows)*nIn), make([]float64, len(rows)*nIn)
	for r, row := range rows {
		for i, v := range row[:nIn] {
			re[r*nIn+i], im[r*nIn+i] = real(v), imag(v)
		}
	}
	outs, err := exec.Exec(tensors.FromFlatDataAndDimensions(re, len(rows), nIn), tensors.FromFlatDataAndDimensions(im, len(rows), nIn))
	if err != nil {
		t.Fatal(err)
	}
	yr, err := tensors.CopyFlatData[float64](outs[0])
	if err != nil {
		t.Fatal(err)
	}
	yi, err := tensors.CopyFlatData[float64](outs[1])
	if err != nil {
		t.Fatal(err)
	}
	res := make([][]complex128, len(rows))
	for r := range rows {
		res[r] = make([]complex128, nOut)
		for k := range nOut {
			res[r][k] = complex(yr[r*nOut+k], yi[r*nOut+k])
		}
	}
	return res
}

func TestGraphFFTAgainstSignalFFT(t *testing.T) {
	type tc struct {
		n, nIn, nOut, directMax int
		inverse, realIn         bool
		dt                      dtypes.DType
		folded                  bool
	}
	var cases []tc
	for _, n := range []int{1, 2, 8, 64, 256, 1024, 2048, 4096} {
		for _, dm := range []int{64, 1 << 30} { // four-step, one DFT matrix
			if dm > 64 && n > 1024 {
				continue // the direct DFT of 2048+ is slow and tested at 1024
			}
			cases = append(cases, tc{n, n, n, dm, false, false, dtypes.Float64, false})
		}
	}
	cases = append(cases,
		tc{1024, 512, 1024, 64, false, false, dtypes.Float64, false}, // Welch blocks: zero-padded
		tc{1024, 500, 1024, 64, false, false, dtypes.Float64, false}, // padding not a whole row
		tc{1024, 1024, 1024, 64, true, false, dtypes.Float64, false}, // inverse
		tc{2048, 2048, 1025, 64, false, true, dtypes.Float64, false}, // MFCC: real input, half spectrum
		tc{2048, 2048, 1025, 64, false, true, dtypes.Float32, false},
		tc{256, 256, 256, 64, false, false, dtypes.Float32, false},
		tc{128, 128, 7, 8, true, false, dtypes.Float64, false}, // three levels of splitting
	)
	for _, c := range cases {
		if c.directMax == 64 && c.n > 64 { // the same with the folded four-step
			c.folded = true
			cases = append(cases, c)
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for _, c := range cases {
		name := fmt.Sprintf("n%d_in%d_out%d_direct%d_inv%v_real%v_%s_folded%v", c.n, c.nIn, c.nOut, c.directMax, c.inverse, c.realIn, c.dt, c.folded)
		t.Run(name, func(t *testing.T) {
			const batch = 3
			rows := make([][]complex128, batch)
			for r := range rows {
				rows[r] = make([]complex128, c.n)
				for i := range c.nIn {
					im := rng.NormFloat64()
					if c.realIn {
						im = 0
					}
					rows[r][i] = complex(rng.NormFloat64(), im)
				}
			}
			got := graphFFT(t, fftPlan{directMax: c.directMax, folded: c.folded}, c.dt, rows, c.nIn, c.n, c.nOut, c.inverse, c.realIn)
			p, err := fft.For(c.n)
			if err != nil {
				t.Fatal(err)
			}
			tol := 1e-12
			if c.dt == dtypes.Float32 {
				tol = 1e-5
			}
			for r := range rows {
				want := make([]complex128, c.n)
				scr := make([]complex128, c.n)
				if c.inverse {
					err = p.Inverse(want, rows[r], scr)
				} else {
					err = p.Forward(want, rows[r], scr)
				}
				if err != nil {
					t.Fatal(err)
				}
				var scale, e float64
				for _, v := range want {
					scale = max(scale, cabs(v))
				}
				for k := range c.nOut {
					e = max(e, cabs(got[r][k]-want[k]))
				}
				if e > tol*scale || math.IsNaN(e) {
					t.Errorf("row %d: max error %.3g (scale %.3g), want ≤ %.0g relative", r, e, scale, tol)
				}
			}
		})
	}
}

func cabs(c complex128) float64 { return math.Hypot(real(c), imag(c)) }
