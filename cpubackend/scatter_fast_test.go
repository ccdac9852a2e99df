package cpubackend

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/gomlx/gomlx/backends/simplego"
	"github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/tensors"
)

// TestScatterSumMatchesSimpleGo compares ScatterSum, whose contiguous
// windows this backend adds a run at a time (in parallel when the start
// offsets increase), with GoMLX's simplego, bit for bit, on one thread and
// on several: the gradients of GatherSlices along the first axis (an
// im2col, col2im: windows that overlap), with sorted, unsorted and
// repeated starts and int32 or int64 indices, and gathers whose windows
// are not contiguous (the generic loop).
func TestScatterSumMatchesSimpleGo(t *testing.T) {
	sgo, err := simplego.New("ops_sequential")
	if err != nil {
		t.Fatal(err)
	}
	defer sgo.Finalize()
	var ours []*Backend
	for _, cfg := range []string{"parallelism=1", "parallelism=2", "parallelism=3", ""} {
		b := mustBackend(t, cfg)
		defer b.Finalize()
		ours = append(ours, b.(*Backend))
	}
	r := rand.New(rand.NewPCG(8, 9))
	type scase struct {
		name    string
		operand []int // the gathered tensor's dimensions
		axes    []int // the sliced axes
		sizes   []int // their slice sizes
		starts  func(n, limit int) []int
		count   int // slices
		int64s  bool
	}
	sorted := func(n, limit int) []int {
		s := make([]int, n)
		for i := range s {
			s[i] = i * limit / n
		}
		return s
	}
	random := func(n, limit int) []int {
		s := make([]int, n)
		for i := range s {
			s[i] = r.IntN(limit + 1)
		}
		return s
	}
	repeated := func(n, limit int) []int {
		s := sorted(n, limit)
		for i := range s {
			s[i] = s[i] / 7 * 7
		}
		return s
	}
	cases := []scase{
		{"col2im, sorted, parallel", []int{4100, 16}, []int{0}, []int{3}, sorted, 4098, false},
		{"col2im, sorted, small", []int{40, 5}, []int{0}, []int{3}, sorted, 38, false},
		{"col2im, sorted, int64", []int{3000, 8}, []int{0}, []int{5}, sorted, 2996, true},
		{"col2im, repeated starts", []int{3000, 8}, []int{0}, []int{4}, repeated, 2990, false},
		{"col2im, unsorted", []int{3000, 8}, []int{0}, []int{3}, random, 2500, false},
		{"rows of matrices", []int{500, 6, 7}, []int{0}, []int{2}, sorted, 400, false},
		{"not contiguous: two axes", []int{60, 9}, []int{0, 1}, []int{3, 4}, nil, 50, false},
		{"not contiguous: columns", []int{6, 100, 4}, []int{1}, []int{3}, nil, 30, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			n := 1
			for _, d := range c.operand {
				n *= d
			}
			op := make([]float32, n)
			for i := range op {
				op[i] = float32(r.NormFloat64())
			}
			idx := make([]int, 0, c.count*len(c.axes))
			var starts [][]int
			for j, axis := range c.axes {
				limit := c.operand[axis] - c.sizes[j]
				if c.starts != nil {
					starts = append(starts, c.starts(c.count, limit))
				} else {
					starts = append(starts, random(c.count, limit))
				}
			}
			for i := range c.count {
				for j := range c.axes {
					idx = append(idx, starts[j][i])
				}
			}
			idxTensor := func() *tensors.Tensor {
				var idxT *tensors.Tensor
				if c.int64s {
					v := make([]int64, len(idx))
					for i, x := range idx {
						v[i] = int64(x)
					}
					idxT = tensors.FromFlatDataAndDimensions(v, c.count, len(c.axes))
				} else {
					v := make([]int32, len(idx))
					for i, x := range idx {
						v[i] = int32(x)
					}
					idxT = tensors.FromFlatDataAndDimensions(v, c.count, len(c.axes))
				}
				return idxT
			}
			// The gradient of Σ w·GatherSlices(op) with respect to op is the
			// ScatterSum of w into zeros at the starts.
			wdims := []int{c.count}
			sliced := map[int]int{}
			for j, axis := range c.axes {
				sliced[axis] = c.sizes[j]
			}
			for axis, d := range c.operand {
				if s, ok := sliced[axis]; ok {
					d = s
				}
				wdims = append(wdims, d)
			}
			wn := 1
			for _, d := range wdims {
				wn *= d
			}
			w := make([]float32, wn)
			for i := range w {
				w[i] = float32(r.NormFloat64())
			}
			fn := func(x, idx, w *graph.Node) *graph.Node {
				y := graph.GatherSlices(x, c.axes, idx, c.sizes, false)
				return graph.Gradient(graph.ReduceAllSum(graph.Mul(y, w)), x)[0]
			}
			run := func(name string, b interface{ Name() string }, exec *graph.Exec, err error) []float32 {
				if err != nil {
					t.Fatal(err)
				}
				out, err := exec.Exec(tensors.FromFlatDataAndDimensions(op, c.operand...), idxTensor(), tensors.FromFlatDataAndDimensions(w, wdims...))
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				v, err := tensors.CopyFlatData[float32](out[0])
				if err != nil {
					t.Fatal(err)
				}
				return v
			}
			se, err := graph.NewExec(sgo, fn)
			want := run("simplego", sgo, se, err)
			for k, b := range ours {
				oe, err := graph.NewExec(b, fn)
				got := run("cpu", b, oe, err)
				if !slices.EqualFunc(got, want, func(a, b float32) bool { return math.Float32bits(a) == math.Float32bits(b) }) {
					for i := range got {
						if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
							t.Fatalf("backend %d: element %d = %v, simplego %v", k, i, got[i], want[i])
						}
					}
				}
			}
		})
	}
}
