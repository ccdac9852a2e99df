//go:build amd64 && !purego

#include "textflag.h"

// COUNTROW counts one row into a packed Gini histogram (AX: h, DX: cs,
// R8: the code marks): its code, read from col at the row index in c
// (left holding code·cs + entry), is marked in seen, and w, its node
// weight (builder.nodeW: the packed weight <<8 | the class's entry, wb
// w's low byte), adds w>>8 to h[code·cs + entry]; t is scratch.
#define COUNTROW(col, c, w, wb, t) \
	MOVBQZX (col)(c*1), c \
	MOVB $1, (R8)(c*1) \
	IMULQ DX, c \
	MOVBQZX wb, t \
	ADDQ t, c \
	SHRQ $8, w \
	ADDQ w, (AX)(c*8)

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

// func columnBits(col *uint8, n int, nz *uint64) bool
//
// Sets bit b of nz[w] when col[64w+b] is not 0, for the n codes of col
// (the last word's bits past n clear), and reports whether every code
// equals the first.
TEXT ·columnBits(SB), NOSPLIT, $0-25
	MOVQ col+0(FP), SI
	MOVQ n+8(FP), CX
	MOVQ nz+16(FP), DI
	VPBROADCASTB (SI), Z1
	XORQ R8, R8
	MOVQ CX, DX
	SHRQ $6, DX
	JEQ cbtail

cbloop:
	VMOVDQU64 (SI), Z0
	VPTESTMB Z0, Z0, K1
	KMOVQ K1, (DI)
	VPCMPB $4, Z1, Z0, K2
	KMOVQ K2, AX
	ORQ AX, R8
	ADDQ $64, SI
	ADDQ $8, DI
	DECQ DX
	JNZ cbloop

cbtail:
	ANDQ $63, CX
	JEQ cbdone
	MOVQ $-1, AX
	BZHIQ CX, AX, AX
	KMOVQ AX, K3
	VMOVDQU8.Z (SI), K3, Z0
	VPTESTMB Z0, Z0, K1
	KMOVQ K1, (DI)
	VPCMPB $4, Z1, Z0, K2
	KANDQ K3, K2, K2
	KMOVQ K2, AX
	ORQ AX, R8

cbdone:
	TESTQ R8, R8
	SETEQ ret+24(FP)
	VZEROUPPER
	RET

DATA iota16<>+0(SB)/8, $0x0003000200010000
DATA iota16<>+8(SB)/8, $0x0007000600050004
DATA iota16<>+16(SB)/8, $0x000b000a00090008
DATA iota16<>+24(SB)/8, $0x000f000e000d000c
DATA iota16<>+32(SB)/8, $0x0013001200110010
DATA iota16<>+40(SB)/8, $0x0017001600150014
DATA iota16<>+48(SB)/8, $0x001b001a00190018
DATA iota16<>+56(SB)/8, $0x001f001e001d001c
GLOBL iota16<>(SB), RODATA|NOPTR, $64

// func histSparseAsm(h *int64, col *uint8, nodeBits, colBits *uint64, words int, rowW *int64, cs int, seen *uint8, list *uint16, wlist *uint64) int
//
// The packed Gini histogram of the rows of a local block set in both
// nodeBits and colBits (the node's rows whose code is not 0): the words
// where both have a row are listed in wlist first (eight words at a time,
// VPCOMPRESSQ of their indices; wlist has room for words+8), then those
// words' rows in list in increasing order (VPCOMPRESSW, 32 rows at a
// time; list holds 32 entries past the rows listed), then row i adds
// rowW[i]>>8 to h[col[i]·cs + rowW[i]&0xFF] and marks its code in seen.
// It returns the rows listed.
TEXT ·histSparseAsm(SB), NOSPLIT, $0-88
	MOVQ nodeBits+16(FP), R9
	MOVQ colBits+24(FP), R10
	MOVQ words+32(FP), CX
	MOVQ list+64(FP), DI
	MOVQ wlist+72(FP), R15
	VPMOVZXBQ iota8<>(SB), Z13
	MOVL $8, AX
	VPBROADCASTQ AX, Z14
	XORQ R13, R13 // word
	XORQ BX, BX   // words listed

hsw8:
	MOVQ CX, AX
	SUBQ R13, AX
	JLE hsw8done
	MOVL $0xFF, R8
	CMPQ AX, $8
	JGE hsw8full
	MOVL $1, R8
	SHLXL AX, R8, R8
	DECL R8

hsw8full:
	KMOVW R8, K1
	VMOVDQU64.Z (R9)(R13*8), K1, Z0
	VMOVDQU64.Z (R10)(R13*8), K1, Z1
	VPTESTMQ Z1, Z0, K2
	VPCOMPRESSQ Z13, K2, Z2
	VMOVDQU64 Z2, (R15)(BX*8)
	KMOVW K2, AX
	POPCNTL AX, AX
	ADDQ AX, BX
	VPADDQ Z14, Z13, Z13
	ADDQ $8, R13
	JMP hsw8

hsw8done:
	VMOVDQU64 iota16<>(SB), Z15
	MOVL $32, AX
	VPBROADCASTW AX, Z11
	XORQ R12, R12 // rows listed
	XORQ R13, R13 // words listed taken

hsword:
	CMPQ R13, BX
	JGE hslist
	MOVQ (R15)(R13*8), R11
	MOVQ (R9)(R11*8), AX
	ANDQ (R10)(R11*8), AX
	SHLQ $6, R11
	VPBROADCASTW R11, Z10
	VPADDW Z15, Z10, Z10
	KMOVD AX, K1
	VPCOMPRESSW Z10, K1, Z2
	VMOVDQU64 Z2, (DI)(R12*2)
	MOVL AX, R8
	POPCNTQ R8, R8
	ADDQ R8, R12
	SHRQ $32, AX
	KMOVD AX, K2
	VPADDW Z11, Z10, Z3
	VPCOMPRESSW Z3, K2, Z2
	VMOVDQU64 Z2, (DI)(R12*2)
	POPCNTQ AX, AX
	ADDQ AX, R12
	INCQ R13
	JMP hsword

hslist:
	MOVQ R12, ret+80(FP)
	VZEROUPPER
	MOVQ h+0(FP), AX
	MOVQ col+8(FP), SI
	MOVQ rowW+40(FP), R11
	MOVQ cs+48(FP), DX
	MOVQ seen+56(FP), R8
	XORQ R13, R13
	TESTQ R12, R12
	JLE hsdone

hsrow:
	MOVWQZX (DI)(R13*2), R14
	MOVQ (R11)(R14*8), BX
	COUNTROW(SI, R14, BX, BL, R15)
	INCQ R13
	CMPQ R13, R12
	JLT hsrow

hsdone:
	RET

DATA iota8<>+0(SB)/8, $0x0706050403020100
DATA iota8<>+8(SB)/8, $0x0f0e0d0c0b0a0908
DATA iota8<>+16(SB)/8, $0x1716151413121110
DATA iota8<>+24(SB)/8, $0x1f1e1d1c1b1a1918
DATA iota8<>+32(SB)/8, $0x2726252423222120
DATA iota8<>+40(SB)/8, $0x2f2e2d2c2b2a2928
DATA iota8<>+48(SB)/8, $0x3736353433323130
DATA iota8<>+56(SB)/8, $0x3f3e3d3c3b3a3938
GLOBL iota8<>(SB), RODATA|NOPTR, $64

// func listCodes(set *[4]uint64, codes *uint8) int
//
// Writes the codes whose bits are set in set to codes, in increasing
// order (VPCOMPRESSB of the bytes 0..255, 64 at a time), and returns how
// many there are; codes has room for 64 bytes past them.
TEXT ·listCodes(SB), NOSPLIT, $0-24
	MOVQ set+0(FP), SI
	MOVQ codes+8(FP), DI
	VMOVDQU64 iota8<>(SB), Z0
	MOVL $64, AX
	VPBROADCASTB AX, Z1
	XORQ CX, CX
	MOVQ $4, DX

lcword:
	MOVQ (SI), AX
	KMOVQ AX, K1
	VPCOMPRESSB Z0, K1, Z2
	VMOVDQU64 Z2, (DI)(CX*1)
	POPCNTQ AX, AX
	ADDQ AX, CX
	VPADDB Z1, Z0, Z0
	ADDQ $8, SI
	DECQ DX
	JNZ lcword

	MOVQ CX, ret+16(FP)
	VZEROUPPER
	RET

// func histNodeAsm(h *int64, col *uint8, rows *int32, n int, nw *int64, cs int, seen *uint8)
//
// The packed Gini histogram of a node's rows from their node weights nw
// (builder.nodeW, in the order of rows): the i-th row adds nw[i]>>8 to
// h[col[rows[i]]·cs + nw[i]&0xFF] and marks its code in seen. Two rows a
// turn.
TEXT ·histNodeAsm(SB), NOSPLIT, $0-56
	MOVQ h+0(FP), AX
	MOVQ col+8(FP), DI
	MOVQ rows+16(FP), R9
	MOVQ n+24(FP), R10
	MOVQ nw+32(FP), R11
	MOVQ cs+40(FP), DX
	MOVQ seen+48(FP), R8
	XORQ R12, R12
	MOVQ R10, CX
	ANDQ $-2, CX
	JEQ nodd

npair:
	MOVLQSX (R9)(R12*4), R13
	MOVLQSX 4(R9)(R12*4), R14
	MOVQ (R11)(R12*8), BX
	MOVQ 8(R11)(R12*8), R15
	MOVBQZX (DI)(R13*1), R13
	MOVBQZX (DI)(R14*1), R14
	MOVB $1, (R8)(R13*1)
	MOVB $1, (R8)(R14*1)
	IMULQ DX, R13
	IMULQ DX, R14
	MOVBQZX BL, SI
	ADDQ SI, R13
	SHRQ $8, BX
	ADDQ BX, (AX)(R13*8)
	MOVBQZX R15B, SI
	ADDQ SI, R14
	SHRQ $8, R15
	ADDQ R15, (AX)(R14*8)
	ADDQ $2, R12
	CMPQ R12, CX
	JLT npair

nodd:
	CMPQ R12, R10
	JGE ndone
	MOVLQSX (R9)(R12*4), R13
	MOVQ (R11)(R12*8), BX
	COUNTROW(DI, R13, BX, BL, SI)

ndone:
	RET

// EXPAND64 sets Z1 to the 64 codes of the rows of bitmap word (AX) of a
// sparse column (columnCodes): the base (Z2) where its bit is clear, the
// next codes from SI where set (VPEXPANDB of the 64 bytes at SI, which
// advances past them); R11 holds the word.
#define EXPAND64 \
	MOVQ (R9)(AX*8), R11 \
	KMOVQ R11, K1 \
	VMOVDQU64 (SI), Z0 \
	VMOVDQA64 Z2, Z1 \
	VPEXPANDB Z0, K1, Z1 \
	POPCNTQ R11, R11 \
	ADDQ R11, SI

// func expandCol(dst, vals *uint8, bits *uint64, words int, base uint8)
//
// Writes the 64 codes of each of the words bitmap words of a sparse column
// to dst (64 bytes a word); vals must be readable 64 bytes past its last
// code.
TEXT ·expandCol(SB), NOSPLIT, $0-33
	MOVQ dst+0(FP), DI
	MOVQ vals+8(FP), SI
	MOVQ bits+16(FP), R9
	MOVQ words+24(FP), CX
	MOVBLZX base+32(FP), AX
	VPBROADCASTB AX, Z2
	XORQ AX, AX
	TESTQ CX, CX
	JLE edone

eloop:
	EXPAND64
	VMOVDQU64 Z1, (DI)
	ADDQ $64, DI
	INCQ AX
	CMPQ AX, CX
	JLT eloop

edone:
	VZEROUPPER
	RET

// func expandCompressCol(dst, vals *uint8, bits, mask *uint64, words int, base uint8)
//
// compressCol of a sparse column: each word's 64 codes (EXPAND64), those
// of the rows set in mask's word appended to dst, in order.
TEXT ·expandCompressCol(SB), NOSPLIT, $0-41
	MOVQ dst+0(FP), DI
	MOVQ vals+8(FP), SI
	MOVQ bits+16(FP), R9
	MOVQ mask+24(FP), R10
	MOVQ words+32(FP), CX
	MOVBLZX base+40(FP), AX
	VPBROADCASTB AX, Z2
	MOVQ $-1, R14
	XORQ AX, AX
	TESTQ CX, CX
	JLE xdone

xloop:
	EXPAND64
	MOVQ (R10)(AX*8), R12
	KMOVQ R12, K2
	VPCOMPRESSB Z1, K2, Z3
	POPCNTQ R12, R12
	BZHIQ R12, R14, R13
	KMOVQ R13, K3
	VMOVDQU8 Z3, K3, (DI)
	ADDQ R12, DI
	INCQ AX
	CMPQ AX, CX
	JLT xloop

xdone:
	VZEROUPPER
	RET

// func sumEntries(h *int64, cs int, codes *uint8, n int, sum *[16]int64)
//
// Sets sum to the sums of the class entries (h[c·cs+2 ..], cs-2 <= 16 of
// them) of the n codes c listed in codes.
TEXT ·sumEntries(SB), NOSPLIT, $0-40
	MOVQ h+0(FP), DI
	MOVQ cs+8(FP), CX
	MOVQ codes+16(FP), SI
	MOVQ n+24(FP), DX
	MOVQ sum+32(FP), BX
	LEAQ -2(CX), R8
	MOVL $1, AX
	SHLXQ R8, AX, AX
	DECQ AX
	KMOVW AX, K1
	SHRL $8, AX
	KMOVW AX, K2
	SHLQ $3, CX
	VPXORQ Z0, Z0, Z0
	VPXORQ Z1, Z1, Z1
	XORQ R9, R9
	TESTQ DX, DX
	JLE sedone

seloop:
	MOVBQZX (SI)(R9*1), AX
	IMULQ CX, AX
	VMOVDQU64.Z 16(DI)(AX*1), K1, Z2
	VMOVDQU64.Z 80(DI)(AX*1), K2, Z3
	VPADDQ Z2, Z0, Z0
	VPADDQ Z3, Z1, Z1
	INCQ R9
	CMPQ R9, DX
	JLT seloop

sedone:
	VMOVDQU64 Z0, (BX)
	VMOVDQU64 Z1, 64(BX)
	VZEROUPPER
	RET

// ROWMASKS sets K1 and K2 to the first and second eight of the cw (CX,
// at most 16) words of a row.
#define ROWMASKS \
	MOVL $1, AX \
	SHLXL CX, AX, AX \
	DECL AX \
	KMOVW AX, K1 \
	SHRL $8, AX \
	KMOVW AX, K2

// func orRows(acc, bits *uint64, rows *int32, n, cw int)
//
// Sets acc[:cw] to the OR of the n rows' bitsets bits[r*cw : r*cw+cw]
// (cw <= 16) of the rows listed in rows.
TEXT ·orRows(SB), NOSPLIT, $0-40
	MOVQ acc+0(FP), DI
	MOVQ bits+8(FP), SI
	MOVQ rows+16(FP), R9
	MOVQ n+24(FP), DX
	MOVQ cw+32(FP), CX
	ROWMASKS
	SHLQ $3, CX
	VPXORQ Z0, Z0, Z0
	VPXORQ Z1, Z1, Z1
	XORQ R8, R8
	TESTQ DX, DX
	JLE ordone

orloop:
	MOVLQSX (R9)(R8*4), AX
	IMULQ CX, AX
	VPORQ.Z (SI)(AX*1), Z0, K1, Z0
	VMOVDQU64.Z 64(SI)(AX*1), K2, Z2
	VPORQ Z2, Z1, Z1
	INCQ R8
	CMPQ R8, DX
	JLT orloop

ordone:
	VMOVDQU64 Z0, K1, (DI)
	VMOVDQU64 Z1, K2, 64(DI)
	VZEROUPPER
	RET

// func copyRows(dst, bits *uint64, rows *int32, n, cw int)
//
// Copies the bitsets bits[r*cw : r*cw+cw] (cw <= 16) of the n rows listed
// in rows to dst, one after the other.
TEXT ·copyRows(SB), NOSPLIT, $0-40
	MOVQ dst+0(FP), DI
	MOVQ bits+8(FP), SI
	MOVQ rows+16(FP), R9
	MOVQ n+24(FP), DX
	MOVQ cw+32(FP), CX
	ROWMASKS
	SHLQ $3, CX
	XORQ R8, R8
	TESTQ DX, DX
	JLE crdone

crloop:
	MOVLQSX (R9)(R8*4), AX
	IMULQ CX, AX
	VMOVDQU64.Z (SI)(AX*1), K1, Z0
	VMOVDQU64.Z 64(SI)(AX*1), K2, Z1
	VMOVDQU64 Z0, K1, (DI)
	VMOVDQU64 Z1, K2, 64(DI)
	ADDQ CX, DI
	INCQ R8
	CMPQ R8, DX
	JLT crloop

crdone:
	VZEROUPPER
	RET

// func sparseEncode(dst *uint8, bits *uint64, col *uint8, n int, base uint8) int
//
// A sparse column of columnCodes from its n codes col: bit i of bits[w]
// set when col[64w+i] is not base (every word of ceil(n/64) written, bits
// past n clear), those codes appended to dst in order (VPCOMPRESSB, then
// a store masked to the codes kept); it returns how many there are.
TEXT ·sparseEncode(SB), NOSPLIT, $0-48
	MOVQ dst+0(FP), DI
	MOVQ bits+8(FP), R9
	MOVQ col+16(FP), SI
	MOVQ n+24(FP), CX
	MOVBLZX base+32(FP), AX
	VPBROADCASTB AX, Z2
	MOVQ DI, R10
	MOVQ $-1, R14

seloop2:
	TESTQ CX, CX
	JLE sedone2
	MOVQ $-1, AX
	CMPQ CX, $64
	JGE sefull
	BZHIQ CX, AX, AX

sefull:
	KMOVQ AX, K3
	VMOVDQU8.Z (SI), K3, Z0
	VPCMPB $4, Z2, Z0, K3, K1
	KMOVQ K1, R12
	MOVQ R12, (R9)
	VPCOMPRESSB Z0, K1, Z1
	POPCNTQ R12, R12
	BZHIQ R12, R14, R13
	KMOVQ R13, K2
	VMOVDQU8 Z1, K2, (DI)
	ADDQ R12, DI
	ADDQ $64, SI
	ADDQ $8, R9
	SUBQ $64, CX
	JMP seloop2

sedone2:
	SUBQ R10, DI
	MOVQ DI, ret+40(FP)
	VZEROUPPER
	RET
