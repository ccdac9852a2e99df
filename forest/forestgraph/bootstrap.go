package forestgraph

import (
	"errors"
	"fmt"
	"math"
	"sync"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/pkg/core/dtypes"
	"github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/shapes"
	"github.com/gomlx/gomlx/pkg/core/tensors"

	"github.com/gotrain/gotrain/forest/internal/core"
	"github.com/gotrain/gotrain/rng"
	"github.com/gotrain/gotrain/rng/rnggraph"
)

// purposeBootstrap is the stream purpose the native learner draws rows
// with (core.PurposeBootstrap); the two must change together.
const purposeBootstrap = core.PurposeBootstrap

// Bootstrap computes the bootstrap sample counts of a batch of trees as one
// GoMLX graph: for tree t, draw i (0 ≤ i < draws) picks row
// ((At(Key(seed, t, 1), i) >> 32) · n) >> 32, exactly as
// the native learner (forest.Fit) draws them, and the counts are summed with an integer
// scatter-add, whose result does not depend on the order of the additions.
// The graph is compiled once (on first use) for its number of rows, draws and
// trees; the seed and the tree indices are inputs, so one compiled graph
// serves every seed and batch of trees. A Bootstrap is safe for concurrent
// use (calls are serialised); Close releases the compiled graph.
type Bootstrap struct {
	mu       sync.Mutex
	backend  backends.Backend
	n, draws int
	trees    int
	device   int
	exec     *graph.Exec
}

// NewBootstrap returns the bootstrap of up to trees trees per graph execution,
// each drawing draws of n rows, on backend.
func NewBootstrap(backend backends.Backend, n, draws, trees int) (*Bootstrap, error) {
	switch {
	case backend == nil:
		return nil, errors.New("forestgraph: bootstrap: nil backend")
	case n < 1 || uint64(n) >= 1<<32:
		return nil, fmt.Errorf("forestgraph: bootstrap: %d rows, want 1..2^32-1", n)
	case draws < 0:
		return nil, fmt.Errorf("forestgraph: bootstrap: %d draws, want ≥ 0", draws)
	case trees < 1:
		return nil, fmt.Errorf("forestgraph: bootstrap: %d trees per batch, want ≥ 1", trees)
	case int64(trees)*int64(n) > math.MaxInt32 || int64(trees)*int64(draws) > math.MaxInt32:
		return nil, fmt.Errorf("forestgraph: bootstrap: %d trees × %d rows (%d draws) is too large for one graph; use fewer trees per batch", trees, n, draws)
	}
	return &Bootstrap{backend: backend, n: n, draws: draws, trees: trees}, nil
}

// UseDevice makes later executions run on the backend's device d (0 by
// default).
func (b *Bootstrap) UseDevice(d int) error {
	if d < 0 {
		return fmt.Errorf("forestgraph: bootstrap: device %d, want >= 0", d)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.device = d
	return nil
}

// Close releases the compiled graph; the backend stays open.
func (b *Bootstrap) Close() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.exec != nil {
		b.exec.Finalize()
		b.exec = nil
	}
}

// build is the graph: seed is a uint64 scalar, trees a [b.trees] uint64
// vector of tree indices; the result is [b.trees, b.n] int32 counts.
func (b *Bootstrap) build(seed, trees *graph.Node) *graph.Node {
	g := seed.Graph()
	must := func(x *graph.Node, err error) *graph.Node {
		if err != nil {
			panic(err)
		}
		return x
	}
	u := func(v uint64) *graph.Node { return graph.Const(g, v) }
	// Key(seed, t, purpose) = Mix(Mix(seed ^ Golden) + t·Golden + purpose).
	k0 := must(rnggraph.Mix(graph.BitwiseXor(seed, u(rng.Golden))))
	keys := must(rnggraph.Mix(graph.Add(graph.Add(k0, graph.Mul(trees, u(rng.Golden))), u(purposeBootstrap))))
	// At(key, i) = Mix(key + (i+1)·Golden) for i in [0, draws).
	ctr := graph.Iota(g, shapes.Make(dtypes.Uint64, b.draws), 0)
	off := graph.Mul(graph.Add(ctr, u(1)), u(rng.Golden))
	z := graph.Add(graph.ExpandAxes(keys, 1), graph.ExpandAxes(off, 0)) // [trees, draws]
	r := must(rnggraph.Mix(z))
	// Below(r, n) = ((r >> 32) · n) >> 32; shifts are divisions (simplego has no shift ops).
	two32 := u(1 << 32)
	row := graph.Div(graph.Mul(graph.Div(r, two32), u(uint64(b.n))), two32)
	base := graph.Mul(graph.Iota(g, shapes.Make(dtypes.Uint64, b.trees, 1), 0), u(uint64(b.n)))
	flat := graph.ConvertDType(graph.Add(row, base), dtypes.Int32) // < trees·n ≤ MaxInt32
	idx := graph.Reshape(flat, b.trees*b.draws, 1)
	ones := graph.Ones(g, shapes.Make(dtypes.Int32, b.trees*b.draws))
	zeros := graph.Zeros(g, shapes.Make(dtypes.Int32, b.trees*b.n))
	counts := graph.ScatterSum(zeros, idx, ones, false, false)
	return graph.Reshape(counts, b.trees, b.n)
}

// Counts returns the bootstrap counts of the given trees for seed, row-major
// (len(trees) × n): counts[k·n + i] is how many times tree trees[k] draws
// row i, equal to the native learner's counts (core.BootstrapCounts(seed, trees[k], draws, ·)). Batches
// of the Bootstrap's trees per batch run one graph execution each.
func (b *Bootstrap) Counts(seed uint64, trees []int) ([]int32, error) {
	for _, t := range trees {
		if t < 0 {
			return nil, fmt.Errorf("forestgraph: bootstrap: tree index %d is negative", t)
		}
	}
	out := make([]int32, len(trees)*b.n)
	if b.draws == 0 || len(trees) == 0 {
		return out, nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.exec == nil {
		exec, err := graph.NewExec(b.backend, b.build)
		if err != nil {
			return nil, fmt.Errorf("forestgraph: bootstrap: creating the graph: %w", err)
		}
		b.exec = exec
	}
	idx := make([]uint64, b.trees)
	for lo := 0; lo < len(trees); lo += b.trees {
		hi := min(len(trees), lo+b.trees)
		for k := range idx {
			// A short last batch repeats its last tree; those rows are dropped.
			idx[k] = uint64(trees[min(lo+k, hi-1)])
		}
		counts, err := b.run(seed, idx)
		if err != nil {
			return nil, err
		}
		copy(out[lo*b.n:hi*b.n], counts)
	}
	return out, nil
}

// run executes the graph for one batch of tree indices.
func (b *Bootstrap) run(seed uint64, idx []uint64) (counts []int32, err error) {
	defer func() {
		if r := recover(); r != nil {
			counts, err = nil, fmt.Errorf("forestgraph: bootstrap on %s: %v", b.backend.Name(), r)
		}
	}()
	// ExecOnDevice ignores its device in GoMLX v0.26; ExecWithGraphOnDevice does not.
	outs, _, err := b.exec.ExecWithGraphOnDevice(backends.DeviceNum(b.device), tensors.FromScalar(seed), tensors.FromFlatDataAndDimensions(idx, len(idx)))
	if err != nil {
		return nil, fmt.Errorf("forestgraph: bootstrap on %s: %w", b.backend.Name(), err)
	}
	defer func() {
		for _, t := range outs {
			_ = t.FinalizeAll()
		}
	}()
	if len(outs) != 1 {
		return nil, fmt.Errorf("forestgraph: bootstrap: the graph returned %d outputs, want 1", len(outs))
	}
	counts, err = tensors.CopyFlatData[int32](outs[0])
	if err != nil {
		return nil, fmt.Errorf("forestgraph: bootstrap: reading the counts: %w", err)
	}
	return counts, nil
}

// BootstrapCounts is NewBootstrap(backend, n, draws, len(trees)) followed by
// Counts(seed, trees): the bootstrap counts of the given trees, computed in
// one graph execution.
func BootstrapCounts(backend backends.Backend, seed uint64, trees []int, n, draws int) ([]int32, error) {
	b, err := NewBootstrap(backend, n, draws, max(1, len(trees)))
	if err != nil {
		return nil, err
	}
	defer b.Close()
	return b.Counts(seed, trees)
}
