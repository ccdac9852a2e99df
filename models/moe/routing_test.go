package moe

import (
	"math"
	"testing"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/pkg/core/distributed"
	"github.com/gomlx/gomlx/pkg/core/dtypes"
	"github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/shapes"
	"github.com/gomlx/gomlx/pkg/core/tensors"

	"github.com/gotrain/gotrain/device"
	"github.com/gotrain/gotrain/train"
)

// testBackend opens simplego the way training does.
func testBackend(t *testing.T) backends.Backend {
	t.Helper()
	_, b, err := device.Open("go")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Finalize)
	return b
}

// matrix flattens rows into a tensor.
func matrix(rows [][]float32) *tensors.Tensor {
	var flat []float32
	for _, r := range rows {
		flat = append(flat, r...)
	}
	return tensors.FromFlatDataAndDimensions(flat, len(rows), len(rows[0]))
}

// execN runs a graph function with several outputs once.
func execN(t *testing.T, b backends.Backend, fn any, args ...any) []*tensors.Tensor {
	t.Helper()
	e, err := graph.NewExecAny(b, fn)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Finalize()
	out, err := e.Exec(args...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// values copies a tensor to a flat slice.
func values(t *testing.T, x *tensors.Tensor) []float32 {
	t.Helper()
	v, err := tensors.CopyFlatData[float32](x)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func near(a, b []float32, tol float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Abs(float64(a[i]-b[i])) > tol {
			return false
		}
	}
	return true
}

func TestRouting(t *testing.T) {
	b := testBackend(t)
	// Logits whose softmax is easy to compute by hand: ln of the probabilities.
	ln := func(ps ...float64) []float32 {
		out := make([]float32, len(ps))
		for i, p := range ps {
			out[i] = float32(math.Log(p))
		}
		return out
	}
	tests := []struct {
		name     string
		logits   [][]float32
		active   []float32
		k        int
		capacity float64 // capacity factor
		sel      []float32
		keep     []float32
		weights  []float32
	}{{
		name:    "top-2 renormalised",
		logits:  [][]float32{ln(0.5, 0.3, 0.2), ln(0.1, 0.2, 0.7)},
		active:  []float32{1, 1, 1},
		k:       2,
		sel:     []float32{1, 1, 0, 0, 1, 1},
		keep:    []float32{1, 1, 0, 0, 1, 1},
		weights: []float32{0.625, 0.375, 0, 0, 0.2 / 0.9, 0.7 / 0.9},
	}, {
		name:    "top-1 keeps the probability",
		logits:  [][]float32{ln(0.5, 0.3, 0.2), ln(0.1, 0.2, 0.7)},
		active:  []float32{1, 1, 1},
		k:       1,
		sel:     []float32{1, 0, 0, 0, 0, 1},
		keep:    []float32{1, 0, 0, 0, 0, 1},
		weights: []float32{0.5, 0, 0, 0, 0, 0.7},
	}, {
		name:    "free slot never chosen, probabilities over the active ones",
		logits:  [][]float32{ln(0.2, 0.3, 0.5)},
		active:  []float32{1, 1, 0},
		k:       1,
		sel:     []float32{0, 1, 0},
		keep:    []float32{0, 1, 0},
		weights: []float32{0, 0.6, 0},
	}, {
		name:    "tied logits are selected together",
		logits:  [][]float32{ln(0.4, 0.2, 0.2, 0.2)},
		active:  []float32{1, 1, 1, 1},
		k:       2,
		sel:     []float32{1, 1, 1, 1},
		keep:    []float32{1, 1, 1, 1},
		weights: []float32{0.4, 0.2, 0.2, 0.2},
	}, {
		// 4 rows, 2 experts, top-1, factor 0.5: capacity ceil(0.5*1*4/2) = 1.
		name:     "capacity drops later rows",
		logits:   [][]float32{ln(0.9, 0.1), ln(0.8, 0.2), ln(0.3, 0.7), ln(0.4, 0.6)},
		active:   []float32{1, 1},
		k:        1,
		capacity: 0.5,
		sel:      []float32{1, 0, 1, 0, 0, 1, 0, 1},
		keep:     []float32{1, 0, 0, 0, 0, 1, 0, 0},
		weights:  []float32{0.9, 0, 0, 0, 0, 0.7, 0, 0},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out := execN(t, b, func(z, a *graph.Node) []*graph.Node {
				r := route(z, graph.ZerosLike(a), a, tc.k, tc.capacity)
				return []*graph.Node{r.sel, r.keep, r.weights}
			}, matrix(tc.logits), tensors.FromFlatDataAndDimensions(tc.active, len(tc.active)))
			for i, want := range [][]float32{tc.sel, tc.keep, tc.weights} {
				if got := values(t, out[i]); !near(got, want, 1e-5) {
					t.Errorf("%s = %v, want %v", []string{"sel", "keep", "weights"}[i], got, want)
				}
			}
		})
	}
}

func TestBalanceLoss(t *testing.T) {
	b := testBackend(t)
	tests := []struct {
		name   string
		probs  [][]float32
		sel    [][]float32
		active []float32
		alpha  float64
		want   float64
	}{
		// Uniform routing gives alpha.
		{"uniform", [][]float32{{0.5, 0.5}, {0.5, 0.5}}, [][]float32{{1, 0}, {0, 1}}, []float32{1, 1}, 0.01, 0.01},
		// f = (2/3, 1/3), P = (0.6, 0.4): 0.01*2*(0.4+0.4/3) = 0.0106667.
		{"skewed", [][]float32{{0.8, 0.2}, {0.6, 0.4}, {0.4, 0.6}}, [][]float32{{1, 0}, {1, 0}, {0, 1}}, []float32{1, 1}, 0.01, 0.01 * 2 * (2.0/3*0.6 + 1.0/3*0.4)},
		// All traffic on one of 3 active experts with P = 1: alpha*3.
		{"collapsed", [][]float32{{1, 0, 0}, {1, 0, 0}}, [][]float32{{1, 0, 0}, {1, 0, 0}}, []float32{1, 1, 1}, 0.1, 0.3},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out := execN(t, b, func(p, s, a *graph.Node) []*graph.Node {
				return []*graph.Node{balanceLoss(p, s, a, tc.alpha)}
			}, matrix(tc.probs), matrix(tc.sel), tensors.FromFlatDataAndDimensions(tc.active, len(tc.active)))
			if got := values(t, out[0])[0]; math.Abs(float64(got)-tc.want) > 1e-6 {
				t.Errorf("balance loss = %g, want %g", got, tc.want)
			}
		})
	}
}

func TestPlacement(t *testing.T) {
	tests := []struct {
		name    string
		active  []bool
		devices int
		free    int
		counts  []int
	}{
		{"one device", []bool{true, true, false, false}, 1, 2, []int{2}},
		{"fewest experts on device 1", []bool{true, true, true, false, false, false}, 2, 3, []int{3, 0}},
		{"device 0 emptier", []bool{false, false, true, true, true, false}, 3, 0, []int{0, 2, 1}},
		{"none free", []bool{true, true}, 2, -1, []int{1, 1}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := FreeSlot(tc.active, tc.devices); got != tc.free {
				t.Errorf("FreeSlot = %d, want %d", got, tc.free)
			}
			got := Placement(tc.active, tc.devices)
			for i := range got {
				if got[i] != tc.counts[i] {
					t.Errorf("Placement = %v, want %v", got, tc.counts)
					break
				}
			}
		})
	}
}

func TestVariableSharding(t *testing.T) {
	mesh, err := distributed.NewDeviceMesh([]int{2}, []string{train.DataAxis})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		parallel bool
		varName  string
		shape    shapes.Shape
		sharded  bool
	}{
		{"expert weights", true, ExpertWeights + "0", shapes.Make(dtypes.Float32, 4, 6, 5), true},
		{"expert biases", true, ExpertBiases + "1", shapes.Make(dtypes.Float32, 4, 3), true},
		{"gate replicated", true, VarGateW, shapes.Make(dtypes.Float32, 6, 4), false},
		{"data parallel replicates experts", false, ExpertWeights + "0", shapes.Make(dtypes.Float32, 4, 6, 5), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, err := New(Config{Inputs: 6, Classes: 3, Experts: 4, Hidden: []int{5}, TopK: 2, Devices: 2, ExpertParallel: tc.parallel}, 1)
			if err != nil {
				t.Fatal(err)
			}
			spec, err := m.VariableSharding(mesh, "/"+Scope, tc.varName, tc.shape)
			if err != nil {
				t.Fatal(err)
			}
			if (spec != nil) != tc.sharded {
				t.Errorf("spec %v, want sharded %v", spec, tc.sharded)
			}
		})
	}
}
