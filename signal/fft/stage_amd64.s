//go:build amd64 && !purego

#include "textflag.h"

// func radix4AVX2(y, x *complex128, m, s int, tw *complex128)
//
// Two complex128 values per YMM register (re, im, re, im). Per run position:
//   apc = a+c, amc = a−c, bpd = b+d, bmd = b−d
//   y0 = apc+bpd
//   y1 = w1·(amc − i·bmd), y2 = w2·(apc−bpd), y3 = w3·(amc + i·bmd)
// A complex product v·w is v·wr ∓ swap(v)·wi (VFMADDSUB: even lanes
// subtract, odd lanes add).
TEXT ·radix4AVX2(SB), NOSPLIT, $0-40
	MOVQ y+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ m+16(FP), CX
	MOVQ s+24(FP), DX
	MOVQ tw+32(FP), R8
	MOVQ DX, R9
	SHLQ $4, R9           // R9 = run length in bytes
	MOVQ CX, R10
	IMULQ R9, R10         // R10 = distance between butterfly inputs
	VXORPD Y15, Y15, Y15  // zero

ploop:
	VBROADCASTSD 0(R8), Y9    // w1r
	VBROADCASTSD 8(R8), Y10   // w1i
	VBROADCASTSD 16(R8), Y11  // w2r
	VBROADCASTSD 24(R8), Y12  // w2i
	VBROADCASTSD 32(R8), Y13  // w3r
	VBROADCASTSD 40(R8), Y14  // w3i
	LEAQ (SI)(R10*1), R11
	LEAQ (R11)(R10*1), R12
	LEAQ (R12)(R10*1), R13
	LEAQ (DI)(R9*1), R14
	LEAQ (R14)(R9*1), DX
	LEAQ (DX)(R9*1), BX
	XORQ AX, AX

qloop:
	VMOVUPD (SI)(AX*1), Y0
	VMOVUPD (R11)(AX*1), Y1
	VMOVUPD (R12)(AX*1), Y2
	VMOVUPD (R13)(AX*1), Y3
	VADDPD Y2, Y0, Y4         // apc
	VSUBPD Y2, Y0, Y5         // amc
	VADDPD Y3, Y1, Y6         // bpd
	VSUBPD Y3, Y1, Y7         // bmd
	VADDPD Y6, Y4, Y8
	VMOVUPD Y8, (DI)(AX*1)    // y0
	VSUBPD Y6, Y4, Y8         // t2 = apc − bpd
	VPERMILPD $5, Y7, Y7      // swap(bmd)
	VADDSUBPD Y7, Y5, Y0      // t3 = amc + i·bmd
	VSUBPD Y7, Y15, Y7        // −swap(bmd)
	VADDSUBPD Y7, Y5, Y5      // t1 = amc − i·bmd

	VPERMILPD $5, Y5, Y6
	VMULPD Y10, Y6, Y6
	VFMADDSUB231PD Y9, Y5, Y6
	VMOVUPD Y6, (R14)(AX*1)   // y1 = w1·t1

	VPERMILPD $5, Y8, Y6
	VMULPD Y12, Y6, Y6
	VFMADDSUB231PD Y11, Y8, Y6
	VMOVUPD Y6, (DX)(AX*1)    // y2 = w2·t2

	VPERMILPD $5, Y0, Y6
	VMULPD Y14, Y6, Y6
	VFMADDSUB231PD Y13, Y0, Y6
	VMOVUPD Y6, (BX)(AX*1)    // y3 = w3·t3

	ADDQ $32, AX
	CMPQ AX, R9
	JLT qloop

	ADDQ R9, SI
	LEAQ (DI)(R9*4), DI
	ADDQ $48, R8
	DECQ CX
	JNZ ploop
	VZEROUPPER
	RET

// func radix2AVX2(y, x *complex128, s int)
TEXT ·radix2AVX2(SB), NOSPLIT, $0-24
	MOVQ y+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ s+16(FP), DX
	SHLQ $4, DX
	LEAQ (SI)(DX*1), R11
	LEAQ (DI)(DX*1), R14
	XORQ AX, AX

loop2:
	VMOVUPD (SI)(AX*1), Y0
	VMOVUPD (R11)(AX*1), Y1
	VADDPD Y1, Y0, Y2
	VSUBPD Y1, Y0, Y3
	VMOVUPD Y2, (DI)(AX*1)
	VMOVUPD Y3, (R14)(AX*1)
	ADDQ $32, AX
	CMPQ AX, DX
	JLT loop2
	VZEROUPPER
	RET

// func powerUnpackAVX2(dst *float64, z, tw *complex128, h, batch int, c *[2][4]float64)
//
// For k = 1..h/2 and each group of four sequences b: a = z[k·batch+b],
// c = z[(h−k)·batch+b], w = tw[k];
//   er = 0.5(ar+cr), ei = 0.5(ai−ci), or = 0.5(ai+ci), oi = −0.5(ar−cr)
//   pr = wr·or − wi·oi, qi = wr·oi + wi·or
//   dst[(h−k)·batch+b] = (er−pr)² + (qi−ei)², then dst[k·batch+b] = (er+pr)² + (ei+qi)².
// The four sequences' parts are split by VUNPCKL/HPD into lanes (0, 2, 1, 3)
// and put back in order by VPERMPD before the stores.
TEXT ·powerUnpackAVX2(SB), NOSPLIT, $0-48
	MOVQ dst+0(FP), DI
	MOVQ z+8(FP), SI
	MOVQ tw+16(FP), R8
	MOVQ h+24(FP), CX
	MOVQ batch+32(FP), DX
	MOVQ c+40(FP), R9
	VMOVUPD 0(R9), Y14        // 0.5
	VMOVUPD 32(R9), Y15       // −0.5
	MOVQ DX, R13
	SHLQ $3, R13              // R13 = batch·8: a dst row in bytes
	MOVQ CX, R12
	IMULQ R13, R12            // h·batch·8
	LEAQ (DI)(R13*1), R10     // dst row k = 1
	LEAQ (DI)(R12*1), R11
	SUBQ R13, R11             // dst row h−1
	LEAQ (SI)(R13*2), BX      // z row k = 1
	LEAQ (SI)(R12*2), DX
	SUBQ R13, DX
	SUBQ R13, DX              // z row h−1
	ADDQ $16, R8              // tw[1]
	SHRQ $1, CX               // k runs 1..h/2

kloop:
	VBROADCASTSD 0(R8), Y12   // wr
	VBROADCASTSD 8(R8), Y13   // wi
	XORQ AX, AX

gloop:
	VMOVUPD (BX)(AX*2), Y0
	VMOVUPD 32(BX)(AX*2), Y1
	VMOVUPD (DX)(AX*2), Y2
	VMOVUPD 32(DX)(AX*2), Y3
	VUNPCKLPD Y1, Y0, Y4      // ar
	VUNPCKHPD Y1, Y0, Y5      // ai
	VUNPCKLPD Y3, Y2, Y6      // cr
	VUNPCKHPD Y3, Y2, Y7      // ci
	VADDPD Y6, Y4, Y0
	VMULPD Y14, Y0, Y0        // er
	VSUBPD Y7, Y5, Y1
	VMULPD Y14, Y1, Y1        // ei
	VADDPD Y7, Y5, Y2
	VMULPD Y14, Y2, Y2        // or
	VSUBPD Y6, Y4, Y3
	VMULPD Y15, Y3, Y3        // oi
	VMULPD Y12, Y2, Y4
	VMULPD Y13, Y3, Y5
	VSUBPD Y5, Y4, Y4         // pr = wr·or − wi·oi
	VMULPD Y12, Y3, Y5
	VMULPD Y13, Y2, Y6
	VADDPD Y6, Y5, Y5         // qi = wr·oi + wi·or
	VSUBPD Y4, Y0, Y6         // yr = er − pr
	VSUBPD Y1, Y5, Y7         // yi = qi − ei
	VADDPD Y4, Y0, Y8         // xr = er + pr
	VADDPD Y5, Y1, Y9         // xi = ei + qi
	VMULPD Y6, Y6, Y6
	VMULPD Y7, Y7, Y7
	VADDPD Y7, Y6, Y6         // yr² + yi²
	VMULPD Y8, Y8, Y8
	VMULPD Y9, Y9, Y9
	VADDPD Y9, Y8, Y8         // xr² + xi²
	VPERMPD $0xD8, Y6, Y6
	VPERMPD $0xD8, Y8, Y8
	VMOVUPD Y6, (R11)(AX*1)
	VMOVUPD Y8, (R10)(AX*1)
	ADDQ $32, AX
	CMPQ AX, R13
	JLT gloop

	ADDQ R13, R10
	SUBQ R13, R11
	LEAQ (BX)(R13*2), BX
	SUBQ R13, DX
	SUBQ R13, DX
	ADDQ $16, R8
	DECQ CX
	JNZ kloop
	VZEROUPPER
	RET

// func halfFirstAVX2(y *complex128, x *complex64, m int, tw *complex128)
//
// For p < m: a = x[p], b = x[p+m] (to complex128), jb = i·b;
//   y[4p] = a+b, y[4p+1] = w1·(a−jb), y[4p+2] = w2·(a−b), y[4p+3] = w3·(a+jb)
// with w_k = tw[3p+k−1] and v·w = (vr·wr − vi·wi, vi·wr + vr·wi), each
// product rounded (VADDSUBPD of the two product vectors).
TEXT ·halfFirstAVX2(SB), NOSPLIT, $0-32
	MOVQ y+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ m+16(FP), CX
	MOVQ tw+24(FP), R8
	LEAQ (SI)(CX*8), R9       // &x[m]
	VXORPD X15, X15, X15

hloop:
	VCVTPS2PD (SI), X0        // a
	VCVTPS2PD (R9), X1        // b
	VADDPD X1, X0, X2
	VMOVUPD X2, (DI)          // a+b
	VPERMILPD $1, X1, X3      // (bi, br)
	VADDSUBPD X3, X0, X4      // a+jb = (ar−bi, ai+br)
	VSUBPD X3, X15, X3        // (−bi, −br)
	VADDSUBPD X3, X0, X5      // a−jb = (ar+bi, ai−br)
	VSUBPD X1, X0, X6         // a−b

	VMOVDDUP 0(R8), X7        // w1r
	VMOVDDUP 8(R8), X8        // w1i
	VPERMILPD $1, X5, X9
	VMULPD X7, X5, X10
	VMULPD X8, X9, X9
	VADDSUBPD X9, X10, X10
	VMOVUPD X10, 16(DI)

	VMOVDDUP 16(R8), X7       // w2
	VMOVDDUP 24(R8), X8
	VPERMILPD $1, X6, X9
	VMULPD X7, X6, X10
	VMULPD X8, X9, X9
	VADDSUBPD X9, X10, X10
	VMOVUPD X10, 32(DI)

	VMOVDDUP 32(R8), X7       // w3
	VMOVDDUP 40(R8), X8
	VPERMILPD $1, X4, X9
	VMULPD X7, X4, X10
	VMULPD X8, X9, X9
	VADDSUBPD X9, X10, X10
	VMOVUPD X10, 48(DI)

	ADDQ $8, SI
	ADDQ $8, R9
	ADDQ $64, DI
	ADDQ $48, R8
	DECQ CX
	JNZ hloop
	RET

// func radix4LastAVX2(y, x *complex128, s int)
//
// The last radix-4 pass (l == 4, no twiddles) over runs of s elements
// (s even): y0 = apc+bpd, y1 = amc − i·bmd, y2 = apc−bpd, y3 = amc + i·bmd.
TEXT ·radix4LastAVX2(SB), NOSPLIT, $0-24
	MOVQ y+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ s+16(FP), R9
	SHLQ $4, R9               // run length in bytes
	LEAQ (SI)(R9*1), R11
	LEAQ (R11)(R9*1), R12
	LEAQ (R12)(R9*1), R13
	LEAQ (DI)(R9*1), R14
	LEAQ (R14)(R9*1), DX
	LEAQ (DX)(R9*1), BX
	VXORPD Y15, Y15, Y15
	XORQ AX, AX

lloop:
	VMOVUPD (SI)(AX*1), Y0
	VMOVUPD (R11)(AX*1), Y1
	VMOVUPD (R12)(AX*1), Y2
	VMOVUPD (R13)(AX*1), Y3
	VADDPD Y2, Y0, Y4         // apc
	VSUBPD Y2, Y0, Y5         // amc
	VADDPD Y3, Y1, Y6         // bpd
	VSUBPD Y3, Y1, Y7         // bmd
	VADDPD Y6, Y4, Y8
	VMOVUPD Y8, (DI)(AX*1)
	VSUBPD Y6, Y4, Y8
	VMOVUPD Y8, (DX)(AX*1)
	VPERMILPD $5, Y7, Y7      // swap(bmd)
	VADDSUBPD Y7, Y5, Y0      // amc + i·bmd
	VMOVUPD Y0, (BX)(AX*1)
	VSUBPD Y7, Y15, Y7
	VADDSUBPD Y7, Y5, Y5      // amc − i·bmd
	VMOVUPD Y5, (R14)(AX*1)
	ADDQ $32, AX
	CMPQ AX, R9
	JLT lloop
	VZEROUPPER
	RET
