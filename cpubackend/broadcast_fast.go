package cpubackend

import (
	"slices"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/pkg/core/dtypes"
	"github.com/gomlx/gomlx/pkg/core/dtypes/bfloat16"
	"github.com/gomlx/gomlx/pkg/core/shapes"
)

// broadcastFloat32 writes src, of dimensions srcDims (the rank of dstDims,
// each dimension equal to dstDims' or 1), broadcast to dstDims into dst:
// runs along non-broadcast trailing axes are copied, broadcast ones filled,
// instead of simplego's per-element index iterator.
func broadcastFloat32(dst, src []float32, srcDims, dstDims []int) {
	broadcastT(dst, src, srcDims, dstDims, fill)
}

// broadcastT is broadcastFloat32 for 32- or 16-bit elements (bfloat16's
// bits), filling broadcast runs with fillRun.
func broadcastT[T float32 | uint16](dst, src []T, srcDims, dstDims []int, fillRun func([]T, T)) {
	rank := len(dstDims)
	// The innermost run: the trailing axes that are all copied (same
	// dimension) or all broadcast (source dimension 1; a size-1 output
	// axis counts as both).
	filled := rank > 0 && srcDims[rank-1] == 1 && dstDims[rank-1] != 1
	run, k := 1, rank
	for k > 0 {
		d, sd := dstDims[k-1], srcDims[k-1]
		if filled && sd != 1 || !filled && sd != d {
			break
		}
		k--
		run *= d
	}
	if k == 0 && !filled {
		copy(dst, src)
		return
	}
	srcStrides := make([]int, rank)
	s := 1
	for a := rank - 1; a >= 0; a-- {
		srcStrides[a] = s
		s *= srcDims[a]
	}
	// Iterate the outer axes 0..k−1 of dst in order.
	idx := make([]int, k)
	off := 0 // source offset of idx
	for o := 0; o < len(dst); o += run {
		if filled {
			fillRun(dst[o:o+run], src[off])
		} else {
			copy(dst[o:o+run], src[off:off+run])
		}
		for a := k - 1; a >= 0; a-- {
			idx[a]++
			if srcDims[a] != 1 {
				off += srcStrides[a]
			}
			if idx[a] < dstDims[a] {
				break
			}
			if srcDims[a] != 1 {
				off -= srcStrides[a] * dstDims[a]
			}
			idx[a] = 0
		}
	}
}

// fastBroadcastInDim is BroadcastInDim for float32 and bfloat16 operands
// whose axes map to increasing output axes.
func fastBroadcastInDim(backend *Backend, node *Node, operand *Buffer) (*Buffer, bool) {
	axes := node.data.([]int)
	dt := operand.shape.DType
	if (dt != dtypes.Float32 && dt != dtypes.BFloat16) || !slices.IsSorted(axes) || operand.shape.Size() == 1 {
		return nil, false
	}
	srcDims := make([]int, node.shape.Rank())
	for i := range srcDims {
		srcDims[i] = 1
	}
	for i, a := range axes {
		srcDims[a] = operand.shape.Dimensions[i]
	}
	out := backend.getBuffer(node.shape.DType, node.shape.Size())
	out.shape = node.shape
	if dt == dtypes.BFloat16 {
		broadcastT(bf16Bits(out.flat.([]bfloat16.BFloat16)), bf16Bits(operand.flat.([]bfloat16.BFloat16)), srcDims, node.shape.Dimensions, fill16)
		return out, true
	}
	broadcastFloat32(out.flat.([]float32), operand.flat.([]float32), srcDims, node.shape.Dimensions)
	return out, true
}

// fill16 sets every element of dst to v.
func fill16(dst []uint16, v uint16) {
	for i := range dst {
		dst[i] = v
	}
}

// broadcastingBinaryOps are the float32 binary operations whose operands
// execBinaryWithBroadcast expands before calling simplego's executor.
var broadcastingBinaryOps = map[backends.OpType]bool{
	backends.OpTypeAdd: true, backends.OpTypeSub: true, backends.OpTypeMul: true, backends.OpTypeDiv: true,
	backends.OpTypeMax: true, backends.OpTypeMin: true, backends.OpTypePow: true,
}

// expandBroadcastOperands replaces, for a float32 binary operation, each
// operand that is broadcast (shape ≠ output shape, more than one element)
// by a full-size copy made with broadcastFloat32, so that simplego's
// executor takes its same-shape path instead of its per-element iterator.
// It returns a function that restores the original operands after the
// executor ran (putting unused copies back into the pool).
func expandBroadcastOperands(backend *Backend, node *Node, inputs []*Buffer, owned []bool) (restore func()) {
	if len(inputs) != 2 || !broadcastingBinaryOps[node.opType] || node.shape.DType != dtypes.Float32 {
		return nil
	}
	var orig [2]*Buffer
	var origOwned [2]bool
	var tmp [2]*Buffer
	expanded := false
	for k, in := range inputs {
		if in == nil || in.shape.Size() == 1 || in.shape.Equal(node.shape) || in.shape.Rank() != node.shape.Rank() {
			continue
		}
		full := backend.getBufferForShape(shapes.Make(dtypes.Float32, node.shape.Dimensions...))
		broadcastFloat32(full.flat.([]float32), in.flat.([]float32), in.shape.Dimensions, node.shape.Dimensions)
		orig[k], origOwned[k], tmp[k] = in, owned[k], full
		inputs[k], owned[k] = full, true
		expanded = true
	}
	if !expanded {
		return nil
	}
	return func() {
		for k := range 2 {
			if tmp[k] == nil {
				continue
			}
			if inputs[k] != nil { // not taken over as the output
				backend.putBuffer(inputs[k])
			}
			inputs[k], owned[k] = orig[k], origOwned[k]
		}
	}
}
