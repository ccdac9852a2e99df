package cpubackend

import (
	"fmt"
	"testing"

	"github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/tensors"
)

// BenchmarkElementwise times one execution of small element-wise graphs of an
// MLP step (a ReLU, its gradient) on [256, 512], with per-op timings when
// GOTRAIN_OPSTATS is set.
func BenchmarkElementwise(b *testing.B) {
	graphs := []struct {
		name string
		fn   func(x, y *graph.Node) *graph.Node
	}{
		{"relu", func(x, y *graph.Node) *graph.Node { return graph.Max(x, graph.ScalarZero(x.Graph(), x.DType())) }},
		{"add", func(x, y *graph.Node) *graph.Node { return graph.Add(x, y) }},
		{"chain5", func(x, y *graph.Node) *graph.Node {
			return graph.Mul(graph.Sign(graph.Add(graph.Sign(graph.Sub(x, y)), y)), y)
		}},
	}
	for _, size := range [][2]int{{256, 512}, {784, 512}} {
		for _, gr := range graphs {
			b.Run(fmt.Sprintf("%s/%dx%d", gr.name, size[0], size[1]), func(b *testing.B) {
				be, err := New("ops_sequential")
				if err != nil {
					b.Fatal(err)
				}
				defer be.Finalize()
				exec, err := graph.NewExec(be, gr.fn)
				if err != nil {
					b.Fatal(err)
				}
				x, y := fusionInputs(size[0] * size[1])
				tx := tensors.FromFlatDataAndDimensions(x, size[0], size[1])
				ty := tensors.FromFlatDataAndDimensions(y, size[0], size[1])
				for b.Loop() {
					outs, err := exec.Exec(tx, ty)
					if err != nil {
						b.Fatal(err)
					}
					outs[0].FinalizeAll()
				}
			})
		}
	}
}
