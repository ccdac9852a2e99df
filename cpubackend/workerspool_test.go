package cpubackend

import (
	"testing"
	"time"

	"github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/tensors"
)

// TestParallelOpsDoNotDeadlock runs a graph with many independent batched
// DotGenerals (simplego's own kernels, which split each batch over the
// worker pool) on a one-worker pool with ops in parallel. In simplego
// v0.26 an op waiting for its sub-tasks kept its worker slot while the
// sub-tasks waited for a slot, and such graphs could hang.
func TestParallelOpsDoNotDeadlock(t *testing.T) {
	b, err := New("ops_parallel,no_gemm,parallelism=1")
	if err != nil {
		t.Fatal(err)
	}
	defer b.Finalize()
	const parallel = 12
	exec, err := graph.NewExec(b, func(x, y *graph.Node) *graph.Node {
		var sum *graph.Node
		for i := range parallel {
			xi := graph.MulScalar(x, float64(i+1))
			d := graph.DotGeneral(xi, []int{2}, []int{0}, y, []int{1}, []int{0})
			if sum == nil {
				sum = d
			} else {
				sum = graph.Add(sum, d)
			}
		}
		return graph.ReduceAllSum(sum)
	})
	if err != nil {
		t.Fatal(err)
	}
	x := make([]float32, 8*6*5)
	y := make([]float32, 8*5*4)
	for i := range x {
		x[i] = 1
	}
	for i := range y {
		y[i] = 1
	}
	done := make(chan error, 1)
	go func() {
		for range 20 {
			out, err := exec.Exec(tensors.FromFlatDataAndDimensions(x, 8, 6, 5), tensors.FromFlatDataAndDimensions(y, 8, 5, 4))
			if err != nil {
				done <- err
				return
			}
			// Σ_i (i+1)·5 over 8·6·4 outputs = 78·5·192.
			if got := out[0].Value().(float32); got != 78*5*192 {
				t.Errorf("sum %g, want %d", got, 78*5*192)
			}
		}
		done <- nil
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("execution hung: worker-pool deadlock")
	}
}
