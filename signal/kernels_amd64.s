//go:build amd64 && !purego

#include "textflag.h"

// func instFreqAVX2(x *complex64, n int, c *[15][4]float64) (sum, sumsq float64)
//
// Four sample pairs per iteration, in lanes (i, i+2, i+1, i+3):
//   z  = x[i+1]·conj(x[i])                 (zr, zi)
//   hi = max(|zr|, |zi|), lo = min(...)
//   red = lo > tan(π/8)·hi: t = (lo−hi)/(hi+lo), else t = lo/hi
//   r = atanPoly(t) + red·π/4; |zi| > |zr|: r = π/2 − r; zr < 0: r = π − r
//   r takes the sign of zi
// Constant rows (32 bytes each): 0 abs mask, 1 sign mask, 2 tan(π/8),
// 3 tiny, 4..11 polynomial c0..c7, 12 π/4, 13 π/2, 14 π.
TEXT ·instFreqAVX2(SB), NOSPLIT, $0-40
	MOVQ x+0(FP), SI
	MOVQ n+8(FP), CX
	MOVQ c+16(FP), R8
	VXORPD Y15, Y15, Y15
	VXORPD Y14, Y14, Y14
	VMOVUPD 0(R8), Y13
	VMOVUPD 64(R8), Y12

loop:
	VCVTPS2PD 0(SI), Y0
	VCVTPS2PD 16(SI), Y1
	VCVTPS2PD 8(SI), Y2
	VCVTPS2PD 24(SI), Y3
	VUNPCKLPD Y1, Y0, Y4      // r0
	VUNPCKHPD Y1, Y0, Y5      // i0
	VUNPCKLPD Y3, Y2, Y6      // r1
	VUNPCKHPD Y3, Y2, Y7      // i1
	VMULPD Y4, Y6, Y8
	VFMADD231PD Y5, Y7, Y8    // zr = r1·r0 + i1·i0
	VMULPD Y4, Y7, Y9
	VFNMADD231PD Y5, Y6, Y9   // zi = i1·r0 − r1·i0

	VANDPD Y13, Y8, Y0        // |zr|
	VANDPD Y13, Y9, Y1        // |zi|
	VMAXPD Y1, Y0, Y2         // hi
	VMINPD Y1, Y0, Y3         // lo
	VCMPPD $0x1E, Y0, Y1, Y4  // swap: |zi| > |zr|
	VMULPD Y12, Y2, Y5
	VCMPPD $0x1E, Y5, Y3, Y5  // red: lo > tan(π/8)·hi
	VSUBPD Y2, Y3, Y6
	VBLENDVPD Y5, Y6, Y3, Y6  // num = red ? lo−hi : lo
	VADDPD Y3, Y2, Y7
	VBLENDVPD Y5, Y7, Y2, Y7  // den = red ? hi+lo : hi
	VMAXPD 96(R8), Y7, Y7
	VDIVPD Y7, Y6, Y6         // t

	VMULPD Y6, Y6, Y7         // z = t²
	VMULPD Y7, Y7, Y10        // z²
	VMULPD Y10, Y10, Y11      // z⁴
	VMOVUPD 160(R8), Y0
	VFMADD213PD 128(R8), Y7, Y0   // a = c0 + c1·z
	VMOVUPD 224(R8), Y1
	VFMADD213PD 192(R8), Y7, Y1   // b = c2 + c3·z
	VMOVUPD 288(R8), Y2
	VFMADD213PD 256(R8), Y7, Y2   // c = c4 + c5·z
	VMOVUPD 352(R8), Y3
	VFMADD213PD 320(R8), Y7, Y3   // d = c6 + c7·z
	VFMADD231PD Y10, Y1, Y0       // a + b·z²
	VFMADD231PD Y10, Y3, Y2       // c + d·z²
	VFMADD231PD Y11, Y2, Y0       // P
	VMULPD Y0, Y6, Y0             // atan(t) = t·P

	VANDPD 384(R8), Y5, Y1
	VADDPD Y1, Y0, Y0             // + red·π/4
	VMOVUPD 416(R8), Y1
	VSUBPD Y0, Y1, Y1
	VBLENDVPD Y4, Y1, Y0, Y0      // swap ? π/2 − r : r
	VXORPD Y2, Y2, Y2
	VCMPPD $0x11, Y2, Y8, Y3      // zr < 0
	VMOVUPD 448(R8), Y1
	VSUBPD Y0, Y1, Y1
	VBLENDVPD Y3, Y1, Y0, Y0      // zr < 0 ? π − r : r
	VANDPD 32(R8), Y9, Y1
	VORPD Y1, Y0, Y0              // sign of zi

	VADDPD Y0, Y15, Y15
	VFMADD231PD Y0, Y0, Y14
	ADDQ $32, SI
	SUBQ $4, CX
	JNZ loop

	VEXTRACTF128 $1, Y15, X0
	VADDPD X0, X15, X0
	VHADDPD X0, X0, X0
	MOVSD X0, sum+24(FP)
	VEXTRACTF128 $1, Y14, X1
	VADDPD X1, X14, X1
	VHADDPD X1, X1, X1
	MOVSD X1, sumsq+32(FP)
	VZEROUPPER
	RET

// func specDBAVX2(dst *float32, stride int, z *complex128, n int, scale float64, c *[16][4]float64)
//
// For k < n: the four complex values z[4k..4k+3] give four float32
// dst[k·stride .. +3] = dbPerNeper·ln(|z|²·scale + 1e-20), with ln as in
// fastLn (NaN and +Inf pass through). Constant rows: 0 1e-20, 1 exponent
// bias shift, 2 mantissa mask, 3 bits of √½, 4 2^52, 5 2^52+1023, 6 ln 2,
// 7 one, 8..13 series 2, 2/3, 2/5, 2/7, 2/9, 2/11, 14 dbPerNeper, 15 +Inf.
TEXT ·specDBAVX2(SB), NOSPLIT, $0-48
	MOVQ dst+0(FP), DI
	MOVQ stride+8(FP), R9
	SHLQ $2, R9
	MOVQ z+16(FP), SI
	MOVQ n+24(FP), CX
	VBROADCASTSD scale+32(FP), Y15
	MOVQ c+40(FP), R8

dbloop:
	VMOVUPD 0(SI), Y0
	VMOVUPD 32(SI), Y1
	VMULPD Y0, Y0, Y0
	VMULPD Y1, Y1, Y1
	VHADDPD Y1, Y0, Y0        // p0, p2, p1, p3
	VPERMPD $0xD8, Y0, Y0     // p0, p1, p2, p3
	VMULPD Y15, Y0, Y0
	VADDPD 0(R8), Y0, Y0      // x = p·scale + 1e-20

	VPADDQ 32(R8), Y0, Y2
	VPSRLQ $52, Y2, Y3
	VPOR 128(R8), Y3, Y3
	VSUBPD 160(R8), Y3, Y3    // e
	VPAND 64(R8), Y2, Y2
	VPADDQ 96(R8), Y2, Y2     // m in [√½, √2)
	VSUBPD 224(R8), Y2, Y4
	VADDPD 224(R8), Y2, Y5
	VDIVPD Y5, Y4, Y4         // s = (m−1)/(m+1)
	VMULPD Y4, Y4, Y5         // z
	VMULPD Y5, Y5, Y6         // z²
	VMULPD Y6, Y6, Y7         // z⁴
	VMOVUPD 288(R8), Y8
	VFMADD213PD 256(R8), Y5, Y8   // 2 + 2/3·z
	VMOVUPD 352(R8), Y9
	VFMADD213PD 320(R8), Y5, Y9   // 2/5 + 2/7·z
	VMOVUPD 416(R8), Y10
	VFMADD213PD 384(R8), Y5, Y10  // 2/9 + 2/11·z
	VFMADD231PD Y6, Y9, Y8
	VFMADD231PD Y7, Y10, Y8
	VMULPD Y8, Y4, Y8             // s·p
	VFMADD231PD 192(R8), Y3, Y8   // + e·ln 2
	VMULPD 448(R8), Y8, Y8        // dB
	VCMPPD $5, 480(R8), Y0, Y9    // !(x < +Inf): NaN or +Inf
	VBLENDVPD Y9, Y0, Y8, Y8
	VCVTPD2PSY Y8, X8
	VMOVUPS X8, (DI)

	ADDQ $64, SI
	ADDQ R9, DI
	DECQ CX
	JNZ dbloop
	VZEROUPPER
	RET
