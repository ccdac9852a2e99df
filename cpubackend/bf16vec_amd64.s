//go:build amd64 && !purego && !noasm

#include "textflag.h"

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
