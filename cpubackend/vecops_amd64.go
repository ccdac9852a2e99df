//go:build amd64 && !purego && !noasm

package cpubackend

import (
	"unsafe"

	"github.com/gomlx/gomlx/backends"
	"github.com/gotrain/gotrain/internal/cpufeat"
)

//go:generate go run gen_vecops.go

// The AVX-512 loops of vecops_amd64.s (written by gen_vecops.go): dst = a op
// b over n floats, n a positive multiple of 16; in the VS forms b, and in the
// SV forms a, points to one scalar.

//go:noescape
func addVV(dst, a, b *float32, n int)

//go:noescape
func addVS(dst, a, b *float32, n int)

//go:noescape
func addSV(dst, a, b *float32, n int)

//go:noescape
func subVV(dst, a, b *float32, n int)

//go:noescape
func subVS(dst, a, b *float32, n int)

//go:noescape
func subSV(dst, a, b *float32, n int)

//go:noescape
func mulVV(dst, a, b *float32, n int)

//go:noescape
func mulVS(dst, a, b *float32, n int)

//go:noescape
func mulSV(dst, a, b *float32, n int)

//go:noescape
func divVV(dst, a, b *float32, n int)

//go:noescape
func divVS(dst, a, b *float32, n int)

//go:noescape
func divSV(dst, a, b *float32, n int)

//go:noescape
func maxVV(dst, a, b *float32, n int)

//go:noescape
func maxVS(dst, a, b *float32, n int)

//go:noescape
func maxSV(dst, a, b *float32, n int)

//go:noescape
func minVV(dst, a, b *float32, n int)

//go:noescape
func minVS(dst, a, b *float32, n int)

//go:noescape
func minSV(dst, a, b *float32, n int)

//go:noescape
func sqrtV(dst, a *float32, n int)

// The AVX2 loops of vecops_amd64.s: the same operations and bits, eight
// lanes at a time (n a positive multiple of 8).

//go:noescape
func addVVAVX2(dst, a, b *float32, n int)

//go:noescape
func addVSAVX2(dst, a, b *float32, n int)

//go:noescape
func addSVAVX2(dst, a, b *float32, n int)

//go:noescape
func subVVAVX2(dst, a, b *float32, n int)

//go:noescape
func subVSAVX2(dst, a, b *float32, n int)

//go:noescape
func subSVAVX2(dst, a, b *float32, n int)

//go:noescape
func mulVVAVX2(dst, a, b *float32, n int)

//go:noescape
func mulVSAVX2(dst, a, b *float32, n int)

//go:noescape
func mulSVAVX2(dst, a, b *float32, n int)

//go:noescape
func divVVAVX2(dst, a, b *float32, n int)

//go:noescape
func divVSAVX2(dst, a, b *float32, n int)

//go:noescape
func divSVAVX2(dst, a, b *float32, n int)

//go:noescape
func maxVVAVX2(dst, a, b *float32, n int)

//go:noescape
func maxVSAVX2(dst, a, b *float32, n int)

//go:noescape
func maxSVAVX2(dst, a, b *float32, n int)

//go:noescape
func minVVAVX2(dst, a, b *float32, n int)

//go:noescape
func minVSAVX2(dst, a, b *float32, n int)

//go:noescape
func minSVAVX2(dst, a, b *float32, n int)

//go:noescape
func sqrtVAVX2(dst, a *float32, n int)

//go:noescape
func signVAVX2(dst, a *float32, n int)

// vecSqrt computes the first k = len(dst) rounded down to 16 elements of
// dst = sqrt(a) with AVX-512 or AVX2 and returns k (0 without either).
func vecSqrt(dst, a []float32) int { return vecUnary(sqrtV, sqrtVAVX2, dst, a) }

// vecUnary runs the AVX-512 loop v512 or, without AVX-512, the AVX2 loop v2
// over the first k = len(dst) rounded down to 16 elements of a and returns
// k (0 when neither may run).
func vecUnary(v512, v2 func(dst, a *float32, n int), dst, a []float32) int {
	k := len(dst) &^ 15
	switch {
	case k == 0:
		return 0
	case hasVecAVX512:
		v512(&dst[0], &a[0], k)
	case hasVecAVX2:
		v2(&dst[0], &a[0], k)
	default:
		return 0
	}
	return k
}

//go:noescape
func signV(dst, a *float32, n int)

// vecSign computes the first k = len(dst) rounded down to 16 elements of
// dst = sign(a) (signFloat32's bits) with AVX-512 or AVX2 and returns k (0
// without either).
func vecSign(dst, a []float32) int { return vecUnary(signV, signVAVX2, dst, a) }

// hasVecAVX512 tells whether the CPU runs the AVX-512 loops and GOTRAIN_CPU
// (package internal/cpufeat) allows them; tests turn it off to compare with
// the Go loops.
var hasVecAVX512 = cpufeat.HasAVX512F

// hasVecAVX2 tells whether the AVX2 loops may run (used when hasVecAVX512
// is false); tests turn it off to compare with the Go loops.
var hasVecAVX2 = cpufeat.HasAVX2FMA

// The truncating AVX-512 loops: the result's low 16 bits cleared before it
// is stored (a bfloat16 program's instruction and truncBF16 in one pass).
//
//go:noescape
func addVVT(dst, a, b *float32, n int)

//go:noescape
func addVST(dst, a, b *float32, n int)

//go:noescape
func addSVT(dst, a, b *float32, n int)

//go:noescape
func subVVT(dst, a, b *float32, n int)

//go:noescape
func subVST(dst, a, b *float32, n int)

//go:noescape
func subSVT(dst, a, b *float32, n int)

//go:noescape
func mulVVT(dst, a, b *float32, n int)

//go:noescape
func mulVST(dst, a, b *float32, n int)

//go:noescape
func mulSVT(dst, a, b *float32, n int)

//go:noescape
func divVVT(dst, a, b *float32, n int)

//go:noescape
func divVST(dst, a, b *float32, n int)

//go:noescape
func divSVT(dst, a, b *float32, n int)

// vecLoops are the loops of each operation: vector-vector, vector-scalar,
// scalar-vector; an array, not a map, since fused programs look them up for
// every chunk of every instruction.
var vecLoops = [backends.OpTypeLast][3]func(dst, a, b *float32, n int){
	backends.OpTypeAdd: {addVV, addVS, addSV},
	backends.OpTypeSub: {subVV, subVS, subSV},
	backends.OpTypeMul: {mulVV, mulVS, mulSV},
	backends.OpTypeDiv: {divVV, divVS, divSV},
	backends.OpTypeMax: {maxVV, maxVS, maxSV},
	backends.OpTypeMin: {minVV, minVS, minSV},
}

// vecLoopsAVX2 are vecLoops' AVX2 loops.
var vecLoopsAVX2 = [backends.OpTypeLast][3]func(dst, a, b *float32, n int){
	backends.OpTypeAdd: {addVVAVX2, addVSAVX2, addSVAVX2},
	backends.OpTypeSub: {subVVAVX2, subVSAVX2, subSVAVX2},
	backends.OpTypeMul: {mulVVAVX2, mulVSAVX2, mulSVAVX2},
	backends.OpTypeDiv: {divVVAVX2, divVSAVX2, divSVAVX2},
	backends.OpTypeMax: {maxVVAVX2, maxVSAVX2, maxSVAVX2},
	backends.OpTypeMin: {minVVAVX2, minVSAVX2, minSVAVX2},
}

// The loops of bfloat16 programs that read bfloat16 operands where they are
// (gen_vecops.go's arithWiden): WV, VW, WW, WS and SW say which operand is
// bfloat16 (W), float32 (V) or a float32 scalar (S); T, that the result is
// truncated to bfloat16.
//
//go:noescape
func addWV(dst *float32, a, b unsafe.Pointer, n int)

//go:noescape
func addVW(dst *float32, a, b unsafe.Pointer, n int)

//go:noescape
func subWV(dst *float32, a, b unsafe.Pointer, n int)

//go:noescape
func subVW(dst *float32, a, b unsafe.Pointer, n int)

//go:noescape
func mulWV(dst *float32, a, b unsafe.Pointer, n int)

//go:noescape
func mulVW(dst *float32, a, b unsafe.Pointer, n int)

//go:noescape
func divWV(dst *float32, a, b unsafe.Pointer, n int)

//go:noescape
func divVW(dst *float32, a, b unsafe.Pointer, n int)

//go:noescape
func addWVT(dst *float32, a, b unsafe.Pointer, n int)

//go:noescape
func addVWT(dst *float32, a, b unsafe.Pointer, n int)

//go:noescape
func addWWT(dst *float32, a, b unsafe.Pointer, n int)

//go:noescape
func addWST(dst *float32, a, b unsafe.Pointer, n int)

//go:noescape
func addSWT(dst *float32, a, b unsafe.Pointer, n int)

//go:noescape
func subWVT(dst *float32, a, b unsafe.Pointer, n int)

//go:noescape
func subVWT(dst *float32, a, b unsafe.Pointer, n int)

//go:noescape
func subWWT(dst *float32, a, b unsafe.Pointer, n int)

//go:noescape
func subWST(dst *float32, a, b unsafe.Pointer, n int)

//go:noescape
func subSWT(dst *float32, a, b unsafe.Pointer, n int)

//go:noescape
func mulWVT(dst *float32, a, b unsafe.Pointer, n int)

//go:noescape
func mulVWT(dst *float32, a, b unsafe.Pointer, n int)

//go:noescape
func mulWWT(dst *float32, a, b unsafe.Pointer, n int)

//go:noescape
func mulWST(dst *float32, a, b unsafe.Pointer, n int)

//go:noescape
func mulSWT(dst *float32, a, b unsafe.Pointer, n int)

//go:noescape
func divWVT(dst *float32, a, b unsafe.Pointer, n int)

//go:noescape
func divVWT(dst *float32, a, b unsafe.Pointer, n int)

//go:noescape
func divWWT(dst *float32, a, b unsafe.Pointer, n int)

//go:noescape
func divWST(dst *float32, a, b unsafe.Pointer, n int)

//go:noescape
func divSWT(dst *float32, a, b unsafe.Pointer, n int)

// widenModes are the operand forms of vecLoopsWiden, in its order.
const (
	modeWV = iota
	modeVW
	modeWW
	modeWS
	modeSW
)

// vecLoopsWiden are the loops reading bfloat16 operands, by operation,
// form and truncation (0: none, 1: truncated); WW, WS and SW only truncate
// (a program's last, untruncated, instruction has a temporary operand).
var vecLoopsWiden = [backends.OpTypeLast][5][2]func(dst *float32, a, b unsafe.Pointer, n int){
	backends.OpTypeAdd: {{addWV, addWVT}, {addVW, addVWT}, {nil, addWWT}, {nil, addWST}, {nil, addSWT}},
	backends.OpTypeSub: {{subWV, subWVT}, {subVW, subVWT}, {nil, subWWT}, {nil, subWST}, {nil, subSWT}},
	backends.OpTypeMul: {{mulWV, mulWVT}, {mulVW, mulVWT}, {nil, mulWWT}, {nil, mulWST}, {nil, mulSWT}},
	backends.OpTypeDiv: {{divWV, divWVT}, {divVW, divVWT}, {nil, divWWT}, {nil, divWST}, {nil, divSWT}},
}

// hasWidenLoops tells whether op has loops reading bfloat16 operands.
func hasWidenLoops(op backends.OpType) bool {
	return hasVecAVX512 && op < backends.OpTypeLast && vecLoopsWiden[op][0][1] != nil
}

// vecBinaryWiden computes dst[j] = a[j] op b[j] for the first k = len(dst)
// rounded down to 16 elements, where a bfloat16 operand (a16 or b16, not
// nil) is read where it is and widened in a register, the other is a
// float32 vector (a or b) or scalar (as or bs); with trunc each result is
// truncated to bfloat16. It returns k (0 without AVX-512 or without loops
// for op: then it computes nothing).
func vecBinaryWiden(op backends.OpType, trunc bool, dst []float32, a16 []uint16, a []float32, as *float32, b16 []uint16, b []float32, bs *float32) int {
	k := len(dst) &^ 15
	if !hasWidenLoops(op) || k == 0 || (a16 == nil && b16 == nil) {
		return 0
	}
	t := 0
	if trunc {
		t = 1
	}
	var pa, pb unsafe.Pointer
	mode := modeWW
	switch {
	case a16 != nil && b16 != nil:
		pa, pb = unsafe.Pointer(&a16[:k][0]), unsafe.Pointer(&b16[:k][0])
	case a16 != nil && bs != nil:
		mode, pa, pb = modeWS, unsafe.Pointer(&a16[:k][0]), unsafe.Pointer(bs)
	case a16 != nil:
		mode, pa, pb = modeWV, unsafe.Pointer(&a16[:k][0]), unsafe.Pointer(&b[:k][0])
	case as != nil:
		mode, pa, pb = modeSW, unsafe.Pointer(as), unsafe.Pointer(&b16[:k][0])
	default:
		mode, pa, pb = modeVW, unsafe.Pointer(&a[:k][0]), unsafe.Pointer(&b16[:k][0])
	}
	f := vecLoopsWiden[op][mode][t]
	if f == nil {
		return 0
	}
	f(&dst[0], pa, pb, k)
	return k
}

// vecLoopsTrunc are vecLoops' truncating loops (AVX-512 only).
var vecLoopsTrunc = [backends.OpTypeLast][3]func(dst, a, b *float32, n int){
	backends.OpTypeAdd: {addVVT, addVST, addSVT},
	backends.OpTypeSub: {subVVT, subVST, subSVT},
	backends.OpTypeMul: {mulVVT, mulVST, mulSVT},
	backends.OpTypeDiv: {divVVT, divVST, divSVT},
}

// vecBinaryTrunc is vecBinary with each result truncated to bfloat16 (as
// truncBF16 does), in the same pass: AVX-512 only, else it computes
// nothing and returns 0.
func vecBinaryTrunc(op backends.OpType, dst, a []float32, as *float32, aScalar bool, b []float32, bs *float32, bScalar bool) int {
	k := len(dst) &^ 15
	if !hasVecAVX512 || k == 0 || (aScalar && bScalar) || op >= backends.OpTypeLast || vecLoopsTrunc[op][0] == nil {
		return 0
	}
	runLoops(&vecLoopsTrunc[op], k, dst, a, as, bScalar, b, bs, aScalar)
	return k
}

// runLoops runs the first k elements of dst = a op b on the loop of loops
// for the operands' form: vector-vector, vector-scalar or scalar-vector.
func runLoops(loops *[3]func(dst, a, b *float32, n int), k int, dst, a []float32, as *float32, bScalar bool, b []float32, bs *float32, aScalar bool) {
	switch {
	case bScalar:
		loops[1](&dst[0], &a[0], bs, k)
	case aScalar:
		loops[2](&dst[0], as, &b[0], k)
	default:
		loops[0](&dst[0], &a[0], &b[0], k)
	}
}

// vecBinary computes the first k = len(dst) rounded down to 16 elements of
// dst = a op b with AVX-512 or AVX2 (as, bs are the scalars when aScalar, bScalar)
// and returns k; 0 when the operation or the CPU has no loop.
func vecBinary(op backends.OpType, dst, a []float32, as *float32, aScalar bool, b []float32, bs *float32, bScalar bool) int {
	k := len(dst) &^ 15
	if !(hasVecAVX512 || hasVecAVX2) || k == 0 || (aScalar && bScalar) {
		return 0
	}
	table := &vecLoops
	if !hasVecAVX512 {
		table = &vecLoopsAVX2
	}
	if op >= backends.OpTypeLast || table[op][0] == nil {
		return 0
	}
	runLoops(&table[op], k, dst, a, as, bScalar, b, bs, aScalar)
	return k
}
