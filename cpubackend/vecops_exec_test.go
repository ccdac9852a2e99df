package cpubackend

import (
	"math"
	"testing"

	"github.com/gomlx/gomlx/backends/simplego"
	"github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/tensors"
)

// TestUnfusedBinaryMatchesSimpleGo runs unfused float32 Add, Sub, Mul, Div,
// Max and Min (vector-vector, vector-scalar, scalar-vector, odd lengths, special
// values) on this backend and on GoMLX's simplego: the same bits.
func TestUnfusedBinaryMatchesSimpleGo(t *testing.T) {
	fn := func(x, y, s *graph.Node) []*graph.Node {
		return []*graph.Node{
			graph.Add(x, y), graph.Sub(x, y), graph.Mul(x, y), graph.Div(x, y),
			graph.Add(x, s), graph.Sub(x, s), graph.Mul(s, x), graph.Div(s, y),
			graph.Max(x, y), graph.Min(x, y), graph.Max(x, s), graph.Min(s, y),
		}
	}
	run := func(cfgBackend string, n int) [][]float32 {
		var exec *graph.Exec
		var err error
		if cfgBackend == "simplego" {
			be, err2 := simplego.New("ops_sequential") // its parallel executor has a data race (see exec.go)
			if err2 != nil {
				t.Fatal(err2)
			}
			defer be.Finalize()
			exec, err = graph.NewExec(be, fn)
		} else {
			be := mustBackend(t, cfgBackend)
			defer be.Finalize()
			exec, err = graph.NewExec(be, fn)
		}
		if err != nil {
			t.Fatal(err)
		}
		x, y := fusionInputs(n)
		outs, err := exec.Exec(tensors.FromFlatDataAndDimensions(x, n), tensors.FromFlatDataAndDimensions(y, n), float32(-0.75))
		if err != nil {
			t.Fatal(err)
		}
		var res [][]float32
		for _, o := range outs {
			v, err := tensors.CopyFlatData[float32](o)
			if err != nil {
				t.Fatal(err)
			}
			res = append(res, v)
		}
		return res
	}
	// 140,001 elements: split over two goroutines, at a multiple of 16.
	for _, n := range []int{90, 1000, 4099, 140001} {
		want := run("simplego", n)
		got := run("no_fusion", n)
		for i := range want {
			for j := range want[i] {
				g, w := got[i][j], want[i][j]
				if math.Float32bits(g) != math.Float32bits(w) && !(math.IsNaN(float64(g)) && math.IsNaN(float64(w))) {
					t.Fatalf("n=%d output %d [%d]: %g, simplego %g", n, i, j, g, w)
				}
			}
		}
	}
}
