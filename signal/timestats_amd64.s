//go:build amd64 && !purego

#include "textflag.h"

// func timeSumsAVX2(x *complex64, env *float64, n int, acc *[12][4]float64, c *[2][4]float64)
//
// For n samples (n a positive multiple of 4), four per iteration in lanes
// (i, i+2, i+1, i+3), with q = re·re + im·im and a = √q (rounded as the
// scalar code rounds them):
//   env[i] = a
//   acc 0 += q, 1 += a, 2 += re/a·[a>0], 3 += im/a·[a>0] (as re·(1/a), im·(1/a))
//   s2 = x²: 4 += s2r, 5 += s2i, 6 += s2r² − s2i², 7 += 2·s2r·s2i,
//   8 += s2r·q, 9 += s2i·q, 10 += q²
// The accumulators start from acc's values; row 10 lives in acc (too few
// registers), the others in Y0..Y9 until the end. Constants: row 0 ones,
// row 1 zeros.
TEXT ·timeSumsAVX2(SB), NOSPLIT, $0-40
	MOVQ x+0(FP), SI
	MOVQ env+8(FP), DI
	MOVQ n+16(FP), CX
	MOVQ acc+24(FP), R9
	MOVQ c+32(FP), R8
	VMOVUPD 0(R9), Y0
	VMOVUPD 32(R9), Y1
	VMOVUPD 64(R9), Y2
	VMOVUPD 96(R9), Y3
	VMOVUPD 128(R9), Y4
	VMOVUPD 160(R9), Y5
	VMOVUPD 192(R9), Y6
	VMOVUPD 224(R9), Y7
	VMOVUPD 256(R9), Y8
	VMOVUPD 288(R9), Y9
	SHRQ $2, CX

tloop:
	VCVTPS2PD 0(SI), Y12       // r0 i0 r1 i1
	VCVTPS2PD 16(SI), Y13      // r2 i2 r3 i3
	VUNPCKLPD Y13, Y12, Y10    // re (lanes 0 2 1 3)
	VUNPCKHPD Y13, Y12, Y11    // im
	VMULPD Y10, Y10, Y12
	VMULPD Y11, Y11, Y13
	VADDPD Y13, Y12, Y12       // q
	VMOVUPD 320(R9), Y13
	VFMADD231PD Y12, Y12, Y13
	VMOVUPD Y13, 320(R9)       // q²
	VADDPD Y12, Y0, Y0
	VSQRTPD Y12, Y13           // a
	VADDPD Y13, Y1, Y1
	VPERMPD $0xD8, Y13, Y14
	VMOVUPD Y14, (DI)
	VCMPPD $0x1E, 32(R8), Y13, Y14 // a > 0
	VMOVUPD 0(R8), Y15
	VDIVPD Y13, Y15, Y15       // 1/a
	VMULPD Y15, Y10, Y13
	VANDPD Y14, Y13, Y13
	VADDPD Y13, Y2, Y2
	VMULPD Y15, Y11, Y13
	VANDPD Y14, Y13, Y13
	VADDPD Y13, Y3, Y3
	VMULPD Y10, Y10, Y13
	VFNMADD231PD Y11, Y11, Y13 // s2r = re² − im²
	VMULPD Y11, Y10, Y14
	VADDPD Y14, Y14, Y14       // s2i = 2·re·im
	VADDPD Y13, Y4, Y4
	VADDPD Y14, Y5, Y5
	VFMADD231PD Y12, Y13, Y8
	VFMADD231PD Y12, Y14, Y9
	VFMADD231PD Y13, Y13, Y6
	VFNMADD231PD Y14, Y14, Y6
	VADDPD Y13, Y13, Y15
	VFMADD231PD Y14, Y15, Y7
	ADDQ $32, SI
	ADDQ $32, DI
	DECQ CX
	JNZ tloop

	VMOVUPD Y0, 0(R9)
	VMOVUPD Y1, 32(R9)
	VMOVUPD Y2, 64(R9)
	VMOVUPD Y3, 96(R9)
	VMOVUPD Y4, 128(R9)
	VMOVUPD Y5, 160(R9)
	VMOVUPD Y6, 192(R9)
	VMOVUPD Y7, 224(R9)
	VMOVUPD Y8, 256(R9)
	VMOVUPD Y9, 288(R9)
	VZEROUPPER
	RET
