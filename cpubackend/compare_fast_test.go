package cpubackend

import (
	"testing"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/pkg/core/dtypes"
	"github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/tensors"
)

// TestEqualFast compares Equal with implicit broadcasting against
// simplego's executor (the "go" backend) on int32 and float32 operands.
func TestEqualFast(t *testing.T) {
	cases := []struct{ a, b []int }{{[]int{4, 5, 1}, []int{1, 1, 7}}, {[]int{3, 1, 6}, []int{3, 2, 6}}, {[]int{6}, []int{6}}, {[]int{2, 3}, []int{1, 1}}, {[]int{1, 4}, []int{5, 1}}}
	for _, c := range cases {
		for _, dt := range []dtypes.DType{dtypes.Int32, dtypes.Float32} {
			mk := func(dims []int, seed int) *tensors.Tensor {
				n := 1
				for _, d := range dims {
					n *= d
				}
				if dt == dtypes.Int32 {
					v := make([]int32, n)
					for i := range v {
						v[i] = int32((i*seed + 3) % 4)
					}
					return tensors.FromFlatDataAndDimensions(v, dims...)
				}
				v := make([]float32, n)
				for i := range v {
					v[i] = float32((i*seed+3)%4) * 0.5
				}
				return tensors.FromFlatDataAndDimensions(v, dims...)
			}
			fn := func(x, y *graph.Node) *graph.Node { return graph.ConvertDType(graph.Equal(x, y), dtypes.Float32) }
			var res [2][]float32
			for i, name := range []string{"cpu", "go"} {
				be, err := backends.NewWithConfig(name)
				if err != nil {
					t.Fatal(err)
				}
				out := graph.MustExecOnce(be, fn, mk(c.a, 5), mk(c.b, 7))
				res[i] = tensors.MustCopyFlatData[float32](out)
				be.Finalize()
			}
			if len(res[0]) != len(res[1]) {
				t.Fatalf("%v == %v (%s): %d values, simplego %d", c.a, c.b, dt, len(res[0]), len(res[1]))
			}
			for i := range res[0] {
				if res[0][i] != res[1][i] {
					t.Fatalf("%v == %v (%s): value %d is %g, simplego %g", c.a, c.b, dt, i, res[0][i], res[1][i])
				}
			}
		}
	}
}
