package cpubackend

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/pkg/core/dtypes"
	"github.com/gomlx/gomlx/pkg/core/dtypes/bfloat16"
	"github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/shapes"
	"github.com/gomlx/gomlx/pkg/core/tensors"
)

type dgCase struct {
	lhs, rhs       []int
	lc, lb, rc, rb []int
	gemm           bool // expected to run on the SGEMM path
	inPlace        bool // else expected to read its operands in place (dotgeneral_inplace.go)
}

var dgCases = []dgCase{
	{lhs: []int{5, 7}, rhs: []int{7, 3}, lc: []int{1}, rc: []int{0}, gemm: true},
	{lhs: []int{7, 5}, rhs: []int{7, 3}, lc: []int{0}, rc: []int{0}, gemm: true},                                         // transA
	{lhs: []int{5, 7}, rhs: []int{3, 7}, lc: []int{1}, rc: []int{1}, gemm: true},                                         // transB
	{lhs: []int{7, 5}, rhs: []int{3, 7}, lc: []int{0}, rc: []int{1}, gemm: true},                                         // both
	{lhs: []int{2, 5, 7}, rhs: []int{2, 7, 3}, lc: []int{2}, lb: []int{0}, rc: []int{1}, rb: []int{0}, gemm: true},       // batch
	{lhs: []int{2, 7, 5}, rhs: []int{2, 3, 7}, lc: []int{1}, lb: []int{0}, rc: []int{2}, rb: []int{0}, gemm: true},       // batch, both trans
	{lhs: []int{5, 2, 7}, rhs: []int{2, 7, 3}, lc: []int{2}, lb: []int{1}, rc: []int{1}, rb: []int{0}, inPlace: true},    // batch not leading
	{lhs: []int{4, 3, 5, 6}, rhs: []int{5, 6, 8}, lc: []int{2, 3}, rc: []int{0, 1}, gemm: true},                          // two contracting axes
	{lhs: []int{4, 5, 6}, rhs: []int{6, 5, 8}, lc: []int{1, 2}, rc: []int{1, 0}, gemm: false},                            // contracting order differs
	{lhs: []int{3, 4, 9}, rhs: []int{9, 2, 5}, lc: []int{2}, rc: []int{0}, gemm: true},                                   // several cross axes
	{lhs: []int{33, 129}, rhs: []int{129, 65}, lc: []int{1}, rc: []int{0}, gemm: true},                                   // odd sizes
	{lhs: []int{1, 17}, rhs: []int{17, 1}, lc: []int{1}, rc: []int{0}, gemm: true},                                       // 1x1 output
	{lhs: []int{64, 300}, rhs: []int{200, 300}, lc: []int{1}, rc: []int{1}, gemm: true},                                  // larger, transB
	{lhs: []int{3, 64, 100}, rhs: []int{3, 100, 37}, lc: []int{2}, lb: []int{0}, rc: []int{1}, rb: []int{0}, gemm: true}, // larger batch
	// Batch axes among the others, read in place with each item's start:
	{lhs: []int{2, 5, 3, 4}, rhs: []int{2, 6, 3, 4}, lc: []int{3}, lb: []int{0, 2}, rc: []int{3}, rb: []int{0, 2}, inPlace: true}, // attention scores [B, T, H, D]
	{lhs: []int{2, 3, 5, 6}, rhs: []int{2, 6, 3, 4}, lc: []int{3}, lb: []int{0, 1}, rc: []int{1}, rb: []int{0, 2}, inPlace: true}, // attention values
	{lhs: []int{2, 6, 3, 5}, rhs: []int{2, 3, 6, 4}, lc: []int{1}, lb: []int{0, 2}, rc: []int{2}, rb: []int{0, 1}, inPlace: true}, // both transposed, batch axes in another order
	{lhs: []int{3, 4, 2, 5}, rhs: []int{2, 5, 3, 6}, lc: []int{3}, lb: []int{2, 0}, rc: []int{1}, rb: []int{0, 2}, inPlace: true}, // batch axes swapped in order
	// Layouts the SGEMM reads only after a transposing copy (execDotGeneralTransposed):
	{lhs: []int{6, 9}, rhs: []int{4, 9, 5}, lc: []int{1}, rc: []int{1}},                                   // a stack of expert weights [E, K, H]
	{lhs: []int{5, 4, 2}, rhs: []int{2, 4, 3}, lc: []int{1}, lb: []int{2}, rc: []int{1}, rb: []int{0}},    // a batch axis last
	{lhs: []int{4, 2, 3, 5}, rhs: []int{2, 5, 6}, lc: []int{3}, lb: []int{1}, rc: []int{1}, rb: []int{0}}, // a batch axis between cross axes
	{lhs: []int{31, 17, 3}, rhs: []int{3, 31, 40}, lc: []int{0, 2}, rc: []int{1, 0}},                      // two contracting axes, swapped
}

func randData(r *rand.Rand, dims []int) []float32 {
	n := 1
	for _, d := range dims {
		n *= d
	}
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(r.NormFloat64())
	}
	return v
}

func mustBackend(t *testing.T, config string) backends.Backend {
	t.Helper()
	b, err := New(config)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func runDotGeneral(t *testing.T, b backends.Backend, c dgCase, xv, yv []float32) []float32 {
	t.Helper()
	exec, err := graph.NewExec(b, func(lhs, rhs *graph.Node) *graph.Node {
		return graph.DotGeneral(lhs, c.lc, c.lb, rhs, c.rc, c.rb)
	})
	if err != nil {
		t.Fatal(err)
	}
	x := tensors.FromFlatDataAndDimensions(xv, c.lhs...)
	y := tensors.FromFlatDataAndDimensions(yv, c.rhs...)
	out, err := exec.Exec(x, y)
	if err != nil {
		t.Fatal(err)
	}
	v, err := tensors.CopyFlatData[float32](out[0])
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestDotGeneralGEMMMatchesSimpleGo compares the SGEMM path with simplego's
// own DotGeneral on layouts the SGEMM reads in place and layouts it reads
// after a transposing copy.
func TestDotGeneralGEMMMatchesSimpleGo(t *testing.T) {
	fast := mustBackend(t, "ops_sequential")
	slow := mustBackend(t, "ops_sequential,no_gemm")
	r := rand.New(rand.NewPCG(1, 2))
	for i, c := range dgCases {
		t.Run(fmt.Sprintf("%d:%v.%v", i, c.lhs, c.rhs), func(t *testing.T) {
			params := dotGeneralNodeData{lhsContractingAxes: c.lc, lhsBatchAxes: c.lb, rhsContractingAxes: c.rc, rhsBatchAxes: c.rb}
			ls, rs := shapes.Make(dtypes.Float32, c.lhs...), shapes.Make(dtypes.Float32, c.rhs...)
			params.batchSize, params.lhsCrossSize, params.contractingSize, _ = dgFindSizes(ls, c.lc, c.lb)
			_, params.rhsCrossSize, _, _ = dgFindSizes(rs, c.rc, c.rb)
			if _, ok := dotGeneralGEMM(&params, ls, rs); ok != c.gemm {
				t.Fatalf("SGEMM path chosen = %v, want %v", ok, c.gemm)
			}
			x, y := randData(r, c.lhs), randData(r, c.rhs)
			before, beforeInPlace := transposedDots.Load(), inPlaceDots.Load()
			got := runDotGeneral(t, fast, c, x, y)
			transposed, inPlace := transposedDots.Load()-before, inPlaceDots.Load()-beforeInPlace
			if (inPlace > 0) != c.inPlace || (transposed > 0) != (!c.gemm && !c.inPlace) {
				t.Errorf("%d products ran through the transposing copy, %d in place; SGEMM layout %v, in place %v", transposed, inPlace, c.gemm, c.inPlace)
			}
			want := runDotGeneral(t, slow, c, x, y)
			if len(got) != len(want) {
				t.Fatalf("%d values, want %d", len(got), len(want))
			}
			tol := 1e-5 * math.Sqrt(float64(params.contractingSize))
			var worst float64
			for j := range got {
				d := math.Abs(float64(got[j]-want[j])) / math.Max(1, math.Abs(float64(want[j])))
				worst = max(worst, d)
				if d > tol || math.IsNaN(float64(got[j])) {
					t.Fatalf("value %d: %g, simplego %g (tolerance %g)", j, got[j], want[j], tol)
				}
			}
			t.Logf("max relative difference %.2g", worst)
		})
	}
}

// TestDotGeneralBF16MatchesSimpleGo runs every layout with bfloat16
// operands: widened to float32 for the SGEMM, against simplego's own
// bfloat16 DotGeneral (which also accumulates in float32). Both narrow the
// float32 result by truncation, so they may differ by one bfloat16 unit
// where the float32 sums round differently.
func TestDotGeneralBF16MatchesSimpleGo(t *testing.T) {
	fast := mustBackend(t, "ops_sequential")
	slow := mustBackend(t, "ops_sequential,no_gemm")
	r := rand.New(rand.NewPCG(3, 4))
	run := func(b backends.Backend, c dgCase, xv, yv []bfloat16.BFloat16) []float32 {
		exec, err := graph.NewExec(b, func(lhs, rhs *graph.Node) *graph.Node {
			return graph.DotGeneral(lhs, c.lc, c.lb, rhs, c.rc, c.rb)
		})
		if err != nil {
			t.Fatal(err)
		}
		out, err := exec.Exec(tensors.FromFlatDataAndDimensions(xv, c.lhs...), tensors.FromFlatDataAndDimensions(yv, c.rhs...))
		if err != nil {
			t.Fatal(err)
		}
		if out[0].DType() != dtypes.BFloat16 {
			t.Fatalf("output dtype %s", out[0].DType())
		}
		v, err := tensors.CopyFlatData[bfloat16.BFloat16](out[0])
		if err != nil {
			t.Fatal(err)
		}
		f := make([]float32, len(v))
		for i, x := range v {
			f[i] = x.Float32()
		}
		return f
	}
	toBF16 := func(v []float32) []bfloat16.BFloat16 {
		out := make([]bfloat16.BFloat16, len(v))
		for i, x := range v {
			out[i] = bfloat16.FromFloat32(x)
		}
		return out
	}
	for i, c := range dgCases {
		x, y := toBF16(randData(r, c.lhs)), toBF16(randData(r, c.rhs))
		before := bf16Dots.Load()
		got := run(fast, c, x, y)
		if bf16Dots.Load() == before {
			t.Fatalf("case %d: the bfloat16 product did not run on the SGEMM", i)
		}
		want := run(slow, c, x, y)
		for j := range want {
			// One bfloat16 unit (2^-7 relative) of the larger magnitude, plus
			// float32 rounding of the sums.
			tol := math.Max(math.Abs(float64(want[j])), math.Abs(float64(got[j])))/128 + 1e-4
			if d := math.Abs(float64(got[j] - want[j])); d > tol || math.IsNaN(float64(got[j])) {
				t.Fatalf("case %d %v.%v value %d: %g, simplego %g", i, c.lhs, c.rhs, j, got[j], want[j])
			}
		}
	}
}
