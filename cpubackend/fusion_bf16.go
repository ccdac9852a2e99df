package cpubackend

import (
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

// bf16Externals records, for a bfloat16 program, how each external input
// is read (fromInput, fromScalar, or fromTiled when only through a tiled
// broadcast) and reserves a temporary slot after the tiled ones for each,
// where its chunk is widened.
func (prog *fusedProgram) bf16Externals(n int) {
	prog.bf16 = true
	prog.extKinds = make([]operandKind, n)
	for k := range prog.extKinds {
		prog.extKinds[k] = fromTiled
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
}

// execFusedSidesBF16 is execFusedSides for a bfloat16 program.
func execFusedSidesBF16(backend *Backend, node *Node, inputs []*Buffer, inputsOwned []bool) (*Buffer, []*Buffer, error) {
	prog := node.fused
	bufs, taken := fusedOutputs(backend, node, inputs, inputsOwned)
	flats := make([][]uint16, len(node.inputs))
	for k, in := range inputs {
		if in == nil { // taken over as an output: every chunk reads it before it is written
			flats[k] = bf16Bits(bufs[taken[k]-1].flat.([]bfloat16.BFloat16))
			continue
		}
		flats[k] = bf16Bits(in.flat.([]bfloat16.BFloat16))
	}
	out := bf16Bits(bufs[0].flat.([]bfloat16.BFloat16))
	var sides [][]uint16
	for _, b := range bufs[1:] {
		sides = append(sides, bf16Bits(b.flat.([]bfloat16.BFloat16)))
	}
	if a, b, as, bs, ok := prog.oneBinaryBF16(flats); ok {
		// One operation: one pass, in parts of whole 16-lane steps.
		oneBinaryBF16Runs.Add(1)
		convertParts(prog.size, func(lo, hi int) {
			binaryBF16(prog.instrs[0].op, out[lo:hi], part(a, lo, hi), part(b, lo, hi), as, bs)
		})
		return bufs[0], bufs[1:], nil
	}
	chunks := (prog.size + prog.chunkLen - 1) / prog.chunkLen
	parts := min(runtime.GOMAXPROCS(0), prog.size/fusedParallelMin)
	run := func(c0, c1 int) {
		temps := prog.temps.Get().([]float32)
		defer prog.temps.Put(temps)
		for c := c0; c < c1; c++ {
			prog.chunkBF16(c, temps, flats, out, sides)
		}
	}
	if parts < 2 {
		run(0, chunks)
	} else {
		parallel.For(parts, parts, func(p int) { run(p*chunks/parts, (p+1)*chunks/parts) })
	}
	return bufs[0], bufs[1:], nil
}

// oneBinaryBF16Runs counts the bfloat16 programs run in one pass (tests).
var oneBinaryBF16Runs atomic.Int64

// oneBinaryBF16 tells whether prog is a single operation of oneBinaryBF16
// on operands read whole or as scalars, with no side outputs, and returns
// its operands for binaryBF16: a and b the inputs' values (nil for a
// scalar), as and bs the scalars widened.
func (prog *fusedProgram) oneBinaryBF16(flats [][]uint16) (a, b []uint16, as, bs *float32, ok bool) {
	if len(prog.instrs) != 1 || len(prog.sides) > 0 {
		return nil, nil, nil, nil, false
	}
	ins := prog.instrs[0]
	if ins.unary || !oneBinaryBF16[ins.op] {
		return nil, nil, nil, nil, false
	}
	operand := func(o fusedOperand) ([]uint16, *float32, bool) {
		switch o.kind {
		case fromInput:
			return flats[o.idx], nil, true
		case fromScalar:
			v := math.Float32frombits(uint32(flats[o.idx][0]) << 16)
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
func (prog *fusedProgram) chunkBF16(c int, temps []float32, flats [][]uint16, out []uint16, sides [][]uint16) {
	cl := prog.chunkLen
	lo := c * cl
	hi := min(lo+cl, prog.size)
	n := hi - lo
	ext := prog.slots + len(prog.tiled)
	for k, x := range flats {
		switch prog.extKinds[k] {
		case fromInput:
			widenBF16(temps[(ext+k)*cl:][:n], x[lo:hi])
		case fromScalar:
			widenBF16(temps[(ext+k)*cl:][:1], x[:1])
		}
	}
	for _, o := range prog.tiled {
		x := flats[o.idx]
		dst := temps[(prog.slots+o.slot)*cl:][:n]
		pos := lo % len(x)
		for len(dst) > 0 {
			m := min(len(dst), len(x)-pos)
			widenBF16(dst[:m], x[pos:pos+m])
			dst, pos = dst[m:], 0
		}
	}
	slice := func(o fusedOperand) ([]float32, *float32, bool) {
		switch o.kind {
		case fromInput:
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
		if ins.unary {
			if aScalar {
				a = dst
				fill(a, *as)
			}
			if ins.op == backends.OpTypeLogistic {
				logisticForBF16(dst, a) // the bfloat16 executor's function
			} else {
				unaryChunk(ins.op, dst, a)
			}
		} else {
			b, bs, bScalar := slice(ins.b)
			if i < last && !bf16Exact[ins.op] {
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
		// The last result is only narrowed, which truncates as
		// truncBF16 does (a side output among the earlier ones is
		// narrowed too, but later instructions read its truncation).
		if i < last && !bf16Exact[ins.op] {
			truncBF16(dst)
		}
	}
	narrowBF16Bits(out[lo:hi], dst)
	for j, t := range prog.sides {
		narrowBF16Bits(sides[j][lo:hi], temps[t*cl:][:n])
	}
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
