package cpubackend

import (
	"slices"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/pkg/core/shapes"
	"github.com/gotrain/gotrain/internal/parallel"
)

// gotrain: a fast path for float32 ScatterSum whose windows are contiguous
// blocks of the output: every output axis is a window axis (no inserted
// axes), the windows span the whole of every axis but the first, and the
// updates are laid out window after window. That is the gradient of
// GatherSlices along the first axis (an im2col's gradient, col2im) and of a
// row Gather (embeddings). Each window is then one run of W floats added to
// the output at an offset read from its start indices, instead of the
// generic loop's iterator step per element.
//
// The sum stays exactly the generic one: every output element receives its
// updates in the order of the indices. With start offsets in increasing
// order the indices are split into chunks run in parallel; chunk c adds
// directly only where no earlier chunk writes (from limit_c, the end of the
// previous chunk's last window, on), and the parts of its windows before
// limit_c are added after all chunks finished, chunk after chunk, in order.
// So the result does not depend on the number of threads.

// scatterSumMinParallel is the number of added floats from which the fast
// path runs in parallel.
const scatterSumMinParallel = 1 << 16

// scatterSumOffsets returns the output offset of every window and the window
// size W when the scatter has the layout of the fast path and all its start
// indices keep the windows inside the output; ok is false otherwise (the
// generic loop then runs, with its semantics).
func scatterSumOffsets(out, upd, idx shapes.Shape, indices any, p *scatterNode) (offs []int, w int, sorted, ok bool) {
	ro := out.Rank()
	if ro == 0 || len(p.insertedWindowAxes) != 0 || len(p.updateWindowAxes) != ro {
		return nil, 0, false, false
	}
	ub := upd.Rank() - ro
	if ub < 0 {
		return nil, 0, false, false
	}
	for a := range ro {
		if p.updateWindowAxes[a] != ub+a {
			return nil, 0, false, false
		}
	}
	win := upd.Dimensions[ub:]
	if win[0] > out.Dimensions[0] {
		return nil, 0, false, false
	}
	w = 1
	for a := range ro {
		if a > 0 && win[a] != out.Dimensions[a] {
			return nil, 0, false, false
		}
		w *= win[a]
	}
	// The index vectors: along the last axis of the indices, or one value
	// each when the index vector axis is past the last.
	var nvec int
	var batch []int
	switch p.indexVectorAxis {
	case idx.Rank():
		nvec, batch = 1, idx.Dimensions
	case idx.Rank() - 1:
		nvec, batch = idx.Dimensions[idx.Rank()-1], idx.Dimensions[:idx.Rank()-1]
	default:
		return nil, 0, false, false
	}
	if len(p.scatterAxesToOperandAxes) != nvec || len(batch) != ub {
		return nil, 0, false, false
	}
	count := 1
	for a, d := range batch {
		if d != upd.Dimensions[a] {
			return nil, 0, false, false
		}
		count *= d
	}
	seen := make([]bool, ro)
	for _, axis := range p.scatterAxesToOperandAxes {
		if axis < 0 || axis >= ro || seen[axis] {
			return nil, 0, false, false
		}
		seen[axis] = true
	}
	var at func(i int) int
	switch v := indices.(type) {
	case []int32:
		at = func(i int) int { return int(v[i]) }
	case []int64:
		at = func(i int) int { return int(v[i]) }
	default:
		return nil, 0, false, false
	}
	strides := calculateStrides(out.Dimensions)
	offs = make([]int, count)
	sorted = true
	for i := range count {
		off := 0
		for j, axis := range p.scatterAxesToOperandAxes {
			s := at(i*nvec + j)
			if s < 0 || s > out.Dimensions[axis]-win[axis] {
				return nil, 0, false, false
			}
			off += s * strides[axis]
		}
		offs[i] = off
		if i > 0 && off < offs[i-1] {
			sorted = false
		}
	}
	return offs, w, sorted, true
}

// addFloat32 adds src to dst element by element.
func addFloat32(dst, src []float32) {
	src = src[:len(dst)]
	for len(dst) >= 8 {
		d, s := dst[:8:8], src[:8:8]
		d[0] += s[0]
		d[1] += s[1]
		d[2] += s[2]
		d[3] += s[3]
		d[4] += s[4]
		d[5] += s[5]
		d[6] += s[6]
		d[7] += s[7]
		dst, src = dst[8:], src[8:]
	}
	for i := range dst {
		dst[i] += src[i]
	}
}

// scatterSumFast adds the windows of updates (W floats each) into output at
// offs, in the order of the indices for every element (see above).
func scatterSumFast(backend *Backend, output, updates []float32, offs []int, w int, sorted bool) {
	count := len(offs)
	chunks := 1
	if sorted && backend.workers.IsEnabled() && count > 1 && count*w >= scatterSumMinParallel {
		chunks = min(count, max(2, backend.workers.MaxParallelism()))
		if backend.workers.IsUnlimited() {
			chunks = min(count, 8)
		}
	}
	if chunks == 1 {
		for i, off := range offs {
			addFloat32(output[off:off+w], updates[i*w:(i+1)*w])
		}
		return
	}
	lo := func(c int) int { return count * c / chunks }
	limit := func(c int) int {
		if c == 0 {
			return 0
		}
		return offs[lo(c)-1] + w
	}
	parallel.For(chunks, chunks, func(c int) {
		lim := limit(c)
		for i := lo(c); i < lo(c+1); i++ {
			off := offs[i]
			skip := min(w, max(0, lim-off))
			addFloat32(output[off+skip:off+w], updates[i*w+skip:(i+1)*w])
		}
	})
	// The parts before each chunk's limit, chunk after chunk.
	for c := 1; c < chunks; c++ {
		lim := limit(c)
		for i := lo(c); i < lo(c+1) && offs[i] < lim; i++ {
			off := offs[i]
			n := min(w, lim-off)
			addFloat32(output[off:off+n], updates[i*w:i*w+n])
		}
	}
}

// tryScatterSumFast runs the fast path on output (already a copy of the
// operand) when it applies and reports whether it did.
func tryScatterSumFast(backend *Backend, opType backends.OpType, output, indices, updates *Buffer, p *scatterNode) bool {
	if opType != backends.OpTypeScatterSum {
		return false
	}
	out, ok1 := output.flat.([]float32)
	upd, ok2 := updates.flat.([]float32)
	if !ok1 || !ok2 {
		return false
	}
	offs, w, sorted, ok := scatterSumOffsets(output.shape, updates.shape, indices.shape, indices.flat, p)
	if !ok || w == 0 {
		return ok
	}
	scatterSumFast(backend, out, upd, offs, w, sorted)
	return true
}

// scatterRun returns the length of the rows a scatter may combine at once
// (1: element by element) and the last axes of the updates and the output:
// the last update axis must be a window axis of length greater than one,
// the output's last axis must not be an inserted window axis nor a scattered
// axis, and the two must have the same length, so that every window row is
// a whole, contiguous row of the output.
func scatterRun(output, updates shapes.Shape, p *scatterNode) (run, lastU, lastO int) {
	lastU, lastO = updates.Rank()-1, output.Rank()-1
	if lastU < 0 || lastO < 0 {
		return 1, lastU, lastO
	}
	n := updates.Dimensions[lastU]
	if n < 2 || output.Dimensions[lastO] != n || !slices.Contains(p.updateWindowAxes, lastU) ||
		slices.Contains(p.insertedWindowAxes, lastO) || slices.Contains(p.scatterAxesToOperandAxes, lastO) {
		return 1, lastU, lastO
	}
	return n, lastU, lastO
}
