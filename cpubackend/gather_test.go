package cpubackend

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/gomlx/gomlx/backends/simplego"
	"github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/tensors"
)

// TestGatherMatchesSimpleGo compares Gather, whose contiguous runs this
// backend copies at once, with GoMLX's simplego: row gathers (embeddings,
// expert dispatch), gathers over two axes, partial slices, out-of-range
// indices (clamped).
func TestGatherMatchesSimpleGo(t *testing.T) {
	sgo, err := simplego.New("ops_sequential") // its parallel executor has a data race (see exec.go)
	if err != nil {
		t.Fatal(err)
	}
	defer sgo.Finalize()
	ours := mustBackend(t, "")
	defer ours.Finalize()
	r := rand.New(rand.NewPCG(4, 4))
	type gcase struct {
		name    string
		operand []int
		indices []int // dims of the index tensor; its last axis is the index vector
		fn      func(op, idx *graph.Node) *graph.Node
	}
	rows := func(op, idx *graph.Node) *graph.Node { return graph.Gather(op, idx) }
	cases := []gcase{
		{"rows", []int{10, 7}, []int{6, 1}, rows},
		{"rows of matrices", []int{9, 3, 5}, []int{2, 4, 1}, rows},
		{"two index axes", []int{4, 5, 6}, []int{7, 2}, rows},
		{"all axes", []int{4, 5}, []int{3, 2}, rows},
		{"slices", []int{8, 9}, []int{5, 2}, func(op, idx *graph.Node) *graph.Node {
			return graph.GatherSlices(op, []int{0, 1}, idx, []int{3, 4}, false)
		}},
		{"column slices", []int{6, 10, 4}, []int{3, 1}, func(op, idx *graph.Node) *graph.Node {
			return graph.GatherSlices(op, []int{1}, idx, []int{3}, false)
		}},
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
			m := 1
			for _, d := range c.indices {
				m *= d
			}
			idx := make([]int32, m)
			for i := range idx {
				idx[i] = int32(r.IntN(12)) - 1 // some out of range: clamped
			}
			run := func(name string, exec *graph.Exec, err error) string {
				if err != nil {
					t.Fatal(err)
				}
				out, err := exec.Exec(tensors.FromFlatDataAndDimensions(op, c.operand...), tensors.FromFlatDataAndDimensions(idx, c.indices...))
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				v, err := tensors.CopyFlatData[float32](out[0])
				if err != nil {
					t.Fatal(err)
				}
				return fmt.Sprint(out[0].Shape(), v)
			}
			se, err := graph.NewExec(sgo, c.fn)
			want := run("simplego", se, err)
			oe, err := graph.NewExec(ours, c.fn)
			got := run("cpu", oe, err)
			if got != want {
				t.Fatalf("got %s\nwant %s", got, want)
			}
		})
	}
}
