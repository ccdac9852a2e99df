//go:build amd64 && !purego

#include "textflag.h"

// func walk16(nodes *cnode, codes *uint8, offs *[16]int32, depth int, out *[16]int32)
//
// A cnode is 8 bytes: right int32 at 0, then feature uint16, bin uint8 and
// missing uint8 in the dword at 4. Per step, for 16 rows at once:
//   right = nodes[idx].right; meta = nodes[idx].(feature|bin<<16|missing<<24)
//   c     = codes[offs + feature] & 0xFF
//   idx   = (c <= bin || c == missing) ? idx+1 : right
TEXT ·walk16(SB), NOSPLIT, $0-40
	MOVQ nodes+0(FP), R8
	MOVQ codes+8(FP), R9
	MOVQ offs+16(FP), R10
	MOVQ depth+24(FP), CX
	MOVQ out+32(FP), R11
	VMOVDQU32 (R10), Z1
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
	KXNORW K1, K1, K1
	VPGATHERDD (R8)(Z0*8), K1, Z4
	KXNORW K1, K1, K1
	VPGATHERDD 4(R8)(Z0*8), K1, Z5
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
	VPBLENDMD Z10, Z4, K2, Z0
	DECQ CX
	JNE loop

done:
	VMOVDQU32 Z0, (R11)
	VZEROUPPER
	RET
