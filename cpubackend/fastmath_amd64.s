//go:build amd64 && !purego && !noasm

#include "textflag.h"

// The AVX-512 loops of fastmath.go: the same float64 operations as
// logisticFloat32Go and tanhFloat32Go, in the same order, eight lanes at a
// time. n must be a positive multiple of 8; c points to fastmathConsts.

// LOADCONSTS broadcasts the shared constants into Z16-Z30.
#define LOADCONSTS \
	VBROADCASTSD 0(DX), Z16   \ // expClamp
	VBROADCASTSD 8(DX), Z17   \ // -expClamp
	VBROADCASTSD 16(DX), Z18  \ // log2e
	VBROADCASTSD 24(DX), Z19  \ // 1.5·2^52
	VBROADCASTSD 32(DX), Z20  \ // ln2
	VBROADCASTSD 40(DX), Z21  \ // 1
	VBROADCASTSD 48(DX), Z22  \ // 1/2
	VBROADCASTSD 56(DX), Z23  \ // 1/6
	VBROADCASTSD 64(DX), Z24  \ // 1/24
	VBROADCASTSD 72(DX), Z25  \ // 1/120
	VBROADCASTSD 80(DX), Z26  \ // 1/720
	VBROADCASTSD 88(DX), Z27  \ // 1/5040
	VBROADCASTSD 96(DX), Z28  \ // 1/40320
	VBROADCASTSD 104(DX), Z29 \ // 1/362880
	MOVQ $1023, AX            \
	VPBROADCASTQ AX, Z30

// EXPSCALED sets Z6 = e^Z0 for Z0 already clamped: t = x·log2e,
// kf = (t + round) − round, g = (t − kf)·ln2, p = the degree-9 series,
// Z6 = p·2^kf. Uses Z1-Z11.
#define EXPSCALED \
	VMULPD Z18, Z0, Z1  \ // t = x·log2e
	VADDPD Z19, Z1, Z2  \ // t + round
	VSUBPD Z19, Z2, Z2  \ // kf = (t + round) − round
	VSUBPD Z2, Z1, Z3   \ // t − kf
	VMULPD Z20, Z3, Z3  \ // g = (t − kf)·ln2
	VMULPD Z3, Z3, Z4   \ // g2
	VMULPD Z4, Z4, Z5   \ // g4
	VADDPD Z3, Z21, Z6  \ // 1 + g
	VMULPD Z23, Z3, Z7  \ // g·(1/6)
	VADDPD Z7, Z22, Z7  \ // 1/2 + g/6
	VMULPD Z7, Z4, Z7   \ // g2·(1/2 + g/6)
	VADDPD Z7, Z6, Z6   \ // A = (1 + g) + g2·(...)
	VMULPD Z25, Z3, Z8  \ // g·(1/120)
	VADDPD Z8, Z24, Z8  \ // 1/24 + g/120
	VMULPD Z27, Z3, Z9  \ // g·(1/5040)
	VADDPD Z9, Z26, Z9  \ // 1/720 + g/5040
	VMULPD Z9, Z4, Z9   \ // g2·(...)
	VADDPD Z9, Z8, Z8   \ // (1/24 + g/120) + g2·(...)
	VMULPD Z29, Z3, Z10 \ // g·(1/362880)
	VADDPD Z10, Z28, Z10 \ // 1/40320 + g/362880
	VMULPD Z10, Z5, Z10 \ // g4·(...)
	VADDPD Z10, Z8, Z8  \ // B
	VMULPD Z8, Z5, Z8   \ // g4·B
	VADDPD Z8, Z6, Z6   \ // p = A + g4·B
	VCVTTPD2QQ Z2, Z11  \ // int64(kf)
	VPADDQ Z30, Z11, Z11 \
	VPSLLQ $52, Z11, Z11 \ // 2^kf
	VMULPD Z11, Z6, Z6     // e = p·2^kf

// func logisticAVX512(dst, src *float32, n int, c *float64)
TEXT ·logisticAVX512(SB), NOSPLIT, $0-32
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	MOVQ c+24(FP), DX
	LOADCONSTS
	MOVQ $0x8000000000000000, AX
	VPBROADCASTQ AX, Z31 // −0: the sign bit

logisticLoop:
	VCVTPS2PD (SI), Z0
	VXORPD Z31, Z0, Z0 // x = −x
	VMINPD Z0, Z16, Z0 // x > clamp ? clamp : x (NaN stays)
	VMAXPD Z0, Z17, Z0 // x < −clamp ? −clamp : x
	EXPSCALED
	VADDPD Z21, Z6, Z6 // 1 + e
	VDIVPD Z6, Z21, Z6 // 1/(1 + e)
	VCVTPD2PS Z6, Y6
	VMOVUPS Y6, (DI)
	ADDQ $32, SI
	ADDQ $32, DI
	SUBQ $8, CX
	JNZ  logisticLoop
	VZEROUPPER
	RET

// func tanhAVX512(dst, src *float32, n int, c *float64)
TEXT ·tanhAVX512(SB), NOSPLIT, $0-32
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	MOVQ c+24(FP), DX
	LOADCONSTS
	VBROADCASTSD 112(DX), Z31 // −2
	VBROADCASTSD 120(DX), Z12 // 2
	VBROADCASTSD 128(DX), Z13 // 1/1024
	VBROADCASTSD 136(DX), Z14 // 1/3
	VBROADCASTSD 144(DX), Z15 // 2/15

tanhLoop:
	VCVTPS2PD (SI), Z0
	VPTERNLOGQ $0xff, Z1, Z1, Z1    // all ones
	VPSRLQ $1, Z1, Z1               // |·| mask
	VANDPD Z1, Z0, Z1               // |x|
	VCMPPD $0x11, Z13, Z1, K1       // |x| < 1/1024 (ordered: false for NaN)
	VMULPD Z0, Z31, Z0              // y = −2·x
	VMINPD Z0, Z16, Z0
	VMAXPD Z0, Z17, Z0
	EXPSCALED
	VADDPD Z21, Z6, Z6              // 1 + e
	VDIVPD Z6, Z12, Z6              // 2/(1 + e)
	VSUBPD Z21, Z6, Z6              // 2/(1 + e) − 1
	VCVTPS2PD (SI), Z9              // x again (EXPSCALED used Z9)
	VMULPD Z9, Z9, Z7               // x2
	VMULPD Z15, Z7, Z8              // x2·(2/15)
	VSUBPD Z8, Z14, Z8              // 1/3 − x2·(2/15)
	VMULPD Z8, Z7, Z8               // x2·(...)
	VSUBPD Z8, Z21, Z8              // 1 − x2·(...)
	VMULPD Z8, Z9, Z8               // x·(...)
	VMOVAPD Z8, K1, Z6              // the series where |x| < 1/1024
	VCVTPD2PS Z6, Y6
	VMOVUPS Y6, (DI)
	ADDQ $32, SI
	ADDQ $32, DI
	SUBQ $8, CX
	JNZ  tanhLoop
	VZEROUPPER
	RET

// func expAVX512(dst, src *float32, n int, c *float64)
TEXT ·expAVX512(SB), NOSPLIT, $0-32
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	MOVQ c+24(FP), DX
	LOADCONSTS

expLoop:
	VCVTPS2PD (SI), Z0
	VMINPD Z0, Z16, Z0
	VMAXPD Z0, Z17, Z0
	EXPSCALED
	VCVTPD2PS Z6, Y6
	VMOVUPS Y6, (DI)
	ADDQ $32, SI
	ADDQ $32, DI
	SUBQ $8, CX
	JNZ  expLoop
	VZEROUPPER
	RET

// The AVX2 loops: the same float64 operations, four lanes at a time. The
// constants are read from memory (fastmathConstsAVX2: each 32 bytes, four
// copies), but the clamps, which must be the first operand of VMINPD and
// VMAXPD so that a NaN passes, stay in Y14 and Y15. AVX2 has no float64
// to int64 conversion: int64(kf) + 1023 is taken from the bits of
// t + 1.5·2^52, whose low bits hold kf (the same integer; see fastmath.go).
// n must be a positive multiple of 4; c points to fastmathConstsAVX2.

// EXPSCALED2 sets Y6 = e^Y0 for Y0 already clamped. Uses Y1-Y12.
#define EXPSCALED2 \
	VMULPD 64(DX), Y0, Y1   \ // t = x·log2e
	VADDPD 96(DX), Y1, Y2   \ // t + round
	VSUBPD 96(DX), Y2, Y12  \ // kf = (t + round) − round
	VSUBPD Y12, Y1, Y3      \ // t − kf
	VMULPD 128(DX), Y3, Y3  \ // g = (t − kf)·ln2
	VMULPD Y3, Y3, Y4       \ // g2
	VMULPD Y4, Y4, Y5       \ // g4
	VADDPD 160(DX), Y3, Y6  \ // 1 + g
	VMULPD 224(DX), Y3, Y7  \ // g·(1/6)
	VADDPD 192(DX), Y7, Y7  \ // 1/2 + g/6
	VMULPD Y7, Y4, Y7       \ // g2·(1/2 + g/6)
	VADDPD Y7, Y6, Y6       \ // A = (1 + g) + g2·(...)
	VMULPD 288(DX), Y3, Y8  \ // g·(1/120)
	VADDPD 256(DX), Y8, Y8  \ // 1/24 + g/120
	VMULPD 352(DX), Y3, Y9  \ // g·(1/5040)
	VADDPD 320(DX), Y9, Y9  \ // 1/720 + g/5040
	VMULPD Y9, Y4, Y9       \ // g2·(...)
	VADDPD Y9, Y8, Y8       \ // (1/24 + g/120) + g2·(...)
	VMULPD 416(DX), Y3, Y10 \ // g·(1/362880)
	VADDPD 384(DX), Y10, Y10 \ // 1/40320 + g/362880
	VMULPD Y10, Y5, Y10     \ // g4·(...)
	VADDPD Y10, Y8, Y8      \ // B
	VMULPD Y8, Y5, Y8       \ // g4·B
	VADDPD Y8, Y6, Y6       \ // p = A + g4·B
	VPSUBQ 608(DX), Y2, Y11 \ // int64(kf) + 1023
	VPSLLQ $52, Y11, Y11    \ // 2^kf
	VMULPD Y11, Y6, Y6        // e = p·2^kf

#define CLAMPS2 \
	VMOVUPD 0(DX), Y14  \ // expClamp
	VMOVUPD 32(DX), Y15   // −expClamp

// func logisticAVX2(dst, src *float32, n int, c *float64)
TEXT ·logisticAVX2(SB), NOSPLIT, $0-32
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	MOVQ c+24(FP), DX
	CLAMPS2

logistic2Loop:
	VCVTPS2PD (SI), Y0
	VXORPD 640(DX), Y0, Y0 // x = −x
	VMINPD Y0, Y14, Y0     // x > clamp ? clamp : x (NaN stays)
	VMAXPD Y0, Y15, Y0     // x < −clamp ? −clamp : x
	EXPSCALED2
	VMOVUPD 160(DX), Y7
	VADDPD Y7, Y6, Y6      // 1 + e
	VDIVPD Y6, Y7, Y6      // 1/(1 + e)
	VCVTPD2PSY Y6, X6
	VMOVUPS X6, (DI)
	ADDQ $16, SI
	ADDQ $16, DI
	SUBQ $4, CX
	JNZ  logistic2Loop
	VZEROUPPER
	RET

// func tanhAVX2(dst, src *float32, n int, c *float64)
TEXT ·tanhAVX2(SB), NOSPLIT, $0-32
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	MOVQ c+24(FP), DX
	CLAMPS2

tanh2Loop:
	VCVTPS2PD (SI), Y0
	VANDPD 672(DX), Y0, Y1         // |x|
	VCMPPD $0x11, 512(DX), Y1, Y13 // |x| < 1/1024 (ordered: false for NaN)
	VMULPD 448(DX), Y0, Y0         // y = −2·x
	VMINPD Y0, Y14, Y0
	VMAXPD Y0, Y15, Y0
	EXPSCALED2
	VADDPD 160(DX), Y6, Y6         // 1 + e
	VMOVUPD 480(DX), Y7
	VDIVPD Y6, Y7, Y6              // 2/(1 + e)
	VSUBPD 160(DX), Y6, Y6         // 2/(1 + e) − 1
	VCVTPS2PD (SI), Y9             // x again
	VMULPD Y9, Y9, Y7              // x2
	VMULPD 576(DX), Y7, Y8         // x2·(2/15)
	VMOVUPD 544(DX), Y10
	VSUBPD Y8, Y10, Y8             // 1/3 − x2·(2/15)
	VMULPD Y8, Y7, Y8              // x2·(...)
	VMOVUPD 160(DX), Y10
	VSUBPD Y8, Y10, Y8             // 1 − x2·(...)
	VMULPD Y8, Y9, Y8              // x·(...)
	VBLENDVPD Y13, Y8, Y6, Y6      // the series where |x| < 1/1024
	VCVTPD2PSY Y6, X6
	VMOVUPS X6, (DI)
	ADDQ $16, SI
	ADDQ $16, DI
	SUBQ $4, CX
	JNZ  tanh2Loop
	VZEROUPPER
	RET

// func expAVX2(dst, src *float32, n int, c *float64)
TEXT ·expAVX2(SB), NOSPLIT, $0-32
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	MOVQ c+24(FP), DX
	CLAMPS2

exp2Loop:
	VCVTPS2PD (SI), Y0
	VMINPD Y0, Y14, Y0
	VMAXPD Y0, Y15, Y0
	EXPSCALED2
	VCVTPD2PSY Y6, X6
	VMOVUPS X6, (DI)
	ADDQ $16, SI
	ADDQ $16, DI
	SUBQ $4, CX
	JNZ  exp2Loop
	VZEROUPPER
	RET
