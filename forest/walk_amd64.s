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

// func walk32(nodes *cnode, codes *uint8, offs *[16]int32, stride32x16 int, depth int, out *[32]int32, perm *[32]int32)
//
// walk16 for two groups of 16 rows at once (rows 16..31 start 16·stride bytes
// after rows 0..15), so that twice as many gathers are in flight.
TEXT ·walk32(SB), NOSPLIT, $0-56
	MOVQ nodes+0(FP), R8
	MOVQ codes+8(FP), R9
	MOVQ offs+16(FP), R10
	MOVQ step+24(FP), DX
	MOVQ depth+32(FP), CX
	MOVQ out+40(FP), R11
	MOVQ perm+48(FP), R12
	VMOVDQU32 (R10), Z1
	VPBROADCASTD DX, Z29
	VPADDD Z29, Z1, Z29
	VMOVDQU32 (R12), Z14
	VMOVDQU32 64(R12), Z15
	VPXORD Z0, Z0, Z0
	VPXORD Z18, Z18, Z18
	MOVL $1, AX
	VPBROADCASTD AX, Z2
	MOVL $0xFF, AX
	VPBROADCASTD AX, Z3
	MOVL $0xFFFF, AX
	VPBROADCASTD AX, Z11
	TESTQ CX, CX
	JEQ done32

loop32:
	VEXTRACTI32X8 $1, Z0, Y13
	VEXTRACTI32X8 $1, Z18, Y27
	KXNORW K1, K1, K1
	VPGATHERDQ (R8)(Y0*8), K1, Z16
	KXNORW K5, K5, K5
	VPGATHERDQ (R8)(Y18*8), K5, Z30
	KXNORW K1, K1, K1
	VPGATHERDQ (R8)(Y13*8), K1, Z17
	KXNORW K5, K5, K5
	VPGATHERDQ (R8)(Y27*8), K5, Z31
	VMOVDQA32 Z16, Z4
	VPERMT2D Z17, Z14, Z4
	VMOVDQA32 Z16, Z5
	VPERMT2D Z17, Z15, Z5
	VMOVDQA32 Z30, Z22
	VPERMT2D Z31, Z14, Z22
	VMOVDQA32 Z30, Z23
	VPERMT2D Z31, Z15, Z23
	VPANDD Z11, Z5, Z6
	VPADDD Z1, Z6, Z6
	VPANDD Z11, Z23, Z24
	VPADDD Z29, Z24, Z24
	KXNORW K1, K1, K1
	VPGATHERDD (R9)(Z6*1), K1, Z7
	KXNORW K5, K5, K5
	VPGATHERDD (R9)(Z24*1), K5, Z25
	VPANDD Z3, Z7, Z7
	VPANDD Z3, Z25, Z25
	VPSRLD $16, Z5, Z8
	VPANDD Z3, Z8, Z8
	VPSRLD $24, Z5, Z9
	VPSRLD $16, Z23, Z26
	VPANDD Z3, Z26, Z26
	VPSRLD $24, Z23, Z21
	VPCMPUD $2, Z8, Z7, K2
	VPCMPEQD Z9, Z7, K3
	KORW K2, K3, K2
	VPCMPUD $2, Z26, Z25, K6
	VPCMPEQD Z21, Z25, K7
	KORW K6, K7, K6
	VPADDD Z2, Z0, Z10
	VMOVDQA32 Z0, Z12
	VPBLENDMD Z10, Z4, K2, Z0
	VPADDD Z2, Z18, Z20
	VMOVDQA32 Z18, Z28
	VPBLENDMD Z20, Z22, K6, Z18
	VPCMPEQD Z12, Z0, K4
	VPCMPEQD Z28, Z18, K3
	KANDW K4, K3, K4
	KORTESTW K4, K4
	JCS done32
	DECQ CX
	JNE loop32

done32:
	VMOVDQU32 Z0, (R11)
	VMOVDQU32 Z18, 64(R11)
	VZEROUPPER
	RET
