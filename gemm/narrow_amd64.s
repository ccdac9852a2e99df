//go:build amd64 && !purego && !noasm

#include "textflag.h"

// func narrowAVX512(dst *uint16, src *float32, n int)
//
// dst[j] = the top 16 bits of src[j] for j < n, a positive multiple of 16
// (narrowRow).
TEXT ·narrowAVX512(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	SHRQ $4, CX

loop:
	VMOVUPS (SI), Z0
	VPSRLD  $16, Z0, Z0
	VPMOVDW Z0, Y0
	VMOVDQU Y0, (DI)
	ADDQ    $64, SI
	ADDQ    $32, DI
	DECQ    CX
	JNZ     loop
	VZEROUPPER
	RET
