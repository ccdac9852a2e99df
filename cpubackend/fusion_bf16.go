package cpubackend

import (
	"slices"

	"github.com/gomlx/gomlx/pkg/core/shapes"
	"math"
	"runtime"
	"sync/atomic"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/pkg/core/dtypes"
	"github.com/gomlx/gomlx/pkg/core/dtypes/bfloat16"
	"github.com/gotrain/gotrain/internal/parallel"
)

// bfloat16 chains.
//
// A chain of bfloat16 operations runs the float32 program on float32
// chunks: each external input's chunk widened (exactly), every
// instruction's float32 result truncated to bfloat16 at once (truncBF16),
// the output's and the side outputs' chunks narrowed at the end. The
// unfused executors compute each bfloat16 operation as
// bfloat16.FromFloat32 of the float32 operation on the widened operands,
// and FromFloat32 truncates: for the operations below, whose float32
// fused code computes the float32 executors' bits, the results are the
// unfused ones bit for bit. (The bfloat16 Exp, Logistic and Tanh
// executors are gotrain's: its fast float32 functions, truncated
// (bf16ViaFloat32), where GoMLX's went through float64 and package math;
// Logistic's is logisticForBF16, evaluated in float32.)
// A single bfloat16 operation is
// fused too: the program's vector loops beat the executors' element by
// element conversions.
//
// A chain may also hold conversions between float32 and bfloat16, and
// float32 operations around them (mixed precision: a bfloat16 residual
// sum widened for a float32 layer norm, a float32 softmax narrowed for a
// bfloat16 product). Each instruction then truncates only when its node is
// bfloat16 (a conversion to bfloat16 is a truncation, one to float32 a
// copy), float32 inputs are read as they are, bfloat16 ones widened, and
// each output is narrowed or copied as its node's dtype says: the
// conversions' separate passes over memory are gone, and the values are
// the unfused ones bit for bit, as before.

// fusedDirectInputs counts the bfloat16 inputs programs read where they
// are (tests).
var fusedDirectInputs atomic.Int64

// fusedConverts counts the conversions that joined chains (tests).
var fusedConverts atomic.Int64

// isFusibleConvert tells whether n, a ConvertDType, may join a chain: a
// conversion between float32 and bfloat16 of one operand of its shape.
func isFusibleConvert(n *Node) bool {
	if n.fusedSide != nil || len(n.inputs) != 1 || n.multiOutputsShapes != nil || n.isNodeSelectOutput {
		return false
	}
	in, out := n.inputs[0].shape.DType, n.shape.DType
	return (in == dtypes.BFloat16 && out == dtypes.Float32 || in == dtypes.Float32 && out == dtypes.BFloat16) &&
		sameDims(n.inputs[0].shape, n.shape)
}

// sameDims tells whether two shapes have the same dimensions, whatever
// their dtypes.
func sameDims(a, b shapes.Shape) bool { return slices.Equal(a.Dimensions, b.Dimensions) }

// fusibleBF16Ops are the operations a bfloat16 chain may hold.
var fusibleBF16Ops = map[backends.OpType]bool{
	backends.OpTypeAdd: true, backends.OpTypeSub: true, backends.OpTypeMul: true, backends.OpTypeDiv: true,
	backends.OpTypeMax: true, backends.OpTypeMin: true,
	backends.OpTypeNeg: true, backends.OpTypeAbs: true, backends.OpTypeSign: true,
	backends.OpTypeSqrt: true, backends.OpTypeRsqrt: true, backends.OpTypeLog: true,
	backends.OpTypeExp: true, backends.OpTypeLogistic: true, backends.OpTypeTanh: true,
}

// bf16Exact are the operations whose float32 result on bfloat16 values
// is a bfloat16 value: truncating it changes nothing.
var bf16Exact = map[backends.OpType]bool{
	backends.OpTypeMax: true, backends.OpTypeMin: true,
	backends.OpTypeNeg: true, backends.OpTypeAbs: true, backends.OpTypeSign: true,
}

// fusibleDType tells whether a node of dtype dt and operation op may join
// a chain: float32 for every fusible operation, bfloat16 for
// fusibleBF16Ops.
func fusibleDType(op backends.OpType, dt dtypes.DType) bool {
	return dt == dtypes.Float32 || dt == dtypes.BFloat16 && fusibleBF16Ops[op]
}

// bf16Externals records, for a program with bfloat16 members (group, in
// instruction order; sides its side outputs, root its output), how each
// external input is read (fromInput, fromScalar, or fromTiled when only
// through a tiled broadcast) and whether it is bfloat16, which
// instructions truncate and which outputs are bfloat16; it reserves a
// temporary slot after the tiled ones for each external, where a bfloat16
// input's chunk is widened.
func (prog *fusedProgram) bf16Externals(root *Node, group, sides, externals []*Node) {
	prog.bf16 = true
	n := len(externals)
	prog.extKinds = make([]operandKind, n)
	prog.extBF16 = make([]bool, n)
	for k, x := range externals {
		prog.extKinds[k] = fromTiled
		prog.extBF16[k] = x.shape.DType == dtypes.BFloat16
	}
	for _, ins := range prog.instrs {
		ops := []fusedOperand{ins.a}
		if !ins.unary {
			ops = append(ops, ins.b)
		}
		for _, o := range ops {
			if o.kind == fromInput || o.kind == fromScalar {
				prog.extKinds[o.idx] = o.kind
			}
		}
	}
	// An input read only by Add, Sub, Mul and Div (vecLoopsWiden's
	// operations) need not be widened into a temporary.
	prog.direct = slices.Clone(prog.extBF16)
	for k := range prog.direct {
		prog.direct[k] = prog.direct[k] && prog.extKinds[k] == fromInput
	}
	for _, ins := range prog.instrs {
		if !ins.unary && oneBinaryBF16[ins.op] {
			continue
		}
		ops := []fusedOperand{ins.a}
		if !ins.unary {
			ops = append(ops, ins.b)
		}
		for _, o := range ops {
			if o.kind == fromInput {
				prog.direct[o.idx] = false
			}
		}
	}
	for _, d := range prog.direct {
		if d {
			fusedDirectInputs.Add(1)
		}
	}
	prog.trunc = make([]bool, len(group))
	prog.instBF16 = make([]bool, len(group))
	for i, x := range group {
		if x.opType == backends.OpTypeConvertDType {
			fusedConverts.Add(1)
		}
		prog.instBF16[i] = x.shape.DType == dtypes.BFloat16
		prog.trunc[i] = prog.instBF16[i] && (x.opType == backends.OpTypeConvertDType || !bf16Exact[x.opType])
	}
	prog.outBF16 = root.shape.DType == dtypes.BFloat16
	for _, x := range sides {
		prog.sideBF16 = append(prog.sideBF16, x.shape.DType == dtypes.BFloat16)
	}
}

// execFusedSidesBF16 is execFusedSides for a program with bfloat16
// members.
func execFusedSidesBF16(backend *Backend, node *Node, inputs []*Buffer, inputsOwned []bool) (*Buffer, []*Buffer, error) {
	prog := node.fused
	bufs, taken := fusedOutputs(backend, node, inputs, inputsOwned)
	io := &mixedIO{
		in16: make([][]uint16, len(node.inputs)), in32: make([][]float32, len(node.inputs)),
		side16: make([][]uint16, len(bufs)-1), side32: make([][]float32, len(bufs)-1),
	}
	for k, in := range inputs {
		if in == nil { // taken over as an output: every chunk reads it before it is written
			in = bufs[taken[k]-1]
		}
		io.in16[k], io.in32[k] = flatOf(in)
	}
	io.out16, io.out32 = flatOf(bufs[0])
	for j, b := range bufs[1:] {
		io.side16[j], io.side32[j] = flatOf(b)
	}
	if a, b, as, bs, ok := prog.oneBinaryBF16(io); ok {
		// One operation: one pass, in parts of whole 16-lane steps.
		oneBinaryBF16Runs.Add(1)
		convertParts(prog.size, func(lo, hi int) {
			binaryBF16(prog.instrs[0].op, io.out16[lo:hi], part(a, lo, hi), part(b, lo, hi), as, bs)
		})
		return bufs[0], bufs[1:], nil
	}
	chunks := (prog.size + prog.chunkLen - 1) / prog.chunkLen
	parts := min(runtime.GOMAXPROCS(0), prog.size/fusedParallelMin)
	run := func(c0, c1 int) {
		temps := prog.temps.Get().([]float32)
		defer prog.temps.Put(temps)
		for c := c0; c < c1; c++ {
			prog.chunkBF16(c, temps, io)
		}
	}
	if parts < 2 {
		run(0, chunks)
	} else {
		parallel.For(parts, parts, func(p int) { run(p*chunks/parts, (p+1)*chunks/parts) })
	}
	return bufs[0], bufs[1:], nil
}

// mixedIO are the flat values of a bfloat16 program's inputs and outputs:
// for each, its bits in the 16-bit slice when it is bfloat16, else its
// float32 values in the other.
type mixedIO struct {
	in16   [][]uint16
	in32   [][]float32
	out16  []uint16
	out32  []float32
	side16 [][]uint16
	side32 [][]float32
}

// flatOf returns a buffer's values: bfloat16 bits, or float32 values.
func flatOf(b *Buffer) ([]uint16, []float32) {
	if f, ok := b.flat.([]float32); ok {
		return nil, f
	}
	return bf16Bits(b.flat.([]bfloat16.BFloat16)), nil
}

// oneBinaryBF16Runs counts the bfloat16 programs run in one pass (tests).
var oneBinaryBF16Runs atomic.Int64

// oneBinaryBF16 tells whether prog is a single bfloat16 operation of
// oneBinaryBF16 on bfloat16 operands read whole or as scalars, with no side
// outputs, and returns its operands for binaryBF16: a and b the inputs'
// values (nil for a scalar), as and bs the scalars widened.
func (prog *fusedProgram) oneBinaryBF16(io *mixedIO) (a, b []uint16, as, bs *float32, ok bool) {
	if len(prog.instrs) != 1 || len(prog.sides) > 0 || !prog.outBF16 {
		return nil, nil, nil, nil, false
	}
	ins := prog.instrs[0]
	if ins.unary || !oneBinaryBF16[ins.op] {
		return nil, nil, nil, nil, false
	}
	operand := func(o fusedOperand) ([]uint16, *float32, bool) {
		if !prog.extBF16[o.idx] {
			return nil, nil, false
		}
		switch o.kind {
		case fromInput:
			return io.in16[o.idx], nil, true
		case fromScalar:
			v := math.Float32frombits(uint32(io.in16[o.idx][0]) << 16)
			return nil, &v, true
		}
		return nil, nil, false
	}
	a, as, aok := operand(ins.a)
	b, bs, bok := operand(ins.b)
	if !aok || !bok || (a == nil && b == nil) {
		return nil, nil, nil, nil, false
	}
	return a, b, as, bs, true
}

// part returns s[lo:hi], nil for a nil s (a scalar operand).
func part(s []uint16, lo, hi int) []uint16 {
	if s == nil {
		return nil
	}
	return s[lo:hi]
}

// chunkBF16 runs a bfloat16 program over chunk c.
func (prog *fusedProgram) chunkBF16(c int, temps []float32, io *mixedIO) {
	cl := prog.chunkLen
	lo := c * cl
	hi := min(lo+cl, prog.size)
	n := hi - lo
	ext := prog.slots + len(prog.tiled)
	// With AVX-512 the direct inputs are read where they are by the
	// operations' loops; only their tails, past the 16-lane steps, are
	// widened for the Go loops.
	useDirect := hasVecAVX512
	k16 := n &^ 15
	for k, bf := range prog.extBF16 {
		switch {
		case prog.extKinds[k] == fromInput && bf && useDirect && prog.direct[k]:
			widenBF16(temps[(ext+k)*cl+k16:][:n-k16], io.in16[k][lo+k16:hi])
		case prog.extKinds[k] == fromInput && bf:
			widenBF16(temps[(ext+k)*cl:][:n], io.in16[k][lo:hi])
		case prog.extKinds[k] == fromScalar && bf:
			widenBF16(temps[(ext+k)*cl:][:1], io.in16[k][:1])
		case prog.extKinds[k] == fromScalar:
			temps[(ext+k)*cl] = io.in32[k][0]
		}
	}
	for _, o := range prog.tiled {
		dst := temps[(prog.slots+o.slot)*cl:][:n]
		if o.rep > 0 {
			if x := io.in16[o.idx]; x != nil {
				fillRepeated(dst, lo, o.rep, func(i int) float32 { return math.Float32frombits(uint32(x[i]) << 16) })
			} else {
				x := io.in32[o.idx]
				fillRepeated(dst, lo, o.rep, func(i int) float32 { return x[i] })
			}
			continue
		}
		if x := io.in16[o.idx]; x != nil {
			pos := lo % len(x)
			for len(dst) > 0 {
				m := min(len(dst), len(x)-pos)
				widenBF16(dst[:m], x[pos:pos+m])
				dst, pos = dst[m:], 0
			}
			continue
		}
		x := io.in32[o.idx]
		pos := lo % len(x)
		for len(dst) > 0 {
			m := copy(dst, x[pos:])
			dst, pos = dst[m:], 0
		}
	}
	slice := func(o fusedOperand) ([]float32, *float32, bool) {
		switch o.kind {
		case fromInput:
			if !prog.extBF16[o.idx] {
				return io.in32[o.idx][lo:hi], nil, false // read in place
			}
			return temps[(ext+o.idx)*cl:][:n], nil, false
		case fromScalar:
			return nil, &temps[(ext+o.idx)*cl], true
		case fromTiled:
			return temps[(prog.slots+o.slot)*cl:][:n], nil, false
		}
		return temps[o.idx*cl:][:n], nil, false
	}
	var dst []float32
	last := len(prog.instrs) - 1
	for i, ins := range prog.instrs {
		dst = temps[ins.dst*cl:][:n]
		a, as, aScalar := slice(ins.a)
		// The last result is only narrowed when the output is bfloat16,
		// which truncates as truncBF16 does (a side output among the
		// earlier ones is narrowed too, but later instructions read its
		// truncation).
		trunc := prog.trunc[i] && (i < last || !prog.outBF16)
		if ins.unary {
			if aScalar {
				a = dst
				fill(a, *as)
			}
			switch ins.op {
			case backends.OpTypeConvertDType: // to float32: a copy; to bfloat16: and a truncation
				copy(dst, a)
			case backends.OpTypeLogistic:
				if prog.instBF16[i] {
					logisticForBF16(dst, a) // the bfloat16 executor's function
				} else {
					unaryChunk(ins.op, dst, a)
				}
			default:
				unaryChunk(ins.op, dst, a)
			}
		} else {
			b, bs, bScalar := slice(ins.b)
			aD := useDirect && ins.a.kind == fromInput && prog.direct[ins.a.idx]
			bD := useDirect && ins.b.kind == fromInput && prog.direct[ins.b.idx]
			if aD || bD {
				// Direct inputs read where they are; the tail from the
				// widened temporaries.
				a16, av, ap := widenOperand(aD, io, ins.a, lo, hi, aScalar, as, a)
				b16, bv, bp := widenOperand(bD, io, ins.b, lo, hi, bScalar, bs, b)
				k := vecBinaryWiden(ins.op, trunc, dst, a16, av, ap, b16, bv, bp)
				if k == 0 && k16 > 0 { // no loop for this form: widen the heads too
					if aD {
						widenBF16(a[:k16], a16[:k16])
					}
					if bD {
						widenBF16(b[:k16], b16[:k16])
					}
				}
				if k < n {
					if !aScalar {
						a = a[k:]
					}
					if !bScalar {
						b = b[k:]
					}
					binaryChunk(ins.op, dst[k:], a, as, aScalar, b, bs, bScalar)
					if trunc {
						truncBF16(dst[k:])
					}
				}
				continue
			}
			if trunc {
				// The operation and its truncation in one pass where
				// there is a truncating loop; the rest as below.
				if k := vecBinaryTrunc(ins.op, dst, a, as, aScalar, b, bs, bScalar); k > 0 {
					if !aScalar {
						a = a[k:]
					}
					if !bScalar {
						b = b[k:]
					}
					binaryChunk(ins.op, dst[k:], a, as, aScalar, b, bs, bScalar)
					truncBF16(dst[k:])
					continue
				}
			}
			binaryChunk(ins.op, dst, a, as, aScalar, b, bs, bScalar)
		}
		if trunc {
			truncBF16(dst)
		}
	}
	if prog.outBF16 {
		narrowBF16Bits(io.out16[lo:hi], dst)
	} else {
		copy(io.out32[lo:hi], dst)
	}
	for j, t := range prog.sides {
		if prog.sideBF16[j] {
			narrowBF16Bits(io.side16[j][lo:hi], temps[t*cl:][:n])
		} else {
			copy(io.side32[j][lo:hi], temps[t*cl:][:n])
		}
	}
}

// widenOperand returns operand o as vecBinaryWiden takes it: a direct
// input's bfloat16 chunk [lo, hi), else a scalar's pointer or a float32
// chunk.
func widenOperand(direct bool, io *mixedIO, o fusedOperand, lo, hi int, scalar bool, sp *float32, v []float32) ([]uint16, []float32, *float32) {
	switch {
	case direct:
		return io.in16[o.idx][lo:hi], nil, nil
	case scalar:
		return nil, nil, sp
	}
	return nil, v, nil
}

// tilesOutput tells whether an operand of dimensions in, of the output's
// rank, is broadcast implicitly along leading axes only (ones, then the
// output's trailing dimensions), so that element i of the output reads
// element i mod size of the operand (a bias [1, n] added to [m, n]).
func tilesOutput(in, out []int) bool {
	if len(in) != len(out) {
		return false
	}
	a := 0
	for a < len(in) && in[a] == 1 && out[a] != 1 {
		a++
	}
	for ; a < len(in); a++ {
		if in[a] != out[a] {
			return false
		}
	}
	return true
}

// bf16ViaFloat32 sets out[i] to bfloat16.FromFloat32 of f's float32 value
// for in[i], a chunk at a time: the bfloat16 executor of an operation
// whose float32 kernel is f (which may work in place).
func bf16ViaFloat32(f func(dst, a []float32), in, out []bfloat16.BFloat16) {
	var buf [1024]float32
	ib, ob := bf16Bits(in), bf16Bits(out[:len(in)])
	for lo := 0; lo < len(ib); lo += len(buf) {
		hi := min(len(ib), lo+len(buf))
		t := buf[:hi-lo]
		widenBF16(t, ib[lo:hi])
		f(t, t)
		narrowBF16Bits(ob[lo:hi], t)
	}
}
