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
