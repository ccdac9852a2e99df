//go:build amd64 && !purego

#include "textflag.h"

// func compressCol(dst, col *uint8, mask *uint64, words int)
//
// For each of the words 64-byte blocks of col: its bytes whose bit is set
// in mask's word are appended to dst, in order (VPCOMPRESSB, then a store
// masked to the bytes kept).
TEXT ·compressCol(SB), NOSPLIT, $0-32
	MOVQ dst+0(FP), DI
	MOVQ col+8(FP), SI
	MOVQ mask+16(FP), R9
	MOVQ words+24(FP), CX
	MOVQ $-1, R14
	XORQ AX, AX
	TESTQ CX, CX
	JLE cdone

cloop:
	VMOVDQU64 (SI), Z0
	MOVQ (R9)(AX*8), R11
	KMOVQ R11, K1
	VPCOMPRESSB Z0, K1, Z1
	POPCNTQ R11, R12
	BZHIQ R12, R14, R13
	KMOVQ R13, K2
	VMOVDQU8 Z1, K2, (DI)
	ADDQ R12, DI
	ADDQ $64, SI
	INCQ AX
	CMPQ AX, CX
	JLT cloop

cdone:
	VZEROUPPER
	RET
