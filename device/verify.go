package device

import (
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/tensors"
	"github.com/gotrain/gotrain/internal/stats"
)

// VerifyResult is the outcome of Verify on one device.
type VerifyResult struct {
	// Device is the device's canonical name.
	Device string `json:"device"`
	// OK is true when the device computed the check within tolerance.
	OK bool `json:"ok"`
	// RelError is max|got-want| / max|want| against the float64 reference.
	RelError float64 `json:"rel_error"`
	// Tolerance is the largest RelError accepted.
	Tolerance float64 `json:"tolerance"`
	// FirstMS is the first call's time, graph build and compilation included.
	FirstMS float64 `json:"first_ms"`
	// MedianMS is the median of the steady-state calls (results copied back to the host).
	MedianMS float64 `json:"median_ms"`
	// Repeats is the number of steady-state calls timed.
	Repeats int `json:"repeats"`
	// Err says what went wrong, if anything.
	Err string `json:"error,omitempty"`
}

// VerifyShape is the size of the check: C = A·B with A m×k and B k×n, then
// the column sums of C.
const (
	verifyM, verifyK, verifyN = 96, 80, 64
	verifyTolerance           = 1e-4
)

// verifyInputs returns the float32 inputs and the float64 reference of the check.
func verifyInputs() (a, b []float32, want []float64) {
	rng := rand.New(rand.NewPCG(1, 2))
	a = make([]float32, verifyM*verifyK)
	b = make([]float32, verifyK*verifyN)
	for i := range a {
		a[i] = float32(rng.Float64()*2 - 1)
	}
	for i := range b {
		b[i] = float32(rng.Float64()*2 - 1)
	}
	want = make([]float64, verifyN)
	for i := 0; i < verifyM; i++ {
		for j := 0; j < verifyN; j++ {
			var s float64
			for p := 0; p < verifyK; p++ {
				s += float64(a[i*verifyK+p]) * float64(b[p*verifyN+j])
			}
			want[j] += s
		}
	}
	return a, b, want
}

// relError returns max|got-want| / max|want|.
func relError(got []float32, want []float64) float64 {
	var num, den float64
	for i := range want {
		num = max(num, math.Abs(float64(got[i])-want[i]))
		den = max(den, math.Abs(want[i]))
	}
	if den == 0 {
		return num
	}
	return num / den
}

// Verify runs a small matmul + reduction on d, compares it with a float64 CPU
// reference and times it: the first call apart, then the median of repeats.
func Verify(d Device, repeats int) VerifyResult {
	res := VerifyResult{Device: d.Name, Tolerance: verifyTolerance, Repeats: repeats}
	a, b, want := verifyInputs()
	var run func() ([]float32, error)
	{
		// Native runs the graph on gotrain's cpu backend, which is what
		// graph workloads use on that device.
		backend, err := open(d)
		if err != nil {
			res.Err = err.Error()
			return res
		}
		defer backend.Finalize()
		exec, err := graph.NewExec(backend, func(x, y *graph.Node) *graph.Node {
			return graph.ReduceSum(graph.MatMul(x, y), 0)
		})
		if err != nil {
			res.Err = err.Error()
			return res
		}
		ta := tensors.FromFlatDataAndDimensions(a, verifyM, verifyK)
		tb := tensors.FromFlatDataAndDimensions(b, verifyK, verifyN)
		run = func() (out []float32, err error) {
			defer func() {
				if r := recover(); r != nil {
					err = fmt.Errorf("executing on %s: %v", d.Name, r)
				}
			}()
			outs, _, err := exec.ExecWithGraphOnDevice(backends.DeviceNum(d.Index), ta, tb) // ExecOnDevice ignores its device in GoMLX v0.26
			if err != nil {
				return nil, err
			}
			defer func() { _ = outs[0].FinalizeAll() }()
			return tensors.CopyFlatData[float32](outs[0])
		}
	}
	start := time.Now()
	got, err := run()
	res.FirstMS = msSince(start)
	if err != nil {
		res.Err = err.Error()
		return res
	}
	res.RelError = relError(got, want)
	times := make([]float64, 0, repeats)
	for range repeats {
		start := time.Now()
		got, err := run()
		times = append(times, msSince(start))
		if err != nil {
			res.Err = err.Error()
			return res
		}
		res.RelError = max(res.RelError, relError(got, want))
	}
	res.MedianMS = stats.Median(times)
	res.OK = res.RelError <= verifyTolerance
	if !res.OK {
		res.Err = fmt.Sprintf("relative error %.3g exceeds %.0g", res.RelError, verifyTolerance)
	}
	return res
}

func msSince(t time.Time) float64 { return float64(time.Since(t).Nanoseconds()) / 1e6 }
