//go:build amd64 && !purego

#include "textflag.h"

// func mfccPackAVX2(z *complex128, env *float64, hop int, win2 *float64, h int)
//
// Packs four frames of the envelope, frame b starting at env[b·hop],
// windowed and two samples per complex value, interleaved:
//   z[4i+b] = (s_b[2i]·w[2i], s_b[2i+1]·w[2i+1]) for i < h,
// with win2[4i..4i+3] = w[2i], w[2i+1], w[2i], w[2i+1].
TEXT ·mfccPackAVX2(SB), NOSPLIT, $0-40
	MOVQ z+0(FP), DI
	MOVQ env+8(FP), SI
	MOVQ hop+16(FP), DX
	MOVQ win2+24(FP), R8
	MOVQ h+32(FP), CX
	SHLQ $3, DX
	LEAQ (SI)(DX*1), R9       // frame 1
	LEAQ (R9)(DX*1), R10      // frame 2
	LEAQ (R10)(DX*1), R11     // frame 3
	XORQ AX, AX               // byte offset into the frames (16 per i)

ploop:
	VMOVUPD (R8), Y2
	VMOVUPD (SI)(AX*1), X0
	VINSERTF128 $1, (R9)(AX*1), Y0, Y0
	VMOVUPD (R10)(AX*1), X1
	VINSERTF128 $1, (R11)(AX*1), Y1, Y1
	VMULPD Y2, Y0, Y0
	VMULPD Y2, Y1, Y1
	VMOVUPD Y0, (DI)
	VMOVUPD Y1, 32(DI)
	ADDQ $16, AX
	ADDQ $32, R8
	ADDQ $64, DI
	DECQ CX
	JNZ ploop
	VZEROUPPER
	RET

// func melAVX2(e *float64, w *float64, band *[2]int, nbands int, pow *float64)
//
// For each band m < nbands with band[m] = (first bin, weight count n):
//   e[4m+b] = Σ_{i<n} w_m[i]·pow[4(first+i)+b], b < 4,
// summed from zero in ascending i with a rounded product and a rounded sum
// per term (the scalar code's order); the bands' weights follow each other
// in w.
TEXT ·melAVX2(SB), NOSPLIT, $0-40
	MOVQ e+0(FP), DI
	MOVQ w+8(FP), SI
	MOVQ band+16(FP), R8
	MOVQ nbands+24(FP), CX
	MOVQ pow+32(FP), R9
	TESTQ CX, CX
	JZ mdone

mband:
	MOVQ 0(R8), AX
	SHLQ $5, AX
	ADDQ R9, AX               // &pow[4·first]
	MOVQ 8(R8), DX            // n
	VXORPD Y0, Y0, Y0
	TESTQ DX, DX
	JZ mstore

mloop:
	VBROADCASTSD (SI), Y1
	VMULPD (AX), Y1, Y1
	VADDPD Y1, Y0, Y0
	ADDQ $8, SI
	ADDQ $32, AX
	DECQ DX
	JNZ mloop

mstore:
	VMOVUPD Y0, (DI)
	ADDQ $32, DI
	ADDQ $16, R8
	DECQ CX
	JNZ mband

mdone:
	VZEROUPPER
	RET
