package forestgraph

import (
	"errors"
	"fmt"

	"github.com/gomlx/gomlx/pkg/core/dtypes"
	"github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/shapes"
	"github.com/gomlx/gomlx/pkg/core/tensors"
)

// Subtract picks whether the scatter histograms use the parent-minus-sibling
// trick.
type Subtract string

const (
	// SubtractOn scatters only the rows of the frontier nodes whose
	// histogram cannot be derived: the host compacts the (tree, row) list of
	// the chunk to those rows (padded to a power of two or 1.5 times one, at
	// most trees × rows),
	// and of two sibling frontier nodes only the one with fewer distinct
	// rows (the left one on a tie, as forest.Fit) is scattered; the other's
	// histogram is its parent's, kept on the device from the previous level,
	// minus the scattered sibling's (int64, exact). Rows in leaves and out of
	// the bag are never scattered.
	SubtractOn Subtract = "on"
	// SubtractCompact compacts the scattered (tree, row) list as SubtractOn
	// does (rows in leaves and out of the bag are skipped) but scatters
	// every frontier node's rows: no parent histograms are kept and no
	// histogram-sized gathers or transposes are run.
	SubtractCompact Subtract = "compact"
	// SubtractOff scatters every (tree, row) of the batch for every chunk,
	// rows in leaves and out of the bag as zeros (the first graph learner).
	SubtractOff Subtract = "off"
)

// DefaultSubtract is GrowOptions.Subtract's default: the compacted row list
// without the subtraction, the fastest of the three on simplego (see
// docs/BENCHMARKS.md). There the subtraction's histogram-sized gathers and
// transposes, copied element by element, cost more than the scatter work
// they save; on an accelerator, where those are cheap bandwidth-bound
// copies and the scatter runs with atomics, SubtractOn may pay (not
// measured here: there is no GPU).
const DefaultSubtract = SubtractCompact

// subChunk is the host's plan for one chunk of node slots with a
// compacted row list (SubtractOn, SubtractCompact).
type subChunk struct {
	rows, rslot []int32 // scattered (tree·n + row) and its local slot; padding: row 0, slot −1
	pidx, sib   []int32 // per local slot: the parent's slot in the kept histogram and the sibling's local slot
	derived     []int32 // per local slot: 1 when its histogram is parent − sibling
	nd          int     // derived slots
	parent      int     // the kept chunk the derived slots' parents are in (−1: none)
}

// planChunk lists the rows to scatter for the frontier nodes fr (global
// slots base...), padded to nc slots. The previous level's histograms are
// kept in chunks chunks of keptNc slots (none: chunks = 0); a node whose
// parent's histogram is kept in chunk c.parent (the chunk holding the
// parents of the most derivable nodes of fr) and whose sibling is in fr
// is derived. hostSlot holds each (tree, row)'s frontier slot (−1: none).
func (g *grower) planChunk(fr []frontierNode, base, nc int, hostSlot []int32, chunks, keptNc int) *subChunk {
	c := &subChunk{pidx: make([]int32, nc), sib: make([]int32, nc), derived: make([]int32, nc), parent: -1}
	can := func(fn frontierNode) bool {
		return chunks > 0 && fn.parent >= 0 && fn.sib >= base && fn.sib < base+len(fr)
	}
	votes := make([]int, chunks)
	for _, fn := range fr {
		if can(fn) {
			votes[int(fn.parent)/keptNc]++
		}
	}
	for pc, v := range votes {
		if v > 0 && (c.parent < 0 || v > votes[c.parent]) {
			c.parent = pc
		}
	}
	for s, fn := range fr {
		if can(fn) && int(fn.parent)/keptNc == c.parent {
			c.derived[s], c.pidx[s], c.sib[s] = 1, fn.parent-int32(c.parent*keptNc), int32(fn.sib-base)
			c.nd++
		}
	}
	for k, sl := range hostSlot {
		if l := int(sl) - base; sl >= 0 && l < len(fr) && l >= 0 && c.derived[l] == 0 {
			c.rows = append(c.rows, int32(k))
			c.rslot = append(c.rslot, int32(l))
		}
	}
	// Padded to a few sizes (compiles stay few), at most trees × rows.
	m := min(roundSlots(max(1, len(c.rows))), g.trees*g.n)
	for len(c.rows) < m {
		c.rows = append(c.rows, 0)
		c.rslot = append(c.rslot, -1)
	}
	return c
}

// searchChunkSub runs the subtraction split graph for the frontier nodes
// fr (global slots base..., padded to nc); kept are the previous level's
// histograms ([keptNc, q·E] per chunk; none: nil). It returns the split
// results and this chunk's histograms [nc, q·E] (the caller finalizes
// them).
func (g *grower) searchChunkSub(fr []frontierNode, base, nc, t0 int, countsT *tensors.Tensor, hostSlot []int32, kept []*tensors.Tensor, keptNc int) (*splitResults, *tensors.Tensor, error) {
	c := g.planChunk(fr, base, nc, hostSlot, len(kept), keptNc)
	keysT := g.keysTensor(fr, nc, t0)
	m := len(c.rows)
	owned := []*tensors.Tensor{keysT,
		tensors.FromFlatDataAndDimensions(c.rows, m), tensors.FromFlatDataAndDimensions(c.rslot, m),
		tensors.FromFlatDataAndDimensions(c.pidx, nc), tensors.FromFlatDataAndDimensions(c.sib, nc),
		tensors.FromFlatDataAndDimensions(c.derived, nc)}
	defer finalize(owned)
	args := []any{g.codesOff, countsT, g.target, keysT, owned[1], owned[2]}
	if !g.sub {
		outs, err := g.exec(g.splitCmp, fmt.Sprintf("splitcompact/%d/%d", nc, m), args...)
		if err != nil {
			return nil, nil, err
		}
		defer finalize(outs)
		if len(outs) != 7 {
			return nil, nil, fmt.Errorf("forestgraph: fit: the compact split graph returned %d outputs, want 7", len(outs))
		}
		g.noteChunk(nc, m, c.nd)
		r, err := readSplit(outs)
		return r, nil, err
	}
	ncp, parent := 1, g.noParent
	if c.parent >= 0 {
		parent = kept[c.parent]
		ncp = parent.Shape().Dimensions[0]
	}
	args = append(args, parent, owned[3], owned[4], owned[5])
	outs, err := g.exec(g.splitSub, fmt.Sprintf("splitsub/%d/%d/%d", nc, m, ncp), args...)
	if err != nil {
		return nil, nil, err
	}
	if len(outs) != 8 {
		finalize(outs)
		return nil, nil, fmt.Errorf("forestgraph: fit: the subtraction split graph returned %d outputs, want 8", len(outs))
	}
	defer finalize(outs[:7])
	g.noteChunk(nc, m, c.nd)
	r, err := readSplit(outs[:7])
	if err != nil {
		_ = outs[7].FinalizeAll()
		return nil, nil, err
	}
	return r, outs[7], nil
}

// noteChunk records a compacted chunk of nc slots, m scattered rows and nd
// derived slots in the report.
func (g *grower) noteChunk(nc, m, nd int) {
	g.rep.MaxSlots = max(g.rep.MaxSlots, nc)
	g.rep.PeakHistogramBytes = max(g.rep.PeakHistogramBytes, int64(nc)*int64(g.e)*int64(g.q)*8)
	g.rep.PeakScatterBytes = max(g.rep.PeakScatterBytes, int64(m)*int64(g.p)*(3*(8+4)+4)+int64(m)*8)
	g.rep.ScatterRows += int64(m)
	g.rep.DerivedNodes += nd
}

// readSplit copies the split graph's seven outputs to the host.
func readSplit(outs []*tensors.Tensor) (*splitResults, error) {
	r := &splitResults{}
	var errs [7]error
	r.ok, errs[0] = tensors.CopyFlatData[int32](outs[0])
	r.feature, errs[1] = tensors.CopyFlatData[int32](outs[1])
	r.bin, errs[2] = tensors.CopyFlatData[int32](outs[2])
	r.ml, errs[3] = tensors.CopyFlatData[int32](outs[3])
	r.gain, errs[4] = tensors.CopyFlatData[float64](outs[4])
	r.left, errs[5] = tensors.CopyFlatData[int64](outs[5])
	r.tot, errs[6] = tensors.CopyFlatData[int64](outs[6])
	if err := errors.Join(errs[:]...); err != nil {
		return nil, fmt.Errorf("forestgraph: fit: reading the split results: %w", err)
	}
	return r, nil
}

// buildSplitSub is the split-search graph of the subtraction mode: inputs
// codesOff [n·p] int32, counts [T,n] int64 (as buildSplit), target, keys (as buildSplit),
// rows [M] int32 (tree·n + row of each scattered row), rslot [M] int32 (its
// local slot, −1 for padding), parent [ncp, q·E] int64 (the previous
// level's histograms, slot first), pidx, sib and derived [nc] int32 (per
// slot: the parent's row in parent, the sibling's local slot, 1 when the
// slot's histogram is parent − sibling). Outputs: buildSplit's seven, then
// the chunk's histograms [nc, q·E] int64 for the next level.
func (g *grower) buildSplitSub(in []*graph.Node) []*graph.Node {
	keys, parent, pidx, sib, derived := in[3], in[6], in[7], in[8], in[9]
	nc := keys.Shape().Dimensions[0]
	E, q := g.e, g.q
	i32 := func(v int) *graph.Node { return graph.Const(keys.Graph(), int32(v)) }
	col := func(x *graph.Node) *graph.Node { return graph.ExpandAxes(x, -1) }
	hs := g.compactScatter(in[0], in[1], in[2], in[4], in[5], nc)

	// Slot first: [nc, q·E]; derived slots take parent − sibling.
	ht := graph.Transpose(graph.Reshape(hs, q*E, nc), 0, 1)
	pg := graph.Gather(parent, col(pidx)) // [nc, q·E]
	sg := graph.Gather(ht, col(sib))      // [nc, q·E]
	isD := graph.BroadcastToDims(col(graph.GreaterThan(derived, i32(0))), nc, q*E)
	ht = graph.Where(isD, graph.Sub(pg, sg), ht)
	hq := graph.Reshape(graph.Transpose(ht, 0, 1), q, E, nc)
	h := make([]*graph.Node, q)
	for k := range q {
		h[k] = graph.Reshape(graph.SliceAxis(hq, 0, graph.AxisRange(k, k+1)), E, nc)
	}
	return append(g.searchSplits(h, keys, nc), ht)
}

// buildSplitCompact is the split-search graph of the compaction-only mode:
// buildSplitSub's first six inputs and buildSplit's seven outputs (no
// derived slot, no histogram output).
func (g *grower) buildSplitCompact(in []*graph.Node) []*graph.Node {
	keys := in[3]
	nc := keys.Shape().Dimensions[0]
	E, q := g.e, g.q
	hs := graph.Reshape(g.compactScatter(in[0], in[1], in[2], in[4], in[5], nc), q, E, nc)
	h := make([]*graph.Node, q)
	for k := range q {
		h[k] = graph.Reshape(graph.SliceAxis(hs, 0, graph.AxisRange(k, k+1)), E, nc)
	}
	return g.searchSplits(h, keys, nc)
}

// compactScatter builds the flat [q, E, nc] int64 histograms of the listed
// rows (see buildSplitSub) with one ScatterSum of three values per (row,
// feature); padding entries add zeros at index 0.
func (g *grower) compactScatter(codesOff, counts, target, rows, rslot *graph.Node, nc int) *graph.Node {
	gr := rows.Graph()
	m := rows.Shape().Dimensions[0]
	T, n, p, E, q := g.trees, g.n, g.p, g.e, g.q
	i32 := func(v int) *graph.Node { return graph.Const(gr, int32(v)) }
	i64 := func(v int64) *graph.Node { return graph.Const(gr, v) }
	col := func(x *graph.Node) *graph.Node { return graph.ExpandAxes(x, -1) }

	active := graph.GreaterOrEqual(rslot, i32(0))                                 // [M]
	ri := graph.Sub(rows, graph.Mul(graph.Div(rows, i32(n)), i32(n)))             // row index
	w := graph.Where(active, take(graph.Reshape(counts, T*n), col(rows)), i64(0)) // [M]: the rows' weights
	drawn := graph.ConvertDType(active, dtypes.Int64)
	local := graph.Max(rslot, i32(0))
	plane := E * nc
	co := graph.Gather(graph.Reshape(codesOff, n, p), col(ri))               // [M,p]
	idx := graph.Add(graph.Mul(co, i32(nc)), col(local))                     // [M,p]
	idx = graph.Where(graph.BroadcastToDims(col(active), m, p), idx, i32(0)) // padding adds zeros at 0
	tg := take(target, col(ri))                                              // [M]
	var sumPlane, sum *graph.Node
	if g.pr.Class != nil {
		sumPlane = col(graph.Mul(graph.Add(tg, i32(2)), i32(plane))) // [M,1]
		sum = w
	} else {
		sumPlane = i32(2 * plane)
		sum = graph.Mul(w, tg)
	}
	idx3 := graph.Stack([]*graph.Node{idx, graph.Add(idx, i32(plane)), graph.Add(idx, sumPlane)}, -1) // [M,p,3]
	vals := graph.Stack([]*graph.Node{drawn, w, sum}, -1)                                             // [M,3]
	upd := graph.BroadcastToDims(graph.ExpandAxes(vals, 1), m, p, 3)
	zeros := graph.Zeros(gr, shapes.Make(dtypes.Int64, q*plane))
	return graph.ScatterSum(zeros, graph.Reshape(idx3, m*p*3, 1), graph.Reshape(upd, m*p*3), false, false)
}
