package transformer

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/backends/simplego"
	"github.com/gomlx/gomlx/pkg/core/dtypes"
	"github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/tensors"
	"github.com/gomlx/gomlx/pkg/ml/context"

	"github.com/gotrain/gotrain/train"
)

var (
	opsMu    sync.Mutex
	opsCache = map[string][]backends.OpType{}
)

// RequiredOps lists, sorted by name, the backend operations the model of
// arch uses: the ops of its training graph (forward pass, masked
// cross-entropy and the gradient of every weight) and of its sampling step
// (key/value cache). It records them by building both graphs once, on tiny
// shapes with the same attention, feed-forward and norm kinds, on GoMLX's
// pure-Go backend (the reference every gotrain build has); the list depends
// only on the kinds and is cached. The optimizer's own ops (element-wise
// arithmetic, square roots) are not included.
func RequiredOps(arch Arch) ([]backends.OpType, error) {
	arch = arch.withDefaults()
	key := arch.Attention + "/" + arch.FFN + "/" + arch.Norm
	opsMu.Lock()
	defer opsMu.Unlock()
	if ops, ok := opsCache[key]; ok {
		return append([]backends.OpType(nil), ops...), nil
	}
	tiny := Arch{Vocab: 5, Layers: 1, Heads: 2, Width: 4, Context: 3, Hidden: 4, Attention: arch.Attention, FFN: arch.FFN, Norm: arch.Norm}
	b, err := simplego.New("ops_sequential") // layout:allow: only records the ops (no device is chosen); ops_sequential: GoMLX v0.26 parallel executor can deadlock on 2 cores
	if err != nil {
		return nil, fmt.Errorf("transformer: recording the model's ops: %w", err)
	}
	defer b.Finalize()
	seen := map[backends.OpType]bool{}
	record := func(g *graph.Graph) {
		for _, n := range g.Nodes() {
			if op, err := backends.OpTypeString(n.Type().String()); err == nil {
				seen[op] = true
			}
		}
	}
	ctx := context.New().Checked(false)
	err = train.Catch(func() {
		e, err := context.NewExec(b, ctx, func(ctx *context.Context, x, y *graph.Node) *graph.Node {
			loss := Loss([]*graph.Node{y}, []*graph.Node{tiny.Logits(ctx, x)})
			var ws []*graph.Node
			for v := range ctx.IterVariables() {
				if v.Trainable && strings.HasPrefix(v.Scope(), Scope) {
					ws = append(ws, v.ValueGraph(x.Graph()))
				}
			}
			grads := graph.Gradient(loss, ws...)
			sum := loss
			for _, gr := range grads {
				sum = graph.Add(sum, graph.ReduceAllSum(gr))
			}
			record(x.Graph())
			return sum
		})
		if err != nil {
			panic(err)
		}
		x := tensors.FromFlatDataAndDimensions([]float32{0, 1, 2}, 1, 3)
		y := tensors.FromFlatDataAndDimensions([]float32{1, 2, -1}, 1, 3)
		if _, err := e.Exec(x, y); err != nil {
			panic(err)
		}
		s, err := context.NewExec(b, ctx.Reuse(), func(ctx *context.Context, ids, pos, cache *graph.Node) (*graph.Node, *graph.Node) {
			l, c := tiny.StepLogits(ctx, ids, pos, cache)
			record(ids.Graph())
			return l, c
		})
		if err != nil {
			panic(err)
		}
		cache := tensors.FromShape(cacheShape(tiny, 1))
		if _, err := s.Exec(tensors.FromFlatDataAndDimensions([]int32{1}, 1), tensors.FromScalar(int32(0)), cache); err != nil {
			panic(err)
		}
	})
	if err != nil {
		return nil, fmt.Errorf("transformer: recording the model's ops: %w", err)
	}
	ops := make([]backends.OpType, 0, len(seen))
	for op := range seen {
		ops = append(ops, op)
	}
	sort.Slice(ops, func(i, j int) bool { return ops[i].String() < ops[j].String() })
	opsCache[key] = ops
	return append([]backends.OpType(nil), ops...), nil
}

// MissingError is returned by CheckBackend when a backend lacks operations
// or dtypes the model needs.
type MissingError struct {
	// Backend is the backend's name.
	Backend string
	// Ops are the missing operations, sorted.
	Ops []string
	// DTypes are the missing dtypes.
	DTypes []string
}

// Error implements error.
func (e *MissingError) Error() string {
	var parts []string
	if len(e.Ops) > 0 {
		parts = append(parts, fmt.Sprintf("operations %s", strings.Join(e.Ops, ", ")))
	}
	if len(e.DTypes) > 0 {
		parts = append(parts, fmt.Sprintf("dtypes %s", strings.Join(e.DTypes, ", ")))
	}
	return fmt.Sprintf("backend %q lacks what the transformer needs: %s", e.Backend, strings.Join(parts, "; "))
}

// CheckBackend checks the model's operations (RequiredOps) and dtypes
// (float32, int32, and bfloat16 or float16 under mixed precision) against
// b.Capabilities(). It returns a *MissingError listing what b lacks, or nil.
func CheckBackend(b backends.Backend, arch Arch, prec train.Precision) error {
	ops, err := RequiredOps(arch)
	if err != nil {
		return err
	}
	var caps backends.Capabilities
	if err := train.Catch(func() { caps = b.Capabilities() }); err != nil {
		return fmt.Errorf("transformer: reading the capabilities of backend %q: %w", b.Name(), err)
	}
	miss := &MissingError{Backend: b.Name()}
	for _, op := range ops {
		if !caps.Operations[op] {
			miss.Ops = append(miss.Ops, op.String())
		}
	}
	need := []dtypes.DType{dtypes.Float32, dtypes.Int32}
	switch prec {
	case train.PrecisionBF16Mixed:
		need = append(need, dtypes.BFloat16)
	case train.Precision16Mixed:
		need = append(need, dtypes.Float16)
	}
	for _, dt := range need {
		if !caps.DTypes[dt] {
			miss.DTypes = append(miss.DTypes, dt.String())
		}
	}
	if len(miss.Ops) == 0 && len(miss.DTypes) == 0 {
		return nil
	}
	return miss
}

// PrepareBackend runs CheckBackend on b before training, for the
// precision prec resolves to on b (train.ResolvePrecision). When b has
// everything it returns b. Otherwise, without fallback, it returns the
// *MissingError; with fallback it opens the fallback backend with open,
// checks it too, and returns it with a one-line warning naming what b
// lacked and where training moved.
func PrepareBackend(b backends.Backend, arch Arch, prec train.Precision, fallback bool, open func() (backends.Backend, error)) (backends.Backend, string, error) {
	prec0 := prec
	prec, err := train.ResolvePrecision(prec, b, train.IsAccelerator(b))
	if err != nil {
		return nil, "", err
	}
	err = CheckBackend(b, arch, prec)
	if err == nil {
		return b, "", nil
	}
	var miss *MissingError
	if !errors.As(err, &miss) {
		return nil, "", err
	}
	if !fallback || open == nil {
		return nil, "", fmt.Errorf("transformer: %w (allow a fallback to train on a device that has them)", err)
	}
	nb, oerr := open()
	if oerr != nil {
		return nil, "", fmt.Errorf("transformer: %w; the fallback device could not be opened: %w", err, oerr)
	}
	nprec, err2 := train.ResolvePrecision(prec0, nb, train.IsAccelerator(nb)) // the fallback's own resolution, as Train makes it
	if err2 == nil {
		err2 = CheckBackend(nb, arch, nprec)
	}
	if err2 != nil {
		nb.Finalize()
		return nil, "", fmt.Errorf("transformer: %w; the fallback backend %q fails too: %w", err, nb.Name(), err2)
	}
	return nb, fmt.Sprintf("warning: %s; training on backend %q instead (fallback allowed)", err.Error(), nb.Name()), nil
}
