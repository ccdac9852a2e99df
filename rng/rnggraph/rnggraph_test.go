package rnggraph

import (
	"testing"

	"github.com/gomlx/gomlx/backends"
	_ "github.com/gomlx/gomlx/backends/simplego"
	"github.com/gomlx/gomlx/pkg/core/dtypes"
	"github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/tensors"

	"github.com/gotrain/gotrain/rng"
)

func newBackend(t *testing.T) backends.Backend {
	t.Helper()
	b, err := backends.NewWithConfig("go")
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// exec runs fn on args with backend b, failing the test on any error.
func exec(t *testing.T, b backends.Backend, fn func([]*Node) *Node, args ...any) *tensors.Tensor {
	t.Helper()
	e, err := graph.NewExec(b, fn)
	if err != nil {
		t.Fatal(err)
	}
	var out []*tensors.Tensor
	err = func() (err error) {
		defer func() {
			if r := recover(); r != nil {
				t.Fatalf("panic: %v", r)
			}
		}()
		out, err = e.Exec(args...)
		return err
	}()
	if err != nil {
		t.Fatal(err)
	}
	return out[0]
}

func must(t *testing.T) func(*Node, error) *Node {
	return func(n *Node, err error) *Node {
		if err != nil {
			panic(err)
		}
		return n
	}
}

func TestMixAndKeyMatchHost(t *testing.T) {
	b := newBackend(t)
	in := []uint64{0, 1, rng.Golden, 1 << 63, ^uint64(0), 0x0123456789abcdef}
	got := tensors.MustCopyFlatData[uint64](exec(t, b, func(a []*Node) *Node { return must(t)(Mix(a[0])) }, in))
	for j, z := range in {
		if got[j] != rng.Mix(z) {
			t.Errorf("Mix(%#x) = %#x on the graph, %#x in Go", z, got[j], rng.Mix(z))
		}
	}
	epochs := []int64{0, 1, 2, 1000, -1}
	for _, seed := range []uint64{0, 42, ^uint64(0)} {
		got := tensors.MustCopyFlatData[uint64](exec(t, b, func(a []*Node) *Node { return must(t)(PermutationKey(seed, a[0])) }, epochs))
		for j, e := range epochs {
			if want := rng.PermutationKey(seed, uint64(e)); got[j] != want {
				t.Errorf("PermutationKey(%d, %d) = %#x on the graph, %#x in Go", seed, e, got[j], want)
			}
		}
	}
}

func TestPermuteMatchesHost(t *testing.T) {
	b := newBackend(t)
	tests := []struct {
		n     uint64
		dtype dtypes.DType
	}{
		{1, dtypes.Int64}, {2, dtypes.Uint64}, {3, dtypes.Int32}, {7, dtypes.Int64},
		{64, dtypes.Uint64}, {1000, dtypes.Int64}, {4097, dtypes.Int32},
	}
	for _, tc := range tests {
		for _, key := range []uint64{0, rng.PermutationKey(3, 0), rng.PermutationKey(3, 1), ^uint64(0)} {
			// Every index of [0, n), plus a few past the end (returned unchanged).
			idx := make([]int64, tc.n+3)
			for j := range idx {
				idx[j] = int64(j)
			}
			it := tensors.FromValue(idx)
			got := tensors.MustCopyFlatData[uint64](exec(t, b, func(a []*Node) *Node {
				return must(t)(Permute(graph.ConvertDType(a[0], tc.dtype), tc.n, a[1]))
			}, it, key))
			for j := range idx {
				if want := rng.Permute(uint64(j), tc.n, key); got[j] != want {
					t.Fatalf("n=%d key %#x: Permute(%d) = %d on the graph, %d in Go", tc.n, key, j, got[j], want)
				}
			}
		}
	}
}

func TestPermuteErrors(t *testing.T) {
	b := newBackend(t)
	tests := []struct {
		name string
		fn   func(g *graph.Graph) error
	}{
		{"float index", func(g *graph.Graph) error {
			_, err := Permute(graph.Const(g, []float32{1}), 5, graph.Const(g, uint64(1)))
			return err
		}},
		{"vector key", func(g *graph.Graph) error {
			_, err := Permute(graph.Const(g, []int64{1}), 5, graph.Const(g, []uint64{1, 2}))
			return err
		}},
		{"float epoch", func(g *graph.Graph) error {
			_, err := PermutationKey(1, graph.Const(g, float32(1)))
			return err
		}},
		{"int mix", func(g *graph.Graph) error {
			_, err := Mix(graph.Const(g, int64(1)))
			return err
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g := graph.NewGraph(b, tc.name)
			if err := tc.fn(g); err == nil {
				t.Error("no error")
			}
		})
	}
}
