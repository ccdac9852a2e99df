package cpubackend

import (
	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/pkg/core/dtypes"
)

// Unfused float32 Add, Sub, Mul, Div, Max and Min of operands of the output's size (or
// one element) run through binaryChunk, the fused programs' loops, whose
// AVX-512 or AVX2 loops (vecops_amd64.s) give the bits of simplego's Go loops (for
// Max and Min, any NaN where Go gives a NaN: Go leaves its payload open).
// Other dtypes and shapes keep simplego's executors.

func init() {
	for op, generic := range map[backends.OpType]nodeExecutor{
		backends.OpTypeAdd: execAdd, backends.OpTypeSub: execSub,
		backends.OpTypeMul: execMul, backends.OpTypeDiv: execDiv,
		backends.OpTypeMax: execMax, backends.OpTypeMin: execMin,
	} {
		setNodeExecutor(op, priorityArch, vecBinaryExecutor(op, generic))
	}
}

// vecBinaryExecutor returns op's executor: binaryChunk where it applies,
// else generic.
func vecBinaryExecutor(op backends.OpType, generic nodeExecutor) nodeExecutor {
	return func(backend *Backend, node *Node, inputs []*Buffer, inputsOwned []bool) (*Buffer, error) {
		n := node.shape.Size()
		if !(hasVecAVX512 || hasVecAVX2) || node.shape.DType != dtypes.Float32 || len(inputs) != 2 ||
			inputs[0].shape.DType != dtypes.Float32 || inputs[1].shape.DType != dtypes.Float32 {
			return generic(backend, node, inputs, inputsOwned)
		}
		ls, rs := inputs[0].shape.Size(), inputs[1].shape.Size()
		if (ls != n && ls != 1) || (rs != n && rs != 1) || n == 1 {
			return generic(backend, node, inputs, inputsOwned)
		}
		lhs, rhs, output, lScalar, rScalar := binaryOperandsAndOutput(backend, inputs, inputsOwned, node.shape)
		a, b := lhs.flat.([]float32), rhs.flat.([]float32)
		var as, bs *float32 // the scalars, in their buffers (binaryChunk)
		if lScalar {
			as = &a[0]
		}
		if rScalar {
			bs = &b[0]
		}
		out := output.flat.([]float32)
		convertParts(n, func(lo, hi int) {
			// Each part its own slices; a scalar operand stays whole.
			pa, pb := a, b
			if !lScalar {
				pa = a[lo:hi]
			}
			if !rScalar {
				pb = b[lo:hi]
			}
			binaryChunk(op, out[lo:hi], pa, as, lScalar, pb, bs, rScalar)
		})
		return output, nil
	}
}
