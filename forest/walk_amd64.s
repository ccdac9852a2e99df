//go:build amd64 && !purego

#include "textflag.h"

// func walk16(nodes *cnode, codes *uint8, offs *[16]int32, depth int, out *[16]int32, perm *[32]int32)
//
// A cnode is 8 bytes: right int32 at 0, then feature uint16, bin uint8 and
// missing uint8 in the dword at 4. Per step, for 16 rows at once:
//   node  = nodes[idx] (two 8-lane qword gathers, then split into the
//           right links and the test dwords with two permutes)
//   c     = codes[offs + feature] & 0xFF (one 16-lane dword gather)
//   idx   = (c <= bin || c == missing) ? idx+1 : right
// It stops early when no row moved (all rows are at leaves, which loop on
// themselves). perm holds the even dword indices 0,2,...,30 then the odd ones.
TEXT ·walk16(SB), NOSPLIT, $0-48
	MOVQ nodes+0(FP), R8
	MOVQ codes+8(FP), R9
	MOVQ offs+16(FP), R10
	MOVQ depth+24(FP), CX
	MOVQ out+32(FP), R11
	MOVQ perm+40(FP), R12
	VMOVDQU32 (R10), Z1
	VMOVDQU32 (R12), Z14
	VMOVDQU32 64(R12), Z15
	VPXORD Z0, Z0, Z0
	MOVL $1, AX
	VPBROADCASTD AX, Z2
	MOVL $0xFF, AX
	VPBROADCASTD AX, Z3
	MOVL $0xFFFF, AX
	VPBROADCASTD AX, Z11
	TESTQ CX, CX
	JEQ done

loop:
	VEXTRACTI32X8 $1, Z0, Y13
	KXNORW K1, K1, K1
	VPGATHERDQ (R8)(Y0*8), K1, Z16
	KXNORW K1, K1, K1
	VPGATHERDQ (R8)(Y13*8), K1, Z17
	VMOVDQA32 Z16, Z4
	VPERMT2D Z17, Z14, Z4
	VMOVDQA32 Z16, Z5
	VPERMT2D Z17, Z15, Z5
	VPANDD Z11, Z5, Z6
	VPADDD Z1, Z6, Z6
	KXNORW K1, K1, K1
	VPGATHERDD (R9)(Z6*1), K1, Z7
	VPANDD Z3, Z7, Z7
	VPSRLD $16, Z5, Z8
	VPANDD Z3, Z8, Z8
	VPSRLD $24, Z5, Z9
	VPCMPUD $2, Z8, Z7, K2
	VPCMPEQD Z9, Z7, K3
	KORW K2, K3, K2
	VPADDD Z2, Z0, Z10
	VMOVDQA32 Z0, Z12
	VPBLENDMD Z10, Z4, K2, Z0
	VPCMPEQD Z12, Z0, K4
	KORTESTW K4, K4
	JCS done
	DECQ CX
	JNE loop

done:
	VMOVDQU32 Z0, (R11)
	VZEROUPPER
	RET

// func walk48(nodes *cnode, codes *uint8, offs *[16]int32, step int, depth int, out *[48]int32, perm *[32]int32)
//
// walk16 for three groups of 16 rows (group g starts g·step bytes after the
// first): three independent gather chains in flight.
TEXT ·walk48(SB), NOSPLIT, $0-56
	MOVQ nodes+0(FP), R8
	MOVQ codes+8(FP), R9
	MOVQ offs+16(FP), R10
	MOVQ step+24(FP), DX
	MOVQ depth+32(FP), CX
	MOVQ out+40(FP), R11
	MOVQ perm+48(FP), R12
	VMOVDQU32 (R10), Z1
	VPBROADCASTD DX, Z28
	VPADDD Z28, Z1, Z29
	VPADDD Z28, Z29, Z30
	VMOVDQU32 (R12), Z14
	VMOVDQU32 64(R12), Z15
	VPXORD Z0, Z0, Z0
	VPXORD Z18, Z18, Z18
	VPXORD Z19, Z19, Z19
	MOVL $1, AX
	VPBROADCASTD AX, Z2
	MOVL $0xFF, AX
	VPBROADCASTD AX, Z3
	MOVL $0xFFFF, AX
	VPBROADCASTD AX, Z11
	TESTQ CX, CX
	JEQ done48

loop48:
	// Node gathers, 8 lanes at a time.
	VEXTRACTI32X8 $1, Z0, Y13
	VEXTRACTI32X8 $1, Z18, Y20
	VEXTRACTI32X8 $1, Z19, Y23
	KXNORW K1, K1, K1
	VPGATHERDQ (R8)(Y0*8), K1, Z16
	KXNORW K1, K1, K1
	VPGATHERDQ (R8)(Y18*8), K1, Z21
	KXNORW K1, K1, K1
	VPGATHERDQ (R8)(Y19*8), K1, Z24
	KXNORW K1, K1, K1
	VPGATHERDQ (R8)(Y13*8), K1, Z17
	KXNORW K1, K1, K1
	VPGATHERDQ (R8)(Y20*8), K1, Z22
	KXNORW K1, K1, K1
	VPGATHERDQ (R8)(Y23*8), K1, Z25
	// Split into right links (Z4, Z5, Z9) and tests (Z16, Z21, Z24).
	VMOVDQA32 Z16, Z4
	VPERMT2D Z17, Z14, Z4
	VPERMT2D Z17, Z15, Z16
	VMOVDQA32 Z21, Z5
	VPERMT2D Z22, Z14, Z5
	VPERMT2D Z22, Z15, Z21
	VMOVDQA32 Z24, Z9
	VPERMT2D Z25, Z14, Z9
	VPERMT2D Z25, Z15, Z24
	// Code gathers.
	VPANDD Z11, Z16, Z17
	VPADDD Z1, Z17, Z17
	VPANDD Z11, Z21, Z22
	VPADDD Z29, Z22, Z22
	VPANDD Z11, Z24, Z25
	VPADDD Z30, Z25, Z25
	KXNORW K1, K1, K1
	VPGATHERDD (R9)(Z17*1), K1, Z13
	KXNORW K1, K1, K1
	VPGATHERDD (R9)(Z22*1), K1, Z20
	KXNORW K1, K1, K1
	VPGATHERDD (R9)(Z25*1), K1, Z23
	// Group A.
	VPSRLD $16, Z16, Z17
	VPANDD Z3, Z17, Z17
	VPSRLD $24, Z16, Z16
	VPANDD Z3, Z13, Z13
	VPCMPUD $2, Z17, Z13, K2
	VPCMPEQD Z16, Z13, K3
	KORW K2, K3, K2
	VPADDD Z2, Z0, Z17
	VMOVDQA32 Z0, Z12
	VPBLENDMD Z17, Z4, K2, Z0
	// Group B.
	VPSRLD $16, Z21, Z22
	VPANDD Z3, Z22, Z22
	VPSRLD $24, Z21, Z21
	VPANDD Z3, Z20, Z20
	VPCMPUD $2, Z22, Z20, K6
	VPCMPEQD Z21, Z20, K7
	KORW K6, K7, K6
	VPADDD Z2, Z18, Z22
	VMOVDQA32 Z18, Z26
	VPBLENDMD Z22, Z5, K6, Z18
	// Group C.
	VPSRLD $16, Z24, Z25
	VPANDD Z3, Z25, Z25
	VPSRLD $24, Z24, Z24
	VPANDD Z3, Z23, Z23
	VPCMPUD $2, Z25, Z23, K4
	VPCMPEQD Z24, Z23, K5
	KORW K4, K5, K4
	VPADDD Z2, Z19, Z25
	VMOVDQA32 Z19, Z27
	VPBLENDMD Z25, Z9, K4, Z19
	// Stop when no row moved.
	VPCMPEQD Z12, Z0, K2
	VPCMPEQD Z26, Z18, K6
	VPCMPEQD Z27, Z19, K4
	KANDW K2, K6, K2
	KANDW K2, K4, K2
	KORTESTW K2, K2
	JCS done48
	DECQ CX
	JNE loop48

done48:
	VMOVDQU32 Z0, (R11)
	VMOVDQU32 Z18, 64(R11)
	VMOVDQU32 Z19, 128(R11)
	VZEROUPPER
	RET
