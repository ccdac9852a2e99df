//go:build amd64 && !purego && !noasm

#include "textflag.h"

// One bfloat16 operation in one pass (binaryBF16 in bf16vec.go): each
// operand widened in registers, the float32 operation, the result's top
// 16 bits stored — the bits of widening, the float32 executor and
// narrowing in separate passes, without the float32 temporaries.
//
// func xxxBF16AVX512(dst, a, b *uint16, as, bs *float32, n int)
//
// a or b is nil for a scalar operand, then *as or *bs is its value. n must
// be a multiple of 16. BF16BINARY's OP(x, y, z) sets z = x op y.
#define BF16BINARY(OP) \
	MOVQ dst+0(FP), DI \
	MOVQ a+8(FP), SI \
	MOVQ b+16(FP), DX \
	MOVQ n+40(FP), CX \
	SHRQ $4, CX \
	JZ   done \
	TESTQ SI, SI \
	JZ   ascalar \
	TESTQ DX, DX \
	JZ   bscalar \
vv: \
	VPMOVZXWD (SI), Z0 \
	VPMOVZXWD (DX), Z1 \
	VPSLLD    $16, Z0, Z0 \
	VPSLLD    $16, Z1, Z1 \
	OP(Z0, Z1, Z0) \
	VPSRLD    $16, Z0, Z0 \
	VPMOVDW   Z0, Y0 \
	VMOVDQU   Y0, (DI) \
	ADDQ      $32, SI \
	ADDQ      $32, DX \
	ADDQ      $32, DI \
	DECQ      CX \
	JNZ       vv \
	JMP       done \
ascalar: \
	MOVQ         as+24(FP), AX \
	VBROADCASTSS (AX), Z2 \
asl: \
	VPMOVZXWD (DX), Z1 \
	VPSLLD    $16, Z1, Z1 \
	OP(Z2, Z1, Z0) \
	VPSRLD    $16, Z0, Z0 \
	VPMOVDW   Z0, Y0 \
	VMOVDQU   Y0, (DI) \
	ADDQ      $32, DX \
	ADDQ      $32, DI \
	DECQ      CX \
	JNZ       asl \
	JMP       done \
bscalar: \
	MOVQ         bs+32(FP), AX \
	VBROADCASTSS (AX), Z2 \
bsl: \
	VPMOVZXWD (SI), Z0 \
	VPSLLD    $16, Z0, Z0 \
	OP(Z0, Z2, Z0) \
	VPSRLD    $16, Z0, Z0 \
	VPMOVDW   Z0, Y0 \
	VMOVDQU   Y0, (DI) \
	ADDQ      $32, SI \
	ADDQ      $32, DI \
	DECQ      CX \
	JNZ       bsl \
done: \
	VZEROUPPER \
	RET

#define ADDOP(x, y, z) VADDPS y, x, z
#define SUBOP(x, y, z) VSUBPS y, x, z
#define MULOP(x, y, z) VMULPS y, x, z
#define DIVOP(x, y, z) VDIVPS y, x, z

// bfloat16 <-> float32 conversions, 16 lanes a step (bf16vec_amd64.go).
// bfloat16 is the top half of a float32: widening shifts left by 16, and
// narrowing as GoMLX's bfloat16.FromFloat32 does (truncation) shifts right.

// func widenBF16AVX512(dst *float32, src *uint16, n int)
TEXT ·widenBF16AVX512(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	SHRQ $4, CX
	JZ   wdone

wloop:
	VPMOVZXWD (SI), Z0
	VPSLLD    $16, Z0, Z0
	VMOVUPS   Z0, (DI)
	ADDQ      $32, SI
	ADDQ      $64, DI
	DECQ      CX
	JNZ       wloop

wdone:
	VZEROUPPER
	RET

// func narrowBF16AVX512(dst *uint16, src *float32, n int)
TEXT ·narrowBF16AVX512(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	SHRQ $4, CX
	JZ   ndone

nloop:
	VMOVUPS (SI), Z0
	VPSRLD  $16, Z0, Z0
	VPMOVDW Z0, (DI)
	ADDQ    $64, SI
	ADDQ    $32, DI
	DECQ    CX
	JNZ     nloop

ndone:
	VZEROUPPER
	RET

// func truncBF16AVX512(x *float32, n int)
TEXT ·truncBF16AVX512(SB), NOSPLIT, $0-16
	MOVQ         x+0(FP), DI
	MOVQ         n+8(FP), CX
	SHRQ         $4, CX
	JZ           tdone
	MOVL         $0xffff0000, AX
	VPBROADCASTD AX, Z1

tloop:
	VPANDD  (DI), Z1, Z0
	VMOVUPS Z0, (DI)
	ADDQ    $64, DI
	DECQ    CX
	JNZ     tloop

tdone:
	VZEROUPPER
	RET

// func addBF16AVX512(dst, a, b *uint16, as, bs *float32, n int)
TEXT ·addBF16AVX512(SB), NOSPLIT, $0-48
	BF16BINARY(ADDOP)

// func subBF16AVX512(dst, a, b *uint16, as, bs *float32, n int)
TEXT ·subBF16AVX512(SB), NOSPLIT, $0-48
	BF16BINARY(SUBOP)

// func mulBF16AVX512(dst, a, b *uint16, as, bs *float32, n int)
TEXT ·mulBF16AVX512(SB), NOSPLIT, $0-48
	BF16BINARY(MULOP)

// func divBF16AVX512(dst, a, b *uint16, as, bs *float32, n int)
TEXT ·divBF16AVX512(SB), NOSPLIT, $0-48
	BF16BINARY(DIVOP)

// func logisticForBF16AVX512(dst, src *float32, n int, c *float32)
//
// logisticForBF16Go's operations, 16 lanes at a time; n is a positive
// multiple of 16 and c points to logisticBF16Consts.
TEXT ·logisticForBF16AVX512(SB), NOSPLIT, $0-32
	MOVQ         dst+0(FP), DI
	MOVQ         src+8(FP), SI
	MOVQ         n+16(FP), CX
	MOVQ         c+24(FP), DX
	SHRQ         $4, CX
	VBROADCASTSS 0(DX), Z16  // -87
	VBROADCASTSS 4(DX), Z17  // 88
	VBROADCASTSS 8(DX), Z18  // log2e
	VBROADCASTSS 12(DX), Z19 // magic 1.5·2^23
	VBROADCASTSS 16(DX), Z20 // ln2hi
	VBROADCASTSS 20(DX), Z21 // ln2lo
	VBROADCASTSS 24(DX), Z22 // the polynomial, highest degree first
	VBROADCASTSS 28(DX), Z23
	VBROADCASTSS 32(DX), Z24
	VBROADCASTSS 36(DX), Z25
	VBROADCASTSS 40(DX), Z26
	VBROADCASTSS 44(DX), Z27
	VBROADCASTSS 48(DX), Z28 // 1
	MOVL         $0x4b3fff81, AX // bits(magic) - 127
	VPBROADCASTD AX, Z30
	MOVL         $0x80000000, AX
	VPBROADCASTD AX, Z31

lgloop:
	VPXORD  (SI), Z31, Z0 // t = -x
	VMAXPS  Z0, Z16, Z0   // max(-87, t), NaN t passes
	VMINPS  Z0, Z17, Z0   // min(88, t), NaN t passes
	VMULPS  Z18, Z0, Z1   // t·log2e
	VADDPS  Z19, Z1, Z1   // z = t·log2e + magic
	VSUBPS  Z19, Z1, Z2   // kf = z - magic
	VMULPS  Z20, Z2, Z3   // kf·ln2hi
	VSUBPS  Z3, Z0, Z3    // r = t - kf·ln2hi
	VMULPS  Z21, Z2, Z4   // kf·ln2lo
	VSUBPS  Z4, Z3, Z3    // r = r - kf·ln2lo
	VMULPS  Z3, Z3, Z5    // r2
	VMULPS  Z3, Z22, Z6   // p = c0·r
	VADDPS  Z23, Z6, Z6
	VMULPS  Z3, Z6, Z6
	VADDPS  Z24, Z6, Z6
	VMULPS  Z3, Z6, Z6
	VADDPS  Z25, Z6, Z6
	VMULPS  Z3, Z6, Z6
	VADDPS  Z26, Z6, Z6
	VMULPS  Z3, Z6, Z6
	VADDPS  Z27, Z6, Z6
	VMULPS  Z5, Z6, Z6    // p·r2
	VADDPS  Z3, Z6, Z6    // + r
	VADDPS  Z28, Z6, Z6   // + 1
	VPSUBD  Z30, Z1, Z7   // k + 127
	VPSLLD  $23, Z7, Z7   // 2^k
	VMULPS  Z7, Z6, Z6    // e
	VADDPS  Z28, Z6, Z6   // 1 + e
	VDIVPS  Z6, Z28, Z6   // 1/(1 + e)
	VMOVUPS Z6, (DI)
	ADDQ    $64, SI
	ADDQ    $64, DI
	DECQ    CX
	JNZ     lgloop
	VZEROUPPER
	RET
