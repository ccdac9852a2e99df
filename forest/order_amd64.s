//go:build amd64 && !purego

#include "textflag.h"

// func rankSortKeys(keys, tmp *uint64, n int)
//
// Sorts n distinct keys, n > 0 (sortKeys: at most rankSortVec), copied in tmp and padded there with
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

// PACKEDSCORE sets X24 to the packed scans' score s1/wl + (tt − 2·s2 +
// s1)/(tw − wl), from s1 in R10, wl in R9, s2 in R11, tt and tw in the
// operands given, by the float64 operations of the Go scans (X24-X26, not
// X1-X3, which would clobber the vectors Z1-Z3); it uses AX and R12.
#define PACKEDSCORE(tt, tw) \
	VXORPD X24, X24, X24 \
	VCVTSI2SDQ R10, X24, X24 \
	VXORPD X25, X25, X25 \
	VCVTSI2SDQ R9, X25, X25 \
	VDIVSD X25, X24, X24 \
	MOVQ R11, AX \
	ADDQ AX, AX \
	MOVQ tt, R12 \
	SUBQ AX, R12 \
	ADDQ R10, R12 \
	VXORPD X26, X26, X26 \
	VCVTSI2SDQ R12, X26, X26 \
	MOVQ tw, R12 \
	SUBQ R9, R12 \
	VXORPD X25, X25, X25 \
	VCVTSI2SDQ R12, X25, X25 \
	VDIVSD X25, X26, X26 \
	VADDSD X26, X24, X24

// func scanPackedAsm(h *int64, cs int, codes *uint8, n int, s *packedScan) int
//
// scanPackedN's loop over the codes codes[:n] of a packed histogram (the
// node's classes, cs-2 <= 16 of them, in two vectors of eight int64): for
// each code, its entries are read and cleared, its row counts, weights,
// Σ v·(2L+v) and Σ T·v summed across the classes and added to the left
// side's totals (all integer, wrapping as Go's int64 does, so the same
// sums), and the score s1/wl + (tt−2·s2+s1)/(tw−wl) computed by the same
// float64 operations as the Go loop. It stops after the first code whose
// score reaches s.best, returning its index with s updated through it
// (s.score its score), or returns n.
//
// packedScan: lc [16]int64 at 0, tc [16]int64 at 128, nl 256, wl 264,
// s1 272, s2 280, tt 288, tw 296, best 304, score 312.
TEXT ·scanPackedAsm(SB), NOSPLIT, $0-48
	MOVQ h+0(FP), DI
	MOVQ cs+8(FP), CX
	MOVQ codes+16(FP), SI
	MOVQ n+24(FP), DX
	MOVQ s+32(FP), BX
	// lane masks of the cs-2 classes: K1 lanes 0-7, K2 lanes 8-15
	MOVQ CX, R12
	SUBQ $2, CX
	MOVL $1, AX
	SHLL CX, AX
	DECL AX
	MOVQ R12, CX
	KMOVW AX, K1
	SHRL $8, AX
	KMOVW AX, K2
	VMOVDQU64 0(BX), Z0
	VMOVDQU64 64(BX), Z1
	VMOVDQU64 128(BX), Z2
	VMOVDQU64 192(BX), Z3
	MOVQ $0xFFFFFFFF, AX
	VPBROADCASTQ AX, Z4
	VPXORQ Z5, Z5, Z5
	MOVQ 256(BX), R8
	MOVQ 264(BX), R9
	MOVQ 272(BX), R10
	MOVQ 280(BX), R11
	MOVSD 304(BX), X14
	XORQ R13, R13
	SHLQ $3, CX // cs in bytes

ploop:
	CMPQ R13, DX
	JGE pdone
	MOVBQZX (SI)(R13*1), AX
	IMULQ CX, AX
	LEAQ (DI)(AX*1), AX
	MOVQ $0, (AX)
	VMOVDQU64.Z 16(AX), K1, Z6
	VMOVDQU64.Z 80(AX), K2, Z7
	VMOVDQU64 Z5, K1, 16(AX)
	VMOVDQU64 Z5, K2, 80(AX)
	VPSRLQ $32, Z6, Z8
	VPSRLQ $32, Z7, Z9
	VPADDQ Z9, Z8, Z8
	VPANDQ Z4, Z6, Z6
	VPANDQ Z4, Z7, Z7
	VPADDQ Z0, Z0, Z10
	VPADDQ Z6, Z10, Z10
	VPMULLQ Z6, Z10, Z10
	VPADDQ Z1, Z1, Z11
	VPADDQ Z7, Z11, Z11
	VPMULLQ Z7, Z11, Z11
	VPADDQ Z11, Z10, Z10
	VPMULLQ Z2, Z6, Z12
	VPMULLQ Z3, Z7, Z13
	VPADDQ Z13, Z12, Z12
	VPADDQ Z6, Z0, Z0
	VPADDQ Z7, Z1, Z1
	VPADDQ Z7, Z6, Z6
	// reduce Z8 (rows), Z6 (weights), Z10 (Σ v(2L+v)), Z12 (Σ T·v)
	VEXTRACTI64X4 $1, Z8, Y16
	VPADDQ Y16, Y8, Y8
	VEXTRACTI64X4 $1, Z6, Y17
	VPADDQ Y17, Y6, Y6
	VEXTRACTI64X4 $1, Z10, Y18
	VPADDQ Y18, Y10, Y10
	VEXTRACTI64X4 $1, Z12, Y19
	VPADDQ Y19, Y12, Y12
	VEXTRACTI32X4 $1, Y8, X16
	VPADDQ X16, X8, X8
	VEXTRACTI32X4 $1, Y6, X17
	VPADDQ X17, X6, X6
	VEXTRACTI32X4 $1, Y10, X18
	VPADDQ X18, X10, X10
	VEXTRACTI32X4 $1, Y12, X19
	VPADDQ X19, X12, X12
	VPUNPCKLQDQ X6, X8, X16
	VPUNPCKHQDQ X6, X8, X17
	VPADDQ X17, X16, X16
	VPUNPCKLQDQ X12, X10, X18
	VPUNPCKHQDQ X12, X10, X19
	VPADDQ X19, X18, X18
	VMOVQ X16, AX
	ADDQ AX, R8
	VPEXTRQ $1, X16, AX
	ADDQ AX, R9
	VMOVQ X18, AX
	ADDQ AX, R10
	VPEXTRQ $1, X18, AX
	ADDQ AX, R11
	PACKEDSCORE(288(BX), 296(BX))
	INCQ R13
	VUCOMISD X14, X24
	JCS ploop
	DECQ R13
	VMOVSD X24, 312(BX)
	JMP pstore

pdone:

pstore:
	VMOVDQU64 Z0, 0(BX)
	VMOVDQU64 Z1, 64(BX)
	MOVQ R8, 256(BX)
	MOVQ R9, 264(BX)
	MOVQ R10, 272(BX)
	MOVQ R11, 280(BX)
	MOVQ R13, ret+40(FP)
	VZEROUPPER
	RET

// PACKSUM adds to R8 the sum of the eight int64 lanes of a vector, given
// by its Z, Y and X names (packed entries, rows<<32 | weight: their sum
// keeps the two halves apart while the weights' sum stays below 2^32).
#define PACKSUM(z, y, x) \
	VEXTRACTI64X4 $1, z, Y16 \
	VPADDQ Y16, y, y \
	VEXTRACTI32X4 $1, y, X17 \
	VPADDQ X17, x, x \
	VPSHUFD $0x4E, x, X17 \
	VPADDQ X17, x, x \
	VMOVQ x, AX \
	ADDQ AX, R8

// SUMS2 sets R10 and R11 to the sums of the eight int64 lanes of Z10
// and Z12 (Σ L² and Σ T·L), reduced together.
#define SUMS2 \
	VPUNPCKLQDQ Z12, Z10, Z16 \
	VPUNPCKHQDQ Z12, Z10, Z17 \
	VPADDQ Z17, Z16, Z16 \
	VEXTRACTI64X4 $1, Z16, Y17 \
	VPADDQ Y17, Y16, Y16 \
	VEXTRACTI32X4 $1, Y16, X17 \
	VPADDQ X17, X16, X16 \
	VMOVQ X16, R10 \
	VPEXTRQ $1, X16, R11

// func scanPacked8Asm(h *int64, cs int, codes *uint8, n int, s *packedScan) int
//
// scanPackedAsm for nodes of at most eight classes (cs-2 <= 8, one vector)
// whose weight is below 2^31: the left side's class weights L and the
// node's T then fit in 31 bits, so Σ L² and Σ T·L are taken whole after
// each code with 32x32-bit products (VPMULUDQ) instead of kept up to date
// with 64-bit ones; they are the same integers, and the scores the same
// float64 operations on them. Each code's rows and weights are summed as
// the packed entries they are (rows<<32 | weight: the weights' sum stays
// below 2^32). s.s1 and s.s2 are recomputed from s.lc, not read.
TEXT ·scanPacked8Asm(SB), NOSPLIT, $0-48
	MOVQ h+0(FP), DI
	MOVQ cs+8(FP), CX
	MOVQ codes+16(FP), SI
	MOVQ n+24(FP), DX
	MOVQ s+32(FP), BX
	// lane mask of the cs-2 classes
	MOVQ CX, R12
	SUBQ $2, CX
	MOVL $1, AX
	SHLL CX, AX
	DECL AX
	MOVQ R12, CX
	KMOVW AX, K1
	VMOVDQU64 0(BX), Z0   // L
	VMOVDQU64 128(BX), Z2 // T
	MOVQ $0xFFFFFFFF, AX
	VPBROADCASTQ AX, Z4
	VPXORQ Z5, Z5, Z5
	MOVQ 256(BX), R8
	SHLQ $32, R8
	ORQ 264(BX), R8 // nl<<32 | wl
	MOVQ 288(BX), R14 // tt
	MOVQ 296(BX), R15 // tw
	MOVSD 304(BX), X14
	XORQ R13, R13
	SHLQ $3, CX // cs in bytes

qloop:
	CMPQ R13, DX
	JGE qdone
	MOVBQZX (SI)(R13*1), AX
	IMULQ CX, AX
	LEAQ (DI)(AX*1), AX
	MOVQ $0, (AX)
	VMOVDQU64.Z 16(AX), K1, Z6
	VMOVDQU64 Z5, K1, 16(AX)
	VPANDQ Z4, Z6, Z7
	VPADDQ Z7, Z0, Z0
	VPMULUDQ Z0, Z0, Z10 // L²
	VPMULUDQ Z2, Z0, Z12 // T·L
	PACKSUM(Z6, Y6, X6)
	SUMS2
	MOVL R8, R9 // wl
	PACKEDSCORE(R14, R15)
	INCQ R13
	VUCOMISD X14, X24
	JCS qloop
	DECQ R13
	VMOVSD X24, 312(BX)
	JMP qstore

qdone:
	// s1 and s2 of the state as it stands (n codes read, or none)
	VPMULUDQ Z0, Z0, Z10
	VPMULUDQ Z2, Z0, Z12
	SUMS2

qstore:
	VMOVDQU64 Z0, 0(BX)
	MOVQ R8, AX
	SHRQ $32, AX
	MOVQ AX, 256(BX)
	MOVL R8, AX
	MOVQ AX, 264(BX)
	MOVQ R10, 272(BX)
	MOVQ R11, 280(BX)
	MOVQ R13, ret+40(FP)
	VZEROUPPER
	RET

// The batched packed scans (scanBatch8Asm, scanBatch16Asm) take the
// codes eight at a time: each code's entries are added to the left side's
// packed class sums Lp (rows<<32 | weight, lanes of Z0, and Z1 for classes
// 8-15), and its L² and T·L lanes (32x32-bit products of the weights, the
// low halves) and Lp kept; the eight codes' lanes are then summed across
// the classes together, by a tree of shuffles, into one vector each of
// Σ L², Σ T·L and rows<<32 | wl, whose eight scores are computed by the
// packed scans' float64 operations in one vector. Registers: DI h, CX cs in
// bytes, SI codes, DX n, BX the state, R13 the batch's first code, R12 the
// codes left from it, R14 rows<<32 | wl through the batches taken, R15 the
// state's zero entry (what lanes past n read), Z2 (and Z3) T, Z4 the low
// halves' mask, Z5 zero, Z28 tt, Z29 tw, Z30 the best score.

// BADDR sets AX to the entries of lane i's code (the zero entry past n).
#define BADDR(i) \
	MOVBQZX i(SI)(R13*1), AX \
	IMULQ CX, AX \
	ADDQ DI, AX \
	CMPQ R12, $(i+1) \
	CMOVQLT R15, AX

// BSTEP8 adds lane i's entries (classes 0-7) to Z0 and sets P to its L²
// lanes, Q to its T·L lanes and L to Lp.
#define BSTEP8(i, P, Q, L) \
	BADDR(i) \
	VMOVDQU64.Z 16(AX), K1, Z6 \
	VPADDQ Z6, Z0, Z0 \
	VPMULUDQ Z0, Z0, P \
	VPMULUDQ Z2, Z0, Q \
	VMOVDQA64 Z0, L

// BSTEP16 is BSTEP8 for classes 0-15 (Z1, Z3 and K4 the second half).
#define BSTEP16(i, P, Q, L) \
	BADDR(i) \
	VMOVDQU64.Z 16(AX), K1, Z6 \
	VMOVDQU64.Z 80(AX), K4, Z7 \
	VPADDQ Z6, Z0, Z0 \
	VPADDQ Z7, Z1, Z1 \
	VPMULUDQ Z0, Z0, P \
	VPMULUDQ Z1, Z1, Z7 \
	VPADDQ Z7, P, P \
	VPMULUDQ Z2, Z0, Q \
	VPMULUDQ Z3, Z1, Z7 \
	VPADDQ Z7, Q, Q \
	VPADDQ Z1, Z0, L

// BPAIR sums the neighbouring lanes of the codes' vectors a and b into
// out: in each 128-bit lane, a's pair sum, then b's.
#define BPAIR(a, b, out) \
	VPUNPCKLQDQ b, a, Z26 \
	VPUNPCKHQDQ b, a, Z27 \
	VPADDQ Z27, Z26, out

// BHALVES sums the neighbouring 128-bit lanes of a, then of b, into out.
#define BHALVES(a, b, out) \
	VSHUFI64X2 $0x88, b, a, Z26 \
	VSHUFI64X2 $0xDD, b, a, Z27 \
	VPADDQ Z27, Z26, out

// BCODES takes the batch's eight codes by step (BSTEP8 or BSTEP16) and
// leaves Σ L² of code k in lane k of Z14, Σ T·L in Z15, rows<<32 | wl
// (from the kernel's start, the state's wl included) in Z16.
#define BCODES(step) \
	step(0, Z8, Z9, Z10) \
	step(1, Z11, Z12, Z13) \
	BPAIR(Z8, Z11, Z14) \
	BPAIR(Z9, Z12, Z15) \
	BPAIR(Z10, Z13, Z16) \
	step(2, Z8, Z9, Z10) \
	step(3, Z11, Z12, Z13) \
	BPAIR(Z8, Z11, Z17) \
	BPAIR(Z9, Z12, Z18) \
	BPAIR(Z10, Z13, Z19) \
	step(4, Z8, Z9, Z10) \
	step(5, Z11, Z12, Z13) \
	BPAIR(Z8, Z11, Z20) \
	BPAIR(Z9, Z12, Z21) \
	BPAIR(Z10, Z13, Z22) \
	step(6, Z8, Z9, Z10) \
	step(7, Z11, Z12, Z13) \
	BPAIR(Z8, Z11, Z23) \
	BPAIR(Z9, Z12, Z24) \
	BPAIR(Z10, Z13, Z25) \
	BHALVES(Z14, Z17, Z14) \
	BHALVES(Z20, Z23, Z20) \
	BHALVES(Z15, Z18, Z15) \
	BHALVES(Z21, Z24, Z21) \
	BHALVES(Z16, Z19, Z16) \
	BHALVES(Z22, Z25, Z22) \
	BHALVES(Z14, Z20, Z14) \
	BHALVES(Z15, Z21, Z15) \
	BHALVES(Z16, Z22, Z16)

// BSCORE sets K2 to the batch's lanes whose score s1/wl + (tt − 2·s2 +
// s1)/(tw − wl) reaches the best, with the score in Z9. Lanes past the
// codes left repeat the last code's sums (they add the zero entry), so
// they reach the best when that code does, in the same batch.
#define BSCORE \
	VPANDQ Z4, Z16, Z8 \
	VCVTQQ2PD Z14, Z9 \
	VCVTQQ2PD Z8, Z10 \
	VDIVPD Z10, Z9, Z9 \
	VPADDQ Z15, Z15, Z10 \
	VPSUBQ Z10, Z28, Z10 \
	VPADDQ Z14, Z10, Z10 \
	VPSUBQ Z8, Z29, Z11 \
	VCVTQQ2PD Z10, Z10 \
	VCVTQQ2PD Z11, Z11 \
	VDIVPD Z11, Z10, Z10 \
	VADDPD Z10, Z9, Z9 \
	VCMPPD $0x1D, Z30, Z9, K2

// BSETUP loads the arguments and the state (see above), K1 and K4 the
// class lanes.
#define BSETUP \
	MOVQ h+0(FP), DI \
	MOVQ cs+8(FP), CX \
	MOVQ codes+16(FP), SI \
	MOVQ n+24(FP), DX \
	MOVQ s+32(FP), BX \
	MOVQ CX, R12 \
	SUBQ $2, R12 \
	MOVL $1, AX \
	SHLXQ R12, AX, AX \
	DECQ AX \
	KMOVW AX, K1 \
	SHRL $8, AX \
	KMOVW AX, K4 \
	SHLQ $3, CX \
	VMOVDQU64 0(BX), Z0 \
	VMOVDQU64 64(BX), Z1 \
	VMOVDQU64 128(BX), Z2 \
	VMOVDQU64 192(BX), Z3 \
	MOVQ $0xFFFFFFFF, AX \
	VPBROADCASTQ AX, Z4 \
	VPXORQ Z5, Z5, Z5 \
	VPBROADCASTQ 288(BX), Z28 \
	VPBROADCASTQ 296(BX), Z29 \
	VBROADCASTSD 304(BX), Z30 \
	LEAQ 320(BX), R15 \
	XORQ R13, R13 \
	MOVQ 264(BX), R14

// BTAKE clears the batch's entries (first words and classes, by the
// class masks), takes its last lane's rows<<32 | wl and moves to the next
// batch.
#define BCLEAR(i) \
	BADDR(i) \
	MOVQ $0, (AX) \
	VMOVDQU64 Z5, K1, 16(AX) \
	VMOVDQU64 Z5, K4, 80(AX)

#define BTAKE \
	BCLEAR(0) \
	BCLEAR(1) \
	BCLEAR(2) \
	BCLEAR(3) \
	BCLEAR(4) \
	BCLEAR(5) \
	BCLEAR(6) \
	BCLEAR(7) \
	VEXTRACTI64X2 $3, Z16, X8 \
	VPEXTRQ $1, X8, R14 \
	ADDQ $8, R13

// BSTORE writes the state: L (Z0, Z1 less their row counts), nl and wl
// from R14, Σ L² and Σ T·L recomputed from L, and returns the codes taken.
#define BSTORE \
	VPANDQ Z4, Z0, Z6 \
	VPANDQ Z4, Z1, Z7 \
	VMOVDQU64 Z6, 0(BX) \
	VMOVDQU64 Z7, 64(BX) \
	MOVQ R14, AX \
	SHRQ $32, AX \
	ADDQ AX, 256(BX) \
	MOVL R14, AX \
	MOVQ AX, 264(BX) \
	VPMULUDQ Z0, Z0, Z10 \
	VPMULUDQ Z1, Z1, Z11 \
	VPADDQ Z11, Z10, Z10 \
	VPMULUDQ Z2, Z0, Z12 \
	VPMULUDQ Z3, Z1, Z13 \
	VPADDQ Z13, Z12, Z12 \
	SUMS2 \
	MOVQ R10, 272(BX) \
	MOVQ R11, 280(BX) \
	MOVQ R13, ret+40(FP) \
	VZEROUPPER \
	RET

// func scanBatch8Asm(h *int64, cs int, codes *uint8, n int, s *packedScan) int
//
// scanPacked8Asm's scan eight codes at a time (see above; cs-2 <= 8, the
// node's weight below 2^31): it takes whole batches of codes until one
// holds a score that reaches s.best, and returns that batch's first index
// with s and h as they stood before it (the caller scans that batch code
// by code), or n with s through every code; it clears the entries of the
// codes it takes. codes[:n+7] must be readable.
TEXT ·scanBatch8Asm(SB), NOSPLIT, $0-48
	BSETUP

b8loop:
	MOVQ DX, R12
	SUBQ R13, R12
	JLE b8done
	VMOVDQU64 Z0, 0(BX)
	BCODES(BSTEP8)
	BSCORE
	KORTESTW K2, K2
	JNZ b8hit
	BTAKE
	JMP b8loop

b8hit:
	VMOVDQU64 0(BX), Z0
	BSTORE

b8done:
	MOVQ DX, R13
	BSTORE

// func scanBatch16Asm(h *int64, cs int, codes *uint8, n int, s *packedScan) int
//
// scanBatch8Asm for nodes of 9 to 16 classes (scanPackedAsm's in batches;
// the node's weight below 2^31).
TEXT ·scanBatch16Asm(SB), NOSPLIT, $0-48
	BSETUP

b16loop:
	MOVQ DX, R12
	SUBQ R13, R12
	JLE b16done
	VMOVDQU64 Z0, 0(BX)
	VMOVDQU64 Z1, 64(BX)
	BCODES(BSTEP16)
	BSCORE
	KORTESTW K2, K2
	JNZ b16hit
	BTAKE
	JMP b16loop

b16hit:
	VMOVDQU64 0(BX), Z0
	VMOVDQU64 64(BX), Z1
	BSTORE

b16done:
	MOVQ DX, R13
	BSTORE
