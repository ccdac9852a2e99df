//go:build amd64 && !purego && !noasm

#include "textflag.h"

// The running sums of reduce_fast.go's sum32Add and sum32Finish, with
// AVX2: lane l of the 32 holds the sum of the elements i ≡ l (mod 32), and
// the lanes are combined pairwise, l with l+16, then l+8, l+4, l+2, l+1:
// the same IEEE additions, lane for lane, as the Go loops.

// func sum32AVX2(s *[32]float32, x *float32, n int)
// Adds x[0:n] (n a positive multiple of 32) to the running sums s.
TEXT ·sum32AVX2(SB), NOSPLIT, $0-24
	MOVQ s+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ n+16(FP), CX
	VMOVUPS 0(DI), Y0
	VMOVUPS 32(DI), Y1
	VMOVUPS 64(DI), Y2
	VMOVUPS 96(DI), Y3

sumLoop:
	VADDPS 0(SI), Y0, Y0
	VADDPS 32(SI), Y1, Y1
	VADDPS 64(SI), Y2, Y2
	VADDPS 96(SI), Y3, Y3
	ADDQ $128, SI
	SUBQ $32, CX
	JNZ  sumLoop
	VMOVUPS Y0, 0(DI)
	VMOVUPS Y1, 32(DI)
	VMOVUPS Y2, 64(DI)
	VMOVUPS Y3, 96(DI)
	VZEROUPPER
	RET

// func sum32FinishAVX2(s *[32]float32) float32
TEXT ·sum32FinishAVX2(SB), NOSPLIT, $0-12
	MOVQ s+0(FP), DI
	VMOVUPS 0(DI), Y0
	VMOVUPS 32(DI), Y1
	VADDPS 64(DI), Y0, Y0   // lanes 0-7 += 16-23
	VADDPS 96(DI), Y1, Y1   // lanes 8-15 += 24-31
	VADDPS Y1, Y0, Y0       // lanes 0-7 += 8-15
	VEXTRACTF128 $1, Y0, X1
	VADDPS X1, X0, X0       // lanes 0-3 += 4-7
	VMOVHLPS X0, X0, X1
	VADDPS X1, X0, X0       // lanes 0-1 += 2-3
	VMOVSHDUP X0, X1
	VADDSS X1, X0, X0       // lane 0 += 1
	VMOVSS X0, ret+8(FP)
	VZEROUPPER
	RET
