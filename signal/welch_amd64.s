//go:build amd64 && !purego

#include "textflag.h"

// func accumulate3AVX2(u0, p1, q1, p2, q2 *float64, a, b, c *complex128, n int)
//
// For n complex values (n even), two per iteration, with c̃ = c with real
// and imaginary parts swapped:
//   u0 += c⊙c, p1 += b⊙c, q1 += b⊙c̃, p2 += a⊙c, q2 += a⊙c̃
// (⊙ elementwise over the interleaved real/imaginary parts). Then
// |c|² = u0[2k]+u0[2k+1], conj(b)·c = (p1[2k]+p1[2k+1], q1[2k]−q1[2k+1]).
TEXT ·accumulate3AVX2(SB), NOSPLIT, $0-72
	MOVQ u0+0(FP), R8
	MOVQ p1+8(FP), R9
	MOVQ q1+16(FP), R10
	MOVQ p2+24(FP), R11
	MOVQ q2+32(FP), R12
	MOVQ a+40(FP), SI
	MOVQ b+48(FP), DI
	MOVQ c+56(FP), DX
	MOVQ n+64(FP), CX
	SHRQ $1, CX
	JZ   done

loop:
	VMOVUPD (DX), Y0
	VMOVUPD (DI), Y1
	VMOVUPD (SI), Y2
	VPERMILPD $5, Y0, Y3
	VMOVUPD (R8), Y4
	VFMADD231PD Y0, Y0, Y4
	VMOVUPD Y4, (R8)
	VMOVUPD (R9), Y5
	VFMADD231PD Y1, Y0, Y5
	VMOVUPD Y5, (R9)
	VMOVUPD (R10), Y6
	VFMADD231PD Y1, Y3, Y6
	VMOVUPD Y6, (R10)
	VMOVUPD (R11), Y7
	VFMADD231PD Y2, Y0, Y7
	VMOVUPD Y7, (R11)
	VMOVUPD (R12), Y8
	VFMADD231PD Y2, Y3, Y8
	VMOVUPD Y8, (R12)
	ADDQ $32, R8
	ADDQ $32, R9
	ADDQ $32, R10
	ADDQ $32, R11
	ADDQ $32, R12
	ADDQ $32, SI
	ADDQ $32, DI
	ADDQ $32, DX
	DECQ CX
	JNZ  loop

done:
	VZEROUPPER
	RET

// func hannAVX2(acc *float64, a, b *complex128, n int, c *[3][4]float64)
//
// For bins k = 0..n−1 relative to a, b and acc (n even, the first bin's
// absolute index even, a[−1], b[−1], a[n], b[n] readable), with
// X(k) = a[k] + s_k·b[k], s_k = +1 for even k and −1 for odd:
//   Xw(k) = 0.5·X(k) − 0.25·(X(k−1) + X(k+1)),  acc[2k..2k+1] += Xw(k)⊙Xw(k).
// Since s_{k±1} = −s_k, X(k−1) + X(k+1) = (a[k−1] + a[k+1]) − s_k·(b[k−1] + b[k+1]).
// Constant rows: 0 the signs (1, 1, −1, −1), 1 all 0.5, 2 all 0.25.
TEXT ·hannAVX2(SB), NOSPLIT, $0-40
	MOVQ acc+0(FP), R8
	MOVQ a+8(FP), SI
	MOVQ b+16(FP), DI
	MOVQ n+24(FP), CX
	MOVQ c+32(FP), DX
	VMOVUPD 0(DX), Y13
	VMOVUPD 32(DX), Y14
	VMOVUPD 64(DX), Y15
	SHRQ $1, CX
	JZ   hdone

hloop:
	VMOVUPD (SI), Y0          // a[k], a[k+1]
	VMOVUPD (DI), Y1          // b[k], b[k+1]
	VFMADD231PD Y1, Y13, Y0   // X = a + s·b
	VMOVUPD -16(SI), Y2       // a[k−1], a[k]
	VADDPD 16(SI), Y2, Y2     // + a[k+1], a[k+2]
	VMOVUPD -16(DI), Y3
	VADDPD 16(DI), Y3, Y3
	VFNMADD231PD Y3, Y13, Y2  // neighbours: Y2 −= s·Y3
	VMULPD Y14, Y0, Y0        // 0.5·X
	VFNMADD231PD Y2, Y15, Y0  // − 0.25·neighbours
	VMOVUPD (R8), Y4
	VFMADD231PD Y0, Y0, Y4
	VMOVUPD Y4, (R8)
	ADDQ $32, R8
	ADDQ $32, SI
	ADDQ $32, DI
	DECQ CX
	JNZ  hloop

hdone:
	VZEROUPPER
	RET

// func accumulate6AVX2(u0, p1, q1, p2, q2 *float64, a, b, c, d, e, f *complex128, n int)
//
// accumulate3AVX2 for four blocks in one pass: the spectra c, d, e, f of
// blocks i..i+3 with a and b those of blocks i−2 and i−1. Each accumulator
// takes the four blocks' terms in block order, one fused multiply-add
// each, as four accumulate3AVX2 calls would (same values bit for bit),
// but is loaded and stored once.
TEXT ·accumulate6AVX2(SB), NOSPLIT, $0-96
	MOVQ u0+0(FP), R8
	MOVQ p1+8(FP), R9
	MOVQ q1+16(FP), R10
	MOVQ p2+24(FP), R11
	MOVQ q2+32(FP), R12
	MOVQ a+40(FP), SI
	MOVQ b+48(FP), DI
	MOVQ c+56(FP), DX
	MOVQ d+64(FP), R13
	MOVQ e+72(FP), R14
	MOVQ f+80(FP), BX
	MOVQ n+88(FP), CX
	SHRQ $1, CX
	JZ   done6
	XORQ AX, AX

loop6:
	VMOVUPD (SI)(AX*1), Y0    // a
	VMOVUPD (DI)(AX*1), Y1    // b
	VMOVUPD (DX)(AX*1), Y2    // c
	VMOVUPD (R13)(AX*1), Y3   // d
	VMOVUPD (R14)(AX*1), Y4   // e
	VMOVUPD (BX)(AX*1), Y5    // f
	VPERMILPD $5, Y2, Y6      // c̃
	VPERMILPD $5, Y3, Y7      // d̃
	VPERMILPD $5, Y4, Y8      // ẽ
	VPERMILPD $5, Y5, Y9      // f̃

	VMOVUPD (R8)(AX*1), Y10
	VFMADD231PD Y2, Y2, Y10
	VFMADD231PD Y3, Y3, Y10
	VFMADD231PD Y4, Y4, Y10
	VFMADD231PD Y5, Y5, Y10
	VMOVUPD Y10, (R8)(AX*1)

	VMOVUPD (R9)(AX*1), Y11
	VFMADD231PD Y1, Y2, Y11
	VFMADD231PD Y2, Y3, Y11
	VFMADD231PD Y3, Y4, Y11
	VFMADD231PD Y4, Y5, Y11
	VMOVUPD Y11, (R9)(AX*1)

	VMOVUPD (R10)(AX*1), Y12
	VFMADD231PD Y1, Y6, Y12
	VFMADD231PD Y2, Y7, Y12
	VFMADD231PD Y3, Y8, Y12
	VFMADD231PD Y4, Y9, Y12
	VMOVUPD Y12, (R10)(AX*1)

	VMOVUPD (R11)(AX*1), Y13
	VFMADD231PD Y0, Y2, Y13
	VFMADD231PD Y1, Y3, Y13
	VFMADD231PD Y2, Y4, Y13
	VFMADD231PD Y3, Y5, Y13
	VMOVUPD Y13, (R11)(AX*1)

	VMOVUPD (R12)(AX*1), Y14
	VFMADD231PD Y0, Y6, Y14
	VFMADD231PD Y1, Y7, Y14
	VFMADD231PD Y2, Y8, Y14
	VFMADD231PD Y3, Y9, Y14
	VMOVUPD Y14, (R12)(AX*1)

	ADDQ $32, AX
	DECQ CX
	JNZ  loop6

done6:
	VZEROUPPER
	RET

// func hann4AVX2(acc *float64, p *[5]*complex128, n int, c *[3][4]float64)
//
// hannAVX2 for the four segments made of blocks (p0, p1), (p1, p2),
// (p2, p3), (p3, p4) in one pass: for each pair of bins the segments'
// terms are added to acc in segment order, each computed with hannAVX2's
// operations (so the sums are those of four hannAVX2 calls, bit for bit),
// and each block's neighbour sum is formed once.
TEXT ·hann4AVX2(SB), NOSPLIT, $0-32
	MOVQ acc+0(FP), R8
	MOVQ p+8(FP), R9
	MOVQ n+16(FP), CX
	MOVQ c+24(FP), DX
	MOVQ 0(R9), SI
	MOVQ 8(R9), DI
	MOVQ 16(R9), R10
	MOVQ 24(R9), R11
	MOVQ 32(R9), R12
	VMOVUPD 0(DX), Y13
	VMOVUPD 32(DX), Y14
	VMOVUPD 64(DX), Y15
	SHRQ $1, CX
	JZ   h4done
	XORQ AX, AX

h4loop:
	VMOVUPD (R8)(AX*1), Y12   // acc
	VMOVUPD (SI)(AX*1), Y0    // p0[k], p0[k+1]
	VMOVUPD -16(SI)(AX*1), Y1
	VADDPD 16(SI)(AX*1), Y1, Y1 // p0 neighbours
	VMOVUPD (DI)(AX*1), Y2    // p1
	VMOVUPD -16(DI)(AX*1), Y3
	VADDPD 16(DI)(AX*1), Y3, Y3
	// segment (p0, p1)
	VMOVAPD Y0, Y4
	VFMADD231PD Y2, Y13, Y4   // X = p0 + s·p1
	VMOVAPD Y1, Y5
	VFNMADD231PD Y3, Y13, Y5  // neighbours −= s·p1's
	VMULPD Y14, Y4, Y4
	VFNMADD231PD Y5, Y15, Y4
	VFMADD231PD Y4, Y4, Y12
	// segment (p1, p2)
	VMOVUPD (R10)(AX*1), Y0
	VMOVUPD -16(R10)(AX*1), Y1
	VADDPD 16(R10)(AX*1), Y1, Y1
	VMOVAPD Y2, Y4
	VFMADD231PD Y0, Y13, Y4
	VMOVAPD Y3, Y5
	VFNMADD231PD Y1, Y13, Y5
	VMULPD Y14, Y4, Y4
	VFNMADD231PD Y5, Y15, Y4
	VFMADD231PD Y4, Y4, Y12
	// segment (p2, p3)
	VMOVUPD (R11)(AX*1), Y2
	VMOVUPD -16(R11)(AX*1), Y3
	VADDPD 16(R11)(AX*1), Y3, Y3
	VMOVAPD Y0, Y4
	VFMADD231PD Y2, Y13, Y4
	VMOVAPD Y1, Y5
	VFNMADD231PD Y3, Y13, Y5
	VMULPD Y14, Y4, Y4
	VFNMADD231PD Y5, Y15, Y4
	VFMADD231PD Y4, Y4, Y12
	// segment (p3, p4)
	VMOVUPD (R12)(AX*1), Y0
	VMOVUPD -16(R12)(AX*1), Y1
	VADDPD 16(R12)(AX*1), Y1, Y1
	VMOVAPD Y2, Y4
	VFMADD231PD Y0, Y13, Y4
	VMOVAPD Y3, Y5
	VFNMADD231PD Y1, Y13, Y5
	VMULPD Y14, Y4, Y4
	VFNMADD231PD Y5, Y15, Y4
	VFMADD231PD Y4, Y4, Y12
	VMOVUPD Y12, (R8)(AX*1)
	ADDQ $32, AX
	DECQ CX
	JNZ  h4loop

h4done:
	VZEROUPPER
	RET
