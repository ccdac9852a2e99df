//go:build amd64 && !purego

#include "textflag.h"

// func scanRegRunAsm(ents *uint32, i, last int, lw, lwy *int64, rec *float64, ts, tw, wl, sl int64, best float64) (int, int64, int64, float64)
//
// scanRegRun in registers (the compiled Go keeps some of its values on the
// stack): the same float64 operations in the same order, so the same
// scores, bit for bit.
TEXT ·scanRegRunAsm(SB), NOSPLIT, $0-120
	MOVQ ents+0(FP), SI
	MOVQ i+8(FP), DI
	MOVQ last+16(FP), CX
	MOVQ lw+24(FP), R8
	MOVQ lwy+32(FP), R9
	MOVQ rec+40(FP), R10
	MOVQ ts+48(FP), R11
	MOVQ tw+56(FP), R12
	MOVQ wl+64(FP), R13
	MOVQ sl+72(FP), BX
	MOVSD best+80(FP), X0

loop:
	CMPQ DI, CX
	JGE done
	MOVL (SI)(DI*4), AX
	ANDL $0xFFFFFF, AX
	ADDQ (R8)(AX*8), R13
	ADDQ (R9)(AX*8), BX
	MOVQ R11, DX
	SUBQ BX, DX
	XORPS X1, X1
	CVTSQ2SD BX, X1
	XORPS X2, X2
	CVTSQ2SD DX, X2
	MULSD X1, X1
	MULSD (R10)(R13*8), X1
	MOVQ R12, DX
	SUBQ R13, DX
	MULSD X2, X2
	MULSD (R10)(DX*8), X2
	ADDSD X2, X1
	INCQ DI
	UCOMISD X0, X1
	JCS loop
	MOVL (SI)(DI*4), AX
	XORL -4(SI)(DI*4), AX
	SHRL $24, AX
	JEQ loop
	DECQ DI
	MOVQ DI, ret+88(FP)
	MOVQ R13, ret1+96(FP)
	MOVQ BX, ret2+104(FP)
	MOVSD X1, ret3+112(FP)
	RET

done:
	MOVQ CX, ret+88(FP)
	MOVQ R13, ret1+96(FP)
	MOVQ BX, ret2+104(FP)
	XORPS X1, X1
	MOVSD X1, ret3+112(FP)
	RET

// func histPackedAsm(h *int64, col *uint8, rows *int32, n int, lv *int64, cm *int, cs int)
//
// histPacked in registers: for each of the n rows i, h[col[i]·cs] = 1 and
// h[col[i]·cs + cm[lv[i]>>56]] += lv[i] with the class byte cleared.
TEXT ·histPackedAsm(SB), NOSPLIT, $0-56
	MOVQ h+0(FP), AX
	MOVQ col+8(FP), DI
	MOVQ rows+16(FP), R9
	MOVQ n+24(FP), R10
	MOVQ lv+32(FP), R11
	MOVQ cm+40(FP), CX
	MOVQ cs+48(FP), DX
	XORQ R12, R12
	TESTQ R10, R10
	JLE hdone

hloop:
	MOVLQSX (R9)(R12*4), R13
	MOVQ (R11)(R13*8), BX
	MOVBQZX (DI)(R13*1), R13
	IMULQ DX, R13
	MOVQ $1, (AX)(R13*8)
	MOVQ BX, SI
	SHRQ $56, SI
	ANDQ $127, SI
	ADDQ (CX)(SI*8), R13
	SHLQ $8, BX
	SHRQ $8, BX
	ADDQ BX, (AX)(R13*8)
	INCQ R12
	CMPQ R12, R10
	JLT hloop

hdone:
	RET
