//go:build amd64 && !purego

#include "textflag.h"

// func shapeAVX2(out *complex64, stride int, sr, si *float64, taps *float64, ntaps, groups int)
//
// Eight outputs of one polyphase branch per group: output k < 8 of group g
// is out[(8g+k)·stride] = complex64(Σ_q taps[q]·sr[8g+k−q], Σ_q taps[q]·si[8g+k−q]),
// each sum taken from zero in ascending q with a rounded product and a
// rounded sum per tap (no fused multiply-add), as the scalar loop does,
// so the samples are the same bit for bit. sr and si point at the first
// output's newest symbol; stride is in samples.
TEXT ·shapeAVX2(SB), NOSPLIT, $0-56
	MOVQ out+0(FP), DI
	MOVQ stride+8(FP), R8
	MOVQ sr+16(FP), SI
	MOVQ si+24(FP), DX
	MOVQ taps+32(FP), R9
	MOVQ ntaps+40(FP), R10
	MOVQ groups+48(FP), CX
	SHLQ $3, R8               // stride in bytes

gloop:
	VXORPD Y0, Y0, Y0         // re, outputs 0..3
	VXORPD Y1, Y1, Y1         // re, outputs 4..7
	VXORPD Y2, Y2, Y2         // im, outputs 0..3
	VXORPD Y3, Y3, Y3         // im, outputs 4..7
	MOVQ SI, R11
	MOVQ DX, R12
	MOVQ R9, R13
	MOVQ R10, BX

qloop:
	VBROADCASTSD (R13), Y4
	VMULPD (R11), Y4, Y5
	VMULPD 32(R11), Y4, Y6
	VMULPD (R12), Y4, Y7
	VMULPD 32(R12), Y4, Y8
	VADDPD Y5, Y0, Y0
	VADDPD Y6, Y1, Y1
	VADDPD Y7, Y2, Y2
	VADDPD Y8, Y3, Y3
	ADDQ $8, R13
	SUBQ $8, R11
	SUBQ $8, R12
	DECQ BX
	JNZ qloop

	VCVTPD2PSY Y0, X0
	VCVTPD2PSY Y1, X1
	VCVTPD2PSY Y2, X2
	VCVTPD2PSY Y3, X3
	VUNPCKLPS X2, X0, X4      // r0 i0 r1 i1
	VUNPCKHPS X2, X0, X5      // r2 i2 r3 i3
	VUNPCKLPS X3, X1, X6
	VUNPCKHPS X3, X1, X7
	MOVQ DI, AX
	VMOVQ X4, (AX)
	ADDQ R8, AX
	VPEXTRQ $1, X4, (AX)
	ADDQ R8, AX
	VMOVQ X5, (AX)
	ADDQ R8, AX
	VPEXTRQ $1, X5, (AX)
	ADDQ R8, AX
	VMOVQ X6, (AX)
	ADDQ R8, AX
	VPEXTRQ $1, X6, (AX)
	ADDQ R8, AX
	VMOVQ X7, (AX)
	ADDQ R8, AX
	VPEXTRQ $1, X7, (AX)
	ADDQ R8, AX
	MOVQ AX, DI
	ADDQ $64, SI
	ADDQ $64, DX
	DECQ CX
	JNZ gloop
	VZEROUPPER
	RET
