package forestgraph

import (
	"errors"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/pkg/core/dtypes"
	"github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/shapes"
	"github.com/gomlx/gomlx/pkg/core/tensors"

	"github.com/gotrain/gotrain/forest"
)

// Strategy is how the inference graph walks the trees.
type Strategy string

const (
	// Auto picks Perfect when the perfect trees stay small (at most
	// PerfectMaxSlots bottom slots over all trees) and Gather otherwise.
	Auto Strategy = ""
	// Gather walks each tree's own nodes: per level, one gather of each
	// row's current node (feature, children, NaN direction, threshold) per
	// tree, one gather of the row's value at that feature, and a select of
	// the child (Hummingbird's "tree traversal"). Memory follows the number
	// of nodes, so it serves trees of any depth.
	Gather Strategy = "gather"
	// Perfect pads every tree to a perfect binary tree of the forest's
	// depth D, so that a row's slot at the next level is 2k or 2k+1 and
	// needs no child table (Hummingbird's "perfect tree traversal"). Its
	// tables hold trees·2^D slots, so it is for shallow forests.
	Perfect Strategy = "perfect"
)

// PerfectMaxSlots is the largest number of bottom slots (trees × 2^depth)
// for which Auto picks Perfect.
const PerfectMaxSlots = 1 << 20

// Options tune a Predictor.
type Options struct {
	// Strategy is the traversal (default Auto).
	Strategy Strategy
	// DeviceNum is the backend's device the graphs run on (default 0).
	DeviceNum int
}

// Predictor predicts with a forest on a GoMLX backend, giving the same bits as
// forest.Forest.PredictValues and Predict. Rows go through the graph in
// batches of a fixed number of rows (the last one padded), so the graph is
// compiled once and device memory is bounded by the batch. A Predictor is
// safe for concurrent use (calls are serialised); Close releases its graph.
type Predictor struct {
	mu       sync.Mutex
	backend  backends.Backend
	f        *forest.Forest
	opts     Options
	strategy Strategy
	rows     int // rows per batch
	nt       *nodeTable
	tables   []*tensors.Tensor // graph inputs after x, in the order build reads them
	exec     *graph.Exec
	stage    []float64     // the staged batch
	setup    time.Duration // time spent building the tables and compiling
}

// PredictorInfo describes a Predictor's graph and its device memory. Its
// JSON form is part of the report of `gotrain forest predict --json`.
type PredictorInfo struct {
	// Strategy is the traversal.
	Strategy Strategy `json:"strategy,omitempty"`
	// Depth is the number of levels the graph walks.
	Depth int `json:"depth,omitempty"`
	// BatchRows is the number of rows per graph execution.
	BatchRows int `json:"batch_rows,omitempty"`
	// TableBytes is the size of the forest's tables on the device.
	TableBytes int64 `json:"table_bytes,omitempty"`
	// BatchBytes estimates one batch's intermediate values (BatchBytes).
	BatchBytes int64 `json:"batch_bytes,omitempty"`
	// CompileSeconds is the time NewPredictor and Compile took: building
	// and uploading the tables, and compiling the graph.
	CompileSeconds float64 `json:"compile_seconds"`
}

// Info describes the predictor.
func (p *Predictor) Info() PredictorInfo {
	p.mu.Lock()
	setup := p.setup
	p.mu.Unlock()
	return PredictorInfo{Strategy: p.strategy, Depth: p.Depth(), BatchRows: p.rows, TableBytes: p.TableBytes(),
		BatchBytes: p.BatchBytes(), CompileSeconds: setup.Seconds()}
}

// NewPredictor returns a predictor of f on backend that runs batchRows rows
// per graph execution.
func NewPredictor(backend backends.Backend, f *forest.Forest, batchRows int) (*Predictor, error) {
	return NewPredictorWithOptions(backend, f, batchRows, Options{})
}

// NewPredictorWithOptions is NewPredictor with options.
func NewPredictorWithOptions(backend backends.Backend, f *forest.Forest, batchRows int, opts Options) (*Predictor, error) {
	start := time.Now()
	if backend == nil {
		return nil, errors.New("forestgraph: nil backend")
	}
	if batchRows < 1 {
		return nil, fmt.Errorf("forestgraph: %d rows per batch, want ≥ 1", batchRows)
	}
	nt, err := newNodeTable(f)
	if err != nil {
		return nil, err
	}
	if int64(batchRows)*int64(nt.features) > math.MaxInt32 || int64(batchRows)*int64(nt.trees) > math.MaxInt32 {
		return nil, fmt.Errorf("forestgraph: %d rows per batch is too many for %d features and %d trees", batchRows, nt.features, nt.trees)
	}
	p := &Predictor{backend: backend, f: f, opts: opts, rows: batchRows, nt: nt}
	switch opts.Strategy {
	case Auto:
		p.strategy = Gather
		if nt.perfectSlots() <= PerfectMaxSlots {
			p.strategy = Perfect
		}
	case Gather:
		p.strategy = Gather
	case Perfect:
		if nt.perfectSlots() > math.MaxInt32/int64(nt.outputs) {
			return nil, fmt.Errorf("forestgraph: %d trees of depth %d are too deep for the perfect-tree strategy", nt.trees, nt.depth)
		}
		p.strategy = Perfect
	default:
		return nil, fmt.Errorf("forestgraph: unknown strategy %q (want gather or perfect)", opts.Strategy)
	}
	p.tables = p.makeTables()
	p.setup = time.Since(start)
	return p, nil
}

// Strategy returns the traversal the predictor uses.
func (p *Predictor) Strategy() Strategy { return p.strategy }

// BatchRows returns the number of rows per graph execution.
func (p *Predictor) BatchRows() int { return p.rows }

// Depth returns the number of levels the graph walks (the deepest leaf).
func (p *Predictor) Depth() int { return p.nt.depth }

// TableBytes returns the size of the forest's tables on the device.
func (p *Predictor) TableBytes() int64 {
	var n int64
	for _, t := range p.tables {
		n += int64(t.Memory())
	}
	return n
}

// BatchBytes returns an estimate of the device memory one batch's
// intermediate values take at the widest level (the input, a row's node
// record per tree, and the gathered leaf values), beside TableBytes.
func (p *Predictor) BatchBytes() int64 {
	b, t, d, feats := int64(p.rows), int64(p.nt.trees), int64(p.nt.outputs), int64(p.nt.features)
	// x twice; per (row, tree): index, node record (3 or 2 float64), its
	// columns, the row's value, masks; leaf values (row, tree, output); the sum.
	return 2*b*feats*8 + b*t*(4+24+16+8+4) + b*t*d*8 + 2*b*d*8
}

// Close releases the compiled graph; the backend stays open.
func (p *Predictor) Close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.exec != nil {
		p.exec.Finalize()
		p.exec = nil
	}
	for _, t := range p.tables {
		_ = t.FinalizeAll()
	}
	p.tables = nil
}

// makeTables returns the graph inputs that hold the forest. A node record
// is float64 (code, [right,] threshold), with the code of nodeTable.code;
// node indices and features are exact in float64.
func (p *Predictor) makeTables() []*tensors.Tensor {
	nt := p.nt
	m := len(nt.feature)
	if p.strategy == Gather {
		rec := make([]float64, 3*m)
		for i := range m {
			rec[3*i], rec[3*i+1], rec[3*i+2] = nt.code(int32(i)), float64(nt.right[i]), nt.thr[i]
		}
		return []*tensors.Tensor{
			tensors.FromFlatDataAndDimensions(nt.root, nt.trees),
			tensors.FromFlatDataAndDimensions(rec, m, 3),
			tensors.FromFlatDataAndDimensions(nt.value, m, nt.outputs),
		}
	}
	pt := nt.perfect()
	var ts []*tensors.Tensor
	for l := range nt.depth {
		ts = append(ts, tensors.FromFlatDataAndDimensions(pt.rec[l], len(pt.rec[l])/2, 2))
	}
	return append(ts, tensors.FromFlatDataAndDimensions(pt.value, nt.trees<<nt.depth, nt.outputs))
}

// build is the inference graph: in[0] is the batch x (rows × features,
// float64), the rest are the tables of makeTables. The result is rows ×
// outputs float64.
func (p *Predictor) build(in []*graph.Node) *graph.Node {
	x := in[0]
	g := x.Graph()
	B, T, F, d := p.rows, p.nt.trees, p.nt.features, p.nt.outputs
	i32 := func(v int32) *graph.Node { return graph.Const(g, v) }
	// GoMLX's Gather wants params of rank ≥ 2 here: x is [rows·features, 1].
	xflat := graph.Reshape(x, B*F, 1)
	// Each (row, tree)'s offset of its row in xflat, broadcast once here
	// (simplego's broadcasting adds are slow).
	rowBase := graph.Mul(graph.Iota(g, shapes.Make(dtypes.Int32, B, T, 1), 0), i32(int32(F)))
	col := func(rec *graph.Node, c int) *graph.Node { // [B,T,k] → [B,T,1]
		return graph.Slice(rec, graph.AxisRange(), graph.AxisRange(), graph.AxisElem(c))
	}
	// goLeft says, per (row, tree), whether the row goes left at the node
	// whose record rec ([B,T,k]) holds the code in column 0 and the
	// threshold in column thrCol; the result is [B,T,1].
	goLeft := func(rec *graph.Node, thrCol int) *graph.Node {
		code := graph.ConvertDType(col(rec, 0), dtypes.Int32)
		nanLeft := graph.LessThan(code, i32(0))
		feat := graph.Where(nanLeft, graph.Sub(i32(-1), code), code)
		v := graph.Gather(xflat, graph.Add(rowBase, feat))
		le := graph.LessOrEqual(v, col(rec, thrCol))
		return graph.LogicalOr(le, graph.LogicalAnd(graph.IsNaN(v), nanLeft))
	}
	var leafVals *graph.Node // [B,T,d]
	if p.strategy == Gather {
		root, rec, val := in[1], in[2], in[3]
		idx := graph.BroadcastToDims(graph.Reshape(root, 1, T, 1), B, T, 1)
		one := graph.Ones(g, shapes.Make(dtypes.Int32, B, T, 1))
		for range p.nt.depth {
			r := graph.Gather(rec, idx) // [B,T,3]: code, right, threshold
			// The left child is the next node (depth-first layout).
			idx = graph.Where(goLeft(r, 2), graph.Add(idx, one), graph.ConvertDType(col(r, 1), dtypes.Int32))
		}
		leafVals = graph.Gather(val, idx)
	} else {
		// The slot of tree t at level l is t·2^l + k (k: the position within
		// the tree's level), so the next level's slot is 2·slot + right.
		slot := graph.Iota(g, shapes.Make(dtypes.Int32, B, T, 1), 1)
		for l := range p.nt.depth {
			r := graph.Gather(in[1+l], slot) // [B,T,2]: code, threshold
			right := graph.ConvertDType(graph.LogicalNot(goLeft(r, 1)), dtypes.Int32)
			slot = graph.Add(graph.Add(slot, slot), right)
		}
		leafVals = graph.Gather(in[len(in)-1], slot)
	}
	// Sum the trees in tree order, one addition after the other, as the CPU
	// predictor does: an unrolled chain rather than a ReduceSum, whose order a
	// backend may choose. Tree 0's values had −0 replaced by +0 (0 + x).
	acc := graph.Slice(leafVals, graph.AxisRange(), graph.AxisElem(0), graph.AxisRange())
	for t := 1; t < T; t++ {
		acc = graph.Add(acc, graph.Slice(leafVals, graph.AxisRange(), graph.AxisElem(t), graph.AxisRange()))
	}
	acc = graph.Mul(acc, graph.Const(g, 1/float64(T)))
	return graph.Reshape(acc, B, d)
}

// prepare creates the graph function.
func (p *Predictor) prepare() error {
	if p.tables == nil {
		return errors.New("forestgraph: the predictor is closed")
	}
	if p.exec != nil {
		return nil
	}
	exec, err := graph.NewExec(p.backend, p.build)
	if err != nil {
		return fmt.Errorf("forestgraph: creating the inference graph: %w", err)
	}
	p.exec = exec
	return nil
}

// args returns the graph's inputs for the staged batch.
func (p *Predictor) args() []any {
	args := []any{tensors.FromFlatDataAndDimensions(p.stage, p.rows, p.nt.features)}
	for _, t := range p.tables {
		args = append(args, t)
	}
	return args
}

// Compile builds and compiles the graph, so that the first prediction does
// not pay for it (optional: prediction compiles on first use).
func (p *Predictor) Compile() (err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	start := time.Now()
	defer func() { p.setup += time.Since(start) }()
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("forestgraph: compiling on %s: %v", p.backend.Name(), r)
		}
	}()
	if err := p.prepare(); err != nil {
		return err
	}
	p.stage = make([]float64, p.rows*p.nt.features)
	if err := p.exec.PreCompile(p.args()...); err != nil {
		return fmt.Errorf("forestgraph: compiling on %s: %w", p.backend.Name(), err)
	}
	return nil
}

// PredictValues returns, for each row of the row-major matrix x (rows ×
// the forest's features), the mean over trees of the leaf values, bit for
// bit as forest.Forest.PredictValues: the prediction for regression, the
// class probabilities (Outputs() per row) for classification.
func (p *Predictor) PredictValues(x []float64, rows int) ([]float64, error) {
	F, d := p.nt.features, p.nt.outputs
	if rows < 0 || len(x) != rows*F {
		return nil, fmt.Errorf("forestgraph: %w: %d values for %d rows of %d features", forest.ErrShape, len(x), rows, F)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.prepare(); err != nil {
		return nil, err
	}
	out := make([]float64, rows*d)
	if len(p.stage) != p.rows*F {
		p.stage = make([]float64, p.rows*F)
	}
	for lo := 0; lo < rows; lo += p.rows {
		hi := min(rows, lo+p.rows)
		n := copy(p.stage, x[lo*F:hi*F])
		clear(p.stage[n:]) // padding rows, dropped below
		vals, err := p.run()
		if err != nil {
			return nil, fmt.Errorf("forestgraph: rows %d..%d: %w", lo, hi-1, err)
		}
		copy(out[lo*d:hi*d], vals[:(hi-lo)*d])
	}
	return out, nil
}

// run executes the graph on the staged batch.
func (p *Predictor) run() (vals []float64, err error) {
	defer func() {
		if r := recover(); r != nil {
			vals, err = nil, fmt.Errorf("graph execution on %s: %v", p.backend.Name(), r)
		}
	}()
	// ExecOnDevice ignores its device in GoMLX v0.26; ExecWithGraphOnDevice does not.
	outs, _, err := p.exec.ExecWithGraphOnDevice(backends.DeviceNum(p.opts.DeviceNum), p.args()...)
	if err != nil {
		return nil, fmt.Errorf("graph execution on %s: %w", p.backend.Name(), err)
	}
	defer func() {
		for _, t := range outs {
			_ = t.FinalizeAll()
		}
	}()
	if len(outs) != 1 {
		return nil, fmt.Errorf("the graph returned %d outputs, want 1", len(outs))
	}
	if vals, err = tensors.CopyFlatData[float64](outs[0]); err != nil {
		return nil, fmt.Errorf("reading the predictions: %w", err)
	}
	return vals, nil
}

// Predict returns one prediction per row, as forest.Forest.Predict: the
// regression value, or the index of the most probable class (the first one
// on a tie).
func (p *Predictor) Predict(x []float64, rows int) ([]float64, error) {
	v, err := p.PredictValues(x, rows)
	if err != nil || p.f.Options.Task == forest.Regression {
		return v, err
	}
	d := p.nt.outputs
	out := make([]float64, rows)
	for i := range out {
		row := v[i*d : (i+1)*d]
		best := 0
		for q, pv := range row {
			if pv > row[best] {
				best = q
			}
		}
		out[i] = float64(best)
	}
	return out, nil
}
