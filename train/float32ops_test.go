package train

import (
	"math"
	"testing"

	"github.com/gomlx/gomlx/pkg/core/dtypes"
	"github.com/gomlx/gomlx/pkg/core/dtypes/bfloat16"
	"github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/tensors"
)

func TestInFloat32(t *testing.T) {
	b := testBackend(t)
	in := []float32{1000, 1001, 1002, 999}
	for _, dt := range []dtypes.DType{dtypes.Float32, dtypes.BFloat16} {
		var seen dtypes.DType
		exec, err := graph.NewExec(b, func(x *graph.Node) *graph.Node {
			x = graph.ConvertDType(x, dt)
			y := InFloat32(x, func(v *graph.Node) *graph.Node {
				seen = v.DType()
				return graph.Softmax(v, -1)
			})
			return graph.ConvertDType(y, dtypes.Float32)
		})
		if err != nil {
			t.Fatal(err)
		}
		out, err := exec.Exec1(tensors.FromFlatDataAndDimensions(in, 4))
		if err != nil {
			t.Fatal(err)
		}
		got := tensors.MustCopyFlatData[float32](out)
		if seen != dtypes.Float32 {
			t.Errorf("%s: fn saw %s, want float32", dt, seen)
		}
		// exp(x - max) / sum, from inputs as rounded to dt.
		ref := make([]float64, 4)
		var sum float64
		for i, v := range in {
			x := float64(v)
			if dt == dtypes.BFloat16 {
				x = float64(bfloat16.FromFloat32(v).Float32())
			}
			ref[i] = math.Exp(x - 1002)
			sum += ref[i]
		}
		for i := range ref {
			tol := 1e-6
			if dt == dtypes.BFloat16 {
				tol = 1e-2 // the result is rounded to bfloat16
			}
			if math.Abs(float64(got[i])-ref[i]/sum) > tol {
				t.Errorf("%s: softmax[%d] = %v, want %v", dt, i, got[i], ref[i]/sum)
			}
		}
	}
}
