//go:build amd64 && !purego && !noasm

#include "textflag.h"

// func transposeRowAVX2(dst *float32, dstStride int, src *float32, srcStride int, n int)
//
// The 8x8 tile transposes of transpose_amd64.go: for each of n blocks b,
// dst[i*dstStride + 8b + j] = src[(8b + j)*srcStride + i] for i, j < 8
// (strides in floats). Each register holds a half row of two source rows
// four apart (the lane crossing done by the loads), so that 4x4 transposes
// inside the 128-bit lanes give whole rows of dst.
TEXT ·transposeRowAVX2(SB), NOSPLIT, $0-40
	MOVQ dst+0(FP), DI
	MOVQ dstStride+8(FP), R8
	MOVQ src+16(FP), SI
	MOVQ srcStride+24(FP), DX
	MOVQ n+32(FP), CX
	SHLQ $2, R8
	SHLQ $2, DX
	LEAQ (DX)(DX*2), R10 // 3 source rows
	LEAQ (R8)(R8*2), R11 // 3 rows of dst
	LEAQ (DI)(R8*4), R13 // dst row 4
	MOVQ DX, R12
	SHLQ $3, R12         // 8 source rows: one block
	TESTQ CX, CX
	JEQ done

loop:
	LEAQ (SI)(DX*4), R9 // source row 4
	VMOVUPS (SI), X0
	VINSERTF128 $1, (R9), Y0, Y0
	VMOVUPS 16(SI), X4
	VINSERTF128 $1, 16(R9), Y4, Y4
	VMOVUPS (SI)(DX*1), X1
	VINSERTF128 $1, (R9)(DX*1), Y1, Y1
	VMOVUPS 16(SI)(DX*1), X5
	VINSERTF128 $1, 16(R9)(DX*1), Y5, Y5
	VMOVUPS (SI)(DX*2), X2
	VINSERTF128 $1, (R9)(DX*2), Y2, Y2
	VMOVUPS 16(SI)(DX*2), X6
	VINSERTF128 $1, 16(R9)(DX*2), Y6, Y6
	VMOVUPS (SI)(R10*1), X3
	VINSERTF128 $1, (R9)(R10*1), Y3, Y3
	VMOVUPS 16(SI)(R10*1), X7
	VINSERTF128 $1, 16(R9)(R10*1), Y7, Y7

	// dst rows 0-3: columns 0-3 of the 8 source rows.
	VUNPCKLPS Y1, Y0, Y8
	VUNPCKHPS Y1, Y0, Y9
	VUNPCKLPS Y3, Y2, Y10
	VUNPCKHPS Y3, Y2, Y11
	VUNPCKLPD Y10, Y8, Y12
	VUNPCKHPD Y10, Y8, Y13
	VUNPCKLPD Y11, Y9, Y14
	VUNPCKHPD Y11, Y9, Y15
	VMOVUPS Y12, (DI)
	VMOVUPS Y13, (DI)(R8*1)
	VMOVUPS Y14, (DI)(R8*2)
	VMOVUPS Y15, (DI)(R11*1)

	// dst rows 4-7: columns 4-7.
	VUNPCKLPS Y5, Y4, Y8
	VUNPCKHPS Y5, Y4, Y9
	VUNPCKLPS Y7, Y6, Y10
	VUNPCKHPS Y7, Y6, Y11
	VUNPCKLPD Y10, Y8, Y12
	VUNPCKHPD Y10, Y8, Y13
	VUNPCKLPD Y11, Y9, Y14
	VUNPCKHPD Y11, Y9, Y15
	VMOVUPS Y12, (R13)
	VMOVUPS Y13, (R13)(R8*1)
	VMOVUPS Y14, (R13)(R8*2)
	VMOVUPS Y15, (R13)(R11*1)

	ADDQ R12, SI
	ADDQ $32, DI
	ADDQ $32, R13
	DECQ CX
	JNE loop

done:
	VZEROUPPER
	RET
