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

// func logAVX2(x *float64, n int, c *[16][4]float64)
//
// x[i] = math.Log(x[i]) for i < n (n a positive multiple of 4, every x[i]
// positive, normal and finite), four per iteration, by the operations of
// the Go runtime's amd64 archLog in their order (FreeBSD's algorithm: no
// fused multiply-adds), so the results are math.Log's bit for bit.
// Constant rows: 0 mantissa mask, 1 0.5, 2 0x4330000000000000 (2^52 as
// bits), 3 1022 + 2^52, 4 √2/2, 5 1, 6 2, 7..13 L7, L6, L5, L4, L3, L2,
// L1, 14 Ln2Lo, 15 Ln2Hi.
TEXT ·logAVX2(SB), NOSPLIT, $0-24
	MOVQ x+0(FP), DI
	MOVQ n+8(FP), CX
	MOVQ c+16(FP), R8
	SHRQ $2, CX

lgloop:
	VMOVUPD (DI), Y0              // x
	VANDPD 0(R8), Y0, Y2
	VORPD 32(R8), Y2, Y2          // f1
	VPSRLQ $52, Y0, Y1            // exponent field (x > 0: no sign bit)
	VPOR 64(R8), Y1, Y1           // 2^52 + e as a double
	VSUBPD 96(R8), Y1, Y1         // k = e − 1022
	VMOVUPD 128(R8), Y0
	VCMPPD $5, Y2, Y0, Y0         // √2/2 not-less-than f1
	VANDPD 160(R8), Y0, Y3        // 0 or 1
	VSUBPD Y3, Y1, Y1             // k
	VADDPD 160(R8), Y3, Y3        // 1 or 2
	VMULPD Y3, Y2, Y2             // f1
	VSUBPD 160(R8), Y2, Y2        // f = f1 − 1
	VMOVUPD 192(R8), Y0
	VADDPD Y2, Y0, Y0             // 2 + f
	VDIVPD Y0, Y2, Y3             // s = f/(2+f)
	VMULPD Y3, Y3, Y4             // s2
	VMULPD Y4, Y4, Y5             // s4
	VMULPD 224(R8), Y5, Y6        // L7·s4
	VADDPD 288(R8), Y6, Y6        // + L5
	VMULPD Y5, Y6, Y6
	VADDPD 352(R8), Y6, Y6        // + L3
	VMULPD Y5, Y6, Y6
	VADDPD 416(R8), Y6, Y6        // + L1
	VMULPD Y6, Y4, Y4             // t1
	VMULPD 256(R8), Y5, Y6        // L6·s4
	VADDPD 320(R8), Y6, Y6        // + L4
	VMULPD Y5, Y6, Y6
	VADDPD 384(R8), Y6, Y6        // + L2
	VMULPD Y6, Y5, Y5             // t2
	VADDPD Y5, Y4, Y4             // R
	VMULPD 32(R8), Y2, Y0         // 0.5·f
	VMULPD Y2, Y0, Y0             // hfsq
	VADDPD Y0, Y4, Y4             // R + hfsq
	VMULPD Y4, Y3, Y3             // s·(hfsq+R)
	VMULPD 448(R8), Y1, Y4        // k·Ln2Lo
	VADDPD Y4, Y3, Y3
	VSUBPD Y3, Y0, Y0             // hfsq − (…)
	VSUBPD Y2, Y0, Y0             // − f
	VMULPD 480(R8), Y1, Y1        // k·Ln2Hi
	VSUBPD Y0, Y1, Y1
	VMOVUPD Y1, (DI)
	ADDQ $32, DI
	DECQ CX
	JNZ lgloop
	VZEROUPPER
	RET
