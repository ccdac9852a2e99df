//go:build amd64 && !purego

#include "textflag.h"

// func partitionEnts(dst, src *uint32, n int, mark *uint8, nl int)
//
// Sixteen entries at a time: load them, gather the mark byte of each
// entry's row (a dword gather at mark+row, its low byte; mark is padded by
// 3 bytes), compress the entries whose mark is 1 and those whose mark is 0
// into two registers, and store each with a mask of its count at the left
// cursor (dst) and at the right one (dst+nl). The last block loads and
// stores under a mask of its length, so nothing outside src[:n] is read and
// nothing outside dst[:n] written.
TEXT ·partitionEnts(SB), NOSPLIT, $0-40
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), DX
	MOVQ mark+24(FP), R8
	MOVQ nl+32(FP), R9
	LEAQ (DI)(R9*4), R10
	MOVL $0xFFFFFF, AX
	VPBROADCASTD AX, Z1
	MOVL $1, AX
	VPBROADCASTD AX, Z2
	TESTQ DX, DX
	JLE done

loop:
	MOVQ DX, CX
	CMPQ CX, $16
	JLE count
	MOVL $16, CX

count:
	MOVL $1, BX
	SHLL CX, BX
	DECL BX
	KMOVW BX, K1
	VMOVDQU32.Z (SI), K1, Z3
	VPANDD Z1, Z3, Z4
	KMOVW K1, K2
	VPGATHERDD (R8)(Z4*1), K2, Z5
	VPTESTMD Z2, Z5, K1, K3
	KANDNW K1, K3, K4
	VPCOMPRESSD Z3, K3, Z6
	VPCOMPRESSD Z3, K4, Z7
	KMOVW K3, AX
	POPCNTL AX, AX
	KMOVW K4, R11
	POPCNTL R11, R11
	MOVQ CX, R12
	MOVL AX, CX
	MOVL $1, BX
	SHLL CX, BX
	DECL BX
	KMOVW BX, K5
	MOVL R11, CX
	MOVL $1, BX
	SHLL CX, BX
	DECL BX
	KMOVW BX, K6
	VMOVDQU32 Z6, K5, (DI)
	VMOVDQU32 Z7, K6, (R10)
	LEAQ (DI)(AX*4), DI
	LEAQ (R10)(R11*4), R10
	LEAQ (SI)(R12*4), SI
	SUBQ R12, DX
	JGT loop

done:
	VZEROUPPER
	RET
