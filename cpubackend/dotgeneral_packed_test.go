package cpubackend

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/tensors"
)

// TestPackedWeightsMatchSingleProducts runs products that share a weight
// (x_t·w at every step and y_t·wᵀ, as a recurrent layer's forward and
// backward passes do) in one graph, where they read one packing of w, and
// each alone in its own graph: the results are the same bits.
func TestPackedWeightsMatchSingleProducts(t *testing.T) {
	const steps, batch, k, n = 5, 7, 45, 70
	r := rand.New(rand.NewPCG(5, 5))
	x := make([]float32, steps*batch*k)
	w := make([]float32, k*n)
	for i := range x {
		x[i] = float32(r.NormFloat64())
	}
	for i := range w {
		w[i] = float32(r.NormFloat64())
	}
	be, err := New("")
	if err != nil {
		t.Fatal(err)
	}
	defer be.Finalize()
	step := func(x, w *graph.Node, t int) (y, z *graph.Node) {
		xt := graph.Reshape(graph.Slice(x, graph.AxisElem(t)), batch, k)
		y = graph.MatMul(xt, w)
		z = graph.DotGeneral(y, []int{1}, nil, w, []int{1}, nil) // y·wᵀ
		return y, z
	}
	before := packGroupsFormed.Load()
	all, err := graph.NewExec(be, func(x, w *graph.Node) []*graph.Node {
		var outs []*graph.Node
		for t := range steps {
			y, z := step(x, w, t)
			outs = append(outs, y, z)
		}
		return outs
	})
	if err != nil {
		t.Fatal(err)
	}
	xt, wt := tensors.FromFlatDataAndDimensions(x, steps, batch, k), tensors.FromFlatDataAndDimensions(w, k, n)
	got, err := all.Exec(xt, wt)
	if err != nil {
		t.Fatal(err)
	}
	if formed := packGroupsFormed.Load() - before; formed != 2 {
		t.Errorf("%d pack groups formed, want 2 (w and wᵀ)", formed)
	}
	for s := range steps {
		one, err := graph.NewExec(be, func(x, w *graph.Node) []*graph.Node {
			y, z := step(x, w, s)
			return []*graph.Node{y, z}
		})
		if err != nil {
			t.Fatal(err)
		}
		want, err := one.Exec(xt, wt)
		if err != nil {
			t.Fatal(err)
		}
		for i := range want {
			g, err1 := tensors.CopyFlatData[float32](got[2*s+i])
			w, err2 := tensors.CopyFlatData[float32](want[i])
			if err1 != nil || err2 != nil {
				t.Fatal(err1, err2)
			}
			for j := range w {
				if math.Float32bits(g[j]) != math.Float32bits(w[j]) {
					t.Fatalf("step %d output %d [%d]: %g with the shared packing, %g alone", s, i, j, g[j], w[j])
				}
			}
		}
	}
}
