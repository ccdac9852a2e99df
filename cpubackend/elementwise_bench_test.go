package cpubackend

import (
	"fmt"
	"testing"

	"github.com/gomlx/gomlx/pkg/core/dtypes/bfloat16"
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
				x, y := fusionInputs(size[0] * size[1])
				tx := tensors.FromFlatDataAndDimensions(x, size[0], size[1])
				ty := tensors.FromFlatDataAndDimensions(y, size[0], size[1])
				benchBinaryGraph(b, "ops_sequential", gr.fn, tx, ty)
			})
		}
	}
}

// BenchmarkElementwiseBF16 times one bfloat16 multiplication, a fused
// program of one operation, on a transformer's SwiGLU activations
// [1024, 344], and a three-operation chain.
func BenchmarkElementwiseBF16(b *testing.B) {
	graphs := []struct {
		name string
		fn   func(x, y *graph.Node) *graph.Node
	}{
		{"mul", func(x, y *graph.Node) *graph.Node { return graph.Mul(x, y) }},
		{"chain3", func(x, y *graph.Node) *graph.Node { return graph.Mul(graph.Add(graph.Mul(x, y), y), x) }},
	}
	for _, gr := range graphs {
		b.Run(gr.name, func(b *testing.B) {
			const m, n = 1024, 344
			x, y := fusionInputs(m * n)
			bx, by := make([]bfloat16.BFloat16, len(x)), make([]bfloat16.BFloat16, len(y))
			for i := range x {
				bx[i], by[i] = bfloat16.FromFloat32(x[i]), bfloat16.FromFloat32(y[i])
			}
			tx := tensors.FromFlatDataAndDimensions(bx, m, n)
			ty := tensors.FromFlatDataAndDimensions(by, m, n)
			benchBinaryGraph(b, "", gr.fn, tx, ty)
		})
	}
}

// benchBinaryGraph times executions of fn on tx and ty on a backend made
// with config.
func benchBinaryGraph(b *testing.B, config string, fn func(x, y *graph.Node) *graph.Node, tx, ty *tensors.Tensor) {
	be, err := New(config)
	if err != nil {
		b.Fatal(err)
	}
	defer be.Finalize()
	exec, err := graph.NewExec(be, fn)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		outs, err := exec.Exec(tx, ty)
		if err != nil {
			b.Fatal(err)
		}
		outs[0].FinalizeAll()
	}
}

// BenchmarkAdamUpdate times one fused Adam update (adamGraph: parameter,
// moments and gradient in, parameter and moments out) of the MLP's largest
// weight, 784×512, with donated inputs as a training step passes them.
func BenchmarkAdamUpdate(b *testing.B) {
	be, err := New("ops_sequential")
	if err != nil {
		b.Fatal(err)
	}
	defer be.Finalize()
	exec, err := graph.NewExec(be, adamGraph)
	if err != nil {
		b.Fatal(err)
	}
	const n = 784 * 512
	x, _ := fusionInputs(n)
	state := make([]*tensors.Tensor, 4)
	for k := range state {
		v := make([]float32, n)
		for i := range v {
			v[i] = x[i] * x[i]
		}
		state[k] = tensors.FromFlatDataAndDimensions(v, n)
	}
	for b.Loop() {
		args := make([]any, 4)
		for k, t := range state {
			if k == 3 { // the gradient is new each step
				args[k] = t
				continue
			}
			d, err := graph.DonateTensorBuffer(t, be, 0)
			if err != nil {
				b.Fatal(err)
			}
			args[k] = d
		}
		outs, err := exec.Exec(args...)
		if err != nil {
			b.Fatal(err)
		}
		copy(state, outs)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/param")
}
