package train

import (
	"github.com/gomlx/gomlx/pkg/core/dtypes"
	"github.com/gomlx/gomlx/pkg/core/graph"
)

// InFloat32 applies fn to x in float32 and returns the result in x's dtype:
// under mixed precision, models wrap the numerically sensitive parts (layer
// norms, softmax, log-sum-exp) with it so they stay in float32, as the
// harness's precision rules require. With float32 x it is fn(x).
func InFloat32(x *graph.Node, fn func(*graph.Node) *graph.Node) *graph.Node {
	dt := x.DType()
	if dt == dtypes.Float32 {
		return fn(x)
	}
	return graph.ConvertDType(fn(graph.ConvertDType(x, dtypes.Float32)), dt)
}
