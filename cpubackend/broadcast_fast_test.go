package cpubackend

import (
	"math/rand/v2"
	"testing"

	"github.com/gomlx/gomlx/pkg/core/dtypes"
	"github.com/gomlx/gomlx/pkg/core/dtypes/bfloat16"
	"github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/tensors"
)

// index returns the flat index in dims of the multi-index of flat index i
// in out, with size-1 axes of dims pinned to 0.
func bcastIndex(i int, out, dims []int) int {
	idx := make([]int, len(out))
	for a := len(out) - 1; a >= 0; a-- {
		idx[a] = i % out[a]
		i /= out[a]
	}
	f := 0
	for a, d := range dims {
		v := idx[a]
		if d == 1 {
			v = 0
		}
		f = f*d + v
	}
	return f
}

// TestBroadcastingOpsMatchReference checks binary operations with
// broadcast operands (one or both) and BroadcastInDim against a direct
// computation.
func TestBroadcastingOpsMatchReference(t *testing.T) {
	be, err := New("ops_sequential")
	if err != nil {
		t.Fatal(err)
	}
	defer be.Finalize()
	out := []int{3, 4, 5}
	cases := [][2][]int{
		{{3, 1, 5}, {3, 4, 5}},
		{{1, 4, 1}, {3, 4, 5}},
		{{3, 4, 1}, {1, 1, 5}},
		{{3, 4, 5}, {1, 1, 1}},
		{{1, 1, 5}, {3, 4, 5}},
		{{3, 1, 1}, {1, 4, 5}},
		{{1, 4, 5}, {3, 4, 1}},
	}
	r := rand.New(rand.NewPCG(4, 4))
	mk := func(dims []int) []float32 {
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
	for _, c := range cases {
		x, y := mk(c[0]), mk(c[1])
		exec, err := graph.NewExec(be, func(a, b *graph.Node) []*graph.Node {
			return []*graph.Node{graph.Mul(a, b), graph.Sub(a, b), graph.Max(a, b), graph.Div(a, b)}
		})
		if err != nil {
			t.Fatal(err)
		}
		res, err := exec.Exec(tensors.FromFlatDataAndDimensions(x, c[0]...), tensors.FromFlatDataAndDimensions(y, c[1]...))
		if err != nil {
			t.Fatalf("%v: %v", c, err)
		}
		for k, fn := range []func(a, b float32) float32{
			func(a, b float32) float32 { return a * b },
			func(a, b float32) float32 { return a - b },
			func(a, b float32) float32 { return max(a, b) },
			func(a, b float32) float32 { return a / b },
		} {
			got, _ := tensors.CopyFlatData[float32](res[k])
			for i := range got {
				want := fn(x[bcastIndex(i, out, c[0])], y[bcastIndex(i, out, c[1])])
				if got[i] != want {
					t.Fatalf("%v op %d [%d]: %g, want %g", c, k, i, got[i], want)
				}
			}
		}
	}
	// BroadcastInDim of a [4] vector to [3, 4, 5], and of [3, 5] to [3, 4, 5].
	for _, src := range [][]int{{1, 4, 1}, {3, 1, 5}, {3, 4, 1}, {1, 1, 5}, {3, 1, 1}} {
		v := mk([]int{src[0] * src[1] * src[2]})
		exec, err := graph.NewExec(be, func(a *graph.Node) *graph.Node {
			return graph.BroadcastToDims(graph.Reshape(a, src...), out...)
		})
		if err != nil {
			t.Fatal(err)
		}
		res, err := exec.Exec(tensors.FromFlatDataAndDimensions(v, len(v)))
		if err != nil {
			t.Fatal(err)
		}
		got, _ := tensors.CopyFlatData[float32](res[0])
		for i := range got {
			if want := v[bcastIndex(i, out, src)]; got[i] != want {
				t.Fatalf("broadcast %v [%d]: %g, want %g", src, i, got[i], want)
			}
		}
		// The same in bfloat16 (its 16-bit runs).
		exec16, err := graph.NewExec(be, func(a *graph.Node) *graph.Node {
			a = graph.ConvertDType(a, dtypes.BFloat16)
			return graph.ConvertDType(graph.BroadcastToDims(graph.Reshape(a, src...), out...), dtypes.Float32)
		})
		if err != nil {
			t.Fatal(err)
		}
		res, err = exec16.Exec(tensors.FromFlatDataAndDimensions(v, len(v)))
		if err != nil {
			t.Fatal(err)
		}
		got, _ = tensors.CopyFlatData[float32](res[0])
		for i := range got {
			if want := bfloat16.FromFloat32(v[bcastIndex(i, out, src)]).Float32(); got[i] != want {
				t.Fatalf("bfloat16 broadcast %v [%d]: %g, want %g", src, i, got[i], want)
			}
		}
	}
}

// BenchmarkBroadcastFloat32 times the transformer's broadcasts: a softmax's
// row maxima and sums along the last axis, a layer norm's statistics, a
// bias along the leading axes.
func BenchmarkBroadcastFloat32(b *testing.B) {
	for _, c := range []struct {
		name     string
		src, dst []int
	}{
		{"rows-16x4x64x64", []int{16, 4, 64, 1}, []int{16, 4, 64, 64}},
		{"rows-16x64x128", []int{16, 64, 1}, []int{16, 64, 128}},
		{"bias-16x64x128", []int{1, 1, 128}, []int{16, 64, 128}},
	} {
		ns, nd := 1, 1
		for i := range c.src {
			ns, nd = ns*c.src[i], nd*c.dst[i]
		}
		src, dst := make([]float32, ns), make([]float32, nd)
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(4 * nd))
			for b.Loop() {
				broadcastFloat32(dst, src, c.src, c.dst)
			}
		})
	}
}
