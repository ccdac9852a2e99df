//go:build amd64 && !purego

#include "textflag.h"

// func compressPair(dstA, dstB, col *uint8, maskA, maskB *uint64, words int)
//
// For each of the words 64-byte blocks of col: its bytes whose bit is set
// in maskA's word are appended to dstA, in order, and those of maskB's
// word to dstB (VPCOMPRESSB, then a store masked to the bytes kept). maskB
// nil: dstB is not used.
TEXT ·compressPair(SB), NOSPLIT, $0-48
	MOVQ dstA+0(FP), DI
	MOVQ dstB+8(FP), R8
	MOVQ col+16(FP), SI
	MOVQ maskA+24(FP), R9
	MOVQ maskB+32(FP), R10
	MOVQ words+40(FP), CX
	MOVQ $-1, R14
	XORQ AX, AX
	TESTQ CX, CX
	JLE cdone
	TESTQ R10, R10
	JEQ cone

cpair:
	VMOVDQU64 (SI), Z0
	MOVQ (R9)(AX*8), R11
	KMOVQ R11, K1
	VPCOMPRESSB Z0, K1, Z1
	POPCNTQ R11, R12
	BZHIQ R12, R14, R13
	KMOVQ R13, K2
	VMOVDQU8 Z1, K2, (DI)
	ADDQ R12, DI
	MOVQ (R10)(AX*8), R11
	KMOVQ R11, K3
	VPCOMPRESSB Z0, K3, Z2
	POPCNTQ R11, R12
	BZHIQ R12, R14, R13
	KMOVQ R13, K4
	VMOVDQU8 Z2, K4, (R8)
	ADDQ R12, R8
	ADDQ $64, SI
	INCQ AX
	CMPQ AX, CX
	JLT cpair
	JMP cdone

cone:
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
	JLT cone

cdone:
	VZEROUPPER
	RET
