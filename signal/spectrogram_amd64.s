//go:build amd64 && !purego

#include "textflag.h"

// func specPackAVX2(in *complex128, x *complex64, step, seg int, win *float64, c *[4]float64)
//
// Four spectrogram segments, segment b being x[b·step : b·step+seg]:
// mean_b = (Σ_k x_b[k]) / seg, each part summed in ascending k in its own
// lane (the scalar code's order), then
//   in[4k+b] = (x_b[k] − mean_b)·(win[k] + 0i)
// with the complex product spelled out as Go computes it:
// (dr·w − di·0, dr·0 + di·w). c holds seg as a float64 four times.
TEXT ·specPackAVX2(SB), NOSPLIT, $0-48
	MOVQ in+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ step+16(FP), DX
	MOVQ seg+24(FP), CX
	MOVQ win+32(FP), R8
	MOVQ c+40(FP), R9
	SHLQ $3, DX
	LEAQ (SI)(DX*1), R10      // segment 1
	LEAQ (R10)(DX*1), R11     // segment 2
	LEAQ (R11)(DX*1), R12     // segment 3
	VXORPD Y0, Y0, Y0         // Σ segments 0, 1 (re, im, re, im)
	VXORPD Y1, Y1, Y1         // Σ segments 2, 3
	VXORPD Y15, Y15, Y15      // zero
	XORQ AX, AX
	MOVQ CX, BX

sloop:
	VMOVQ (SI)(AX*1), X2
	VPINSRQ $1, (R10)(AX*1), X2, X2
	VMOVQ (R11)(AX*1), X3
	VPINSRQ $1, (R12)(AX*1), X3, X3
	VCVTPS2PD X2, Y2
	VCVTPS2PD X3, Y3
	VADDPD Y2, Y0, Y0
	VADDPD Y3, Y1, Y1
	ADDQ $8, AX
	DECQ BX
	JNZ sloop

	VMOVUPD (R9), Y4
	VDIVPD Y4, Y0, Y0         // means of segments 0, 1
	VDIVPD Y4, Y1, Y1         // means of segments 2, 3
	XORQ AX, AX

wloop:
	VMOVQ (SI)(AX*1), X2
	VPINSRQ $1, (R10)(AX*1), X2, X2
	VMOVQ (R11)(AX*1), X3
	VPINSRQ $1, (R12)(AX*1), X3, X3
	VCVTPS2PD X2, Y2
	VCVTPS2PD X3, Y3
	VSUBPD Y0, Y2, Y2         // d = x − mean
	VSUBPD Y1, Y3, Y3
	VBROADCASTSD (R8), Y4     // w
	VPERMILPD $5, Y2, Y5      // (di, dr)
	VPERMILPD $5, Y3, Y6
	VMULPD Y15, Y5, Y5        // (di·0, dr·0)
	VMULPD Y15, Y6, Y6
	VMULPD Y4, Y2, Y2         // (dr·w, di·w)
	VMULPD Y4, Y3, Y3
	VADDSUBPD Y5, Y2, Y2      // (dr·w − di·0, di·w + dr·0)
	VADDSUBPD Y6, Y3, Y3
	VMOVUPD Y2, (DI)
	VMOVUPD Y3, 32(DI)
	ADDQ $8, AX
	ADDQ $8, R8
	ADDQ $64, DI
	DECQ CX
	JNZ wloop
	VZEROUPPER
	RET
