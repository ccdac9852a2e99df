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

// func presentSeen(seen *[256]uint8, present *[4]uint64)
//
// Sets bit c of present for each nonzero seen[c] and clears seen.
TEXT ·presentSeen(SB), NOSPLIT, $0-16
	MOVQ seen+0(FP), SI
	MOVQ present+8(FP), DI
	VMOVDQU64 (SI), Z0
	VMOVDQU64 64(SI), Z1
	VMOVDQU64 128(SI), Z2
	VMOVDQU64 192(SI), Z3
	VPTESTMB Z0, Z0, K1
	VPTESTMB Z1, Z1, K2
	VPTESTMB Z2, Z2, K3
	VPTESTMB Z3, Z3, K4
	KMOVQ K1, 0(DI)
	KMOVQ K2, 8(DI)
	KMOVQ K3, 16(DI)
	KMOVQ K4, 24(DI)
	VPXORQ Z4, Z4, Z4
	VMOVDQU64 Z4, (SI)
	VMOVDQU64 Z4, 64(SI)
	VMOVDQU64 Z4, 128(SI)
	VMOVDQU64 Z4, 192(SI)
	VZEROUPPER
	RET
