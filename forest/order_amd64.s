//go:build amd64 && !purego

#include "textflag.h"

// func rankSortKeys(keys, tmp *uint64, n int)
//
// Sorts n distinct keys, 0 < n <= 64, copied in tmp and padded there with
// ^0 to a multiple of 8: each key goes to keys[rank], its rank the number
// of smaller keys, counted eight at a time by unsigned comparisons.
TEXT ·rankSortKeys(SB), NOSPLIT, $0-24
	MOVQ keys+0(FP), DI
	MOVQ tmp+8(FP), SI
	MOVQ n+16(FP), CX
	LEAQ 7(CX), R9
	SHRQ $3, R9
	SHLQ $6, R9
	XORQ R10, R10

kloop:
	VPBROADCASTQ (SI)(R10*8), Z8
	XORQ AX, AX
	XORQ R11, R11

vloop:
	VMOVDQU64 (SI)(R11*1), Z1
	VPCMPUQ $1, Z8, Z1, K1
	KMOVW K1, BX
	POPCNTL BX, BX
	ADDQ BX, AX
	ADDQ $64, R11
	CMPQ R11, R9
	JLT vloop
	MOVQ (SI)(R10*8), BX
	MOVQ BX, (DI)(AX*8)
	INCQ R10
	CMPQ R10, CX
	JLT kloop
	VZEROUPPER
	RET

// func featureKeys(keys, konst *uint64, p int, nk, limit uint64, cand int) int
//
// featureOrder's keys, eight features a block: for each feature j < p not
// set in konst, priority = Mix(nk + (j+1)·Golden) (rng.At), key =
// priority>>16<<16 | j; the keys below limit are stored from keys[0] up and
// the others from keys[cand] down (cand is the number of such features).
// It returns the number below limit.
TEXT ·featureKeys(SB), NOSPLIT, $0-56
	MOVQ keys+0(FP), DI
	MOVQ konst+8(FP), SI
	MOVQ p+16(FP), R13
	VPBROADCASTQ nk+24(FP), Z20
	VPBROADCASTQ limit+32(FP), Z21
	MOVQ cand+40(FP), R10
	LEAQ (DI)(R10*8), R10
	MOVQ DI, R11
	MOVQ $0x9E3779B97F4A7C15, AX
	VPBROADCASTQ AX, Z22
	MOVQ $0xbf58476d1ce4e5b9, AX
	VPBROADCASTQ AX, Z23
	MOVQ $0x94d049bb133111eb, AX
	VPBROADCASTQ AX, Z24
	MOVQ $0xFFFFFFFFFFFF0000, AX
	VPBROADCASTQ AX, Z25
	MOVQ $1, AX
	VPBROADCASTQ AX, Z26
	VMOVDQU64 lanes<>(SB), Z27
	XORQ R8, R8

block:
	CMPQ R8, R13
	JGE done
	// The block's valid lanes: features j < p not set in konst (the
	// block's 8 bits lie in one word: j is a multiple of 8).
	MOVQ R8, BX
	SHRQ $6, BX
	MOVQ (SI)(BX*8), AX
	MOVQ R8, CX
	ANDQ $63, CX
	SHRQ CX, AX
	NOTQ AX
	MOVQ R13, CX
	SUBQ R8, CX
	CMPQ CX, $8
	JGE full
	MOVQ $1, R9
	SHLQ CX, R9
	DECQ R9
	ANDQ R9, AX

full:
	ANDQ $0xFF, AX
	KMOVW AX, K1
	VPBROADCASTQ R8, Z1
	VPADDQ Z27, Z1, Z1
	VPADDQ Z26, Z1, Z2
	VPMULLQ Z22, Z2, Z3
	VPADDQ Z20, Z3, Z3
	VPSRLQ $30, Z3, Z4
	VPXORQ Z4, Z3, Z3
	VPMULLQ Z23, Z3, Z3
	VPSRLQ $27, Z3, Z4
	VPXORQ Z4, Z3, Z3
	VPMULLQ Z24, Z3, Z3
	VPSRLQ $31, Z3, Z4
	VPXORQ Z4, Z3, Z3
	VPANDQ Z25, Z3, Z3
	VPORQ Z1, Z3, Z3
	VPCMPUQ $1, Z21, Z3, K1, K2
	KANDNW K1, K2, K3
	VPCOMPRESSQ Z3, K2, Z6
	VPCOMPRESSQ Z3, K3, Z7
	KMOVW K2, AX
	POPCNTL AX, AX
	KMOVW K3, BX
	POPCNTL BX, BX
	MOVQ AX, CX
	MOVL $1, R9
	SHLL CX, R9
	DECL R9
	KMOVW R9, K4
	VMOVDQU64 Z6, K4, (R11)
	LEAQ (R11)(AX*8), R11
	MOVQ BX, CX
	MOVL $1, R9
	SHLL CX, R9
	DECL R9
	KMOVW R9, K5
	SHLQ $3, BX
	SUBQ BX, R10
	VMOVDQU64 Z7, K5, (R10)
	ADDQ $8, R8
	JMP block

done:
	SUBQ DI, R11
	SHRQ $3, R11
	MOVQ R11, ret+48(FP)
	VZEROUPPER
	RET

DATA lanes<>+0(SB)/8, $0
DATA lanes<>+8(SB)/8, $1
DATA lanes<>+16(SB)/8, $2
DATA lanes<>+24(SB)/8, $3
DATA lanes<>+32(SB)/8, $4
DATA lanes<>+40(SB)/8, $5
DATA lanes<>+48(SB)/8, $6
DATA lanes<>+56(SB)/8, $7
GLOBL lanes<>(SB), RODATA|NOPTR, $64
