//go:build amd64 && !purego && !noasm

#include "textflag.h"

// func fillAVX512(dst *float32, v float32, n int)
//
// dst[j] = v for j < n, a positive multiple of 16 (fill in fusion.go).
TEXT ·fillAVX512(SB), NOSPLIT, $0-24
	MOVQ         dst+0(FP), DI
	VBROADCASTSS v+8(FP), Z0
	MOVQ         n+16(FP), CX
	SHRQ         $4, CX

loop:
	VMOVUPS Z0, (DI)
	ADDQ    $64, DI
	DECQ    CX
	JNZ     loop
	VZEROUPPER
	RET
