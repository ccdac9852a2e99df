//go:build ignore

// gen_kernels writes kernels_amd64.s and its Go declarations, kernels_decl_amd64.go:
// the AVX-512 and AVX2+FMA micro-kernels of package gemm (one per row count up
// to the register block), the AVX-512 and AVX2 packing routines and tight FMA loops that
// measure the machine's peak.
//
//	go run gen_kernels.go
package main

import (
	"bytes"
	"fmt"
	"go/format"
	"log"
	"os"
)

var out bytes.Buffer

func p(format string, args ...any) { fmt.Fprintf(&out, format+"\n", args...) }

// kernel writes a micro-kernel that computes, for a packed A micro-panel
// (kc steps of astep floats, of which the first mr rows are used) and a packed B micro-panel (kc steps of nr floats),
// C[0:mr, 0:nr] += alpha · A·B with C row-major and ldc elements between rows.
// vec is "Z" (16 floats) or "Y" (8 floats); nregs is the register file size.
func kernel(name, vec string, mr, astep, nr, unroll, pfA int) {
	width := 16
	if vec == "Y" {
		width = 8
	}
	nv := nr / width
	nacc := mr * nv
	bReg := func(j int) string { return fmt.Sprintf("%s%d", vec, nacc+j) }
	// Two broadcast registers alternate so that consecutive rows do not wait on each other.
	aReg := func(r int) string { return fmt.Sprintf("%s%d", vec, nacc+nv+r%2) }
	acc := func(r, j int) string { return fmt.Sprintf("%s%d", vec, r*nv+j) }
	vbytes := width * 4

	p("")
	p("// func %s(kc int, a, b, c *float32, ldc int, alpha float32, overwrite bool)", name)
	p("TEXT ·%s(SB), NOSPLIT, $0-45", name)
	p("\tMOVQ kc+0(FP), DX")
	p("\tMOVQ a+8(FP), AX")
	p("\tMOVQ b+16(FP), BX")
	p("\tMOVQ c+24(FP), CX")
	p("\tMOVQ ldc+32(FP), R8")
	p("\tSHLQ $2, R8")
	for r := 0; r < mr; r++ {
		for j := 0; j < nv; j++ {
			if vec == "Z" {
				p("\tVPXORD %s, %s, %s", acc(r, j), acc(r, j), acc(r, j))
			} else {
				p("\tVXORPS %s, %s, %s", acc(r, j), acc(r, j), acc(r, j))
			}
		}
	}
	// Prefetch the C tile: it is touched only at the end, so its lines arrive in time.
	p("\tMOVQ CX, R9")
	for r := 0; r < mr; r++ {
		p("\tPREFETCHT0 (R9)")
		if nr*4 > 64 {
			p("\tPREFETCHT0 %d(R9)", nr*4-4)
		}
		p("\tADDQ R8, R9")
	}
	step := func(u int) {
		for j := 0; j < nv; j++ {
			p("\tVMOVUPS %d(BX), %s", (u*nr+j*width)*4, bReg(j))
		}
		for r := 0; r < mr; r++ {
			p("\tVBROADCASTSS %d(AX), %s", (u*astep+r)*4, aReg(r))
			for j := 0; j < nv; j++ {
				p("\tVFMADD231PS %s, %s, %s", aReg(r), bReg(j), acc(r, j))
			}
		}
	}
	p("\tCMPQ DX, $%d", unroll)
	p("\tJLT %s_tail", name)
	p("%s_loop:", name)
	if pfA >= 0 {
		p("\tPREFETCHT0 %d(AX)", unroll*astep*4+pfA)
	}
	for u := 0; u < unroll; u++ {
		step(u)
	}
	p("\tADDQ $%d, AX", unroll*astep*4)
	p("\tADDQ $%d, BX", unroll*nr*4)
	p("\tSUBQ $%d, DX", unroll)
	p("\tCMPQ DX, $%d", unroll)
	p("\tJGE %s_loop", name)
	p("%s_tail:", name)
	p("\tTESTQ DX, DX")
	p("\tJEQ %s_store", name)
	p("%s_tailloop:", name)
	step(0)
	p("\tADDQ $%d, AX", astep*4)
	p("\tADDQ $%d, BX", nr*4)
	p("\tDECQ DX")
	p("\tJNE %s_tailloop", name)
	p("%s_store:", name)
	// C += alpha·acc, rounded as a multiply then an add so that every tile,
	// full or edge, rounds the same way; with overwrite set, C = alpha·acc
	// and C is not read.
	al := aReg(0)
	p("\tVBROADCASTSS alpha+40(FP), %s", al)
	p("\tMOVBLZX overwrite+44(FP), R10")
	p("\tTESTQ R10, R10")
	p("\tJNE %s_overwrite", name)
	for r := 0; r < mr; r++ {
		for j := 0; j < nv; j++ {
			p("\tVMULPS %s, %s, %s", al, acc(r, j), acc(r, j))
			p("\tVADDPS %d(CX), %s, %s", j*vbytes, acc(r, j), acc(r, j))
			p("\tVMOVUPS %s, %d(CX)", acc(r, j), j*vbytes)
		}
		if r < mr-1 {
			p("\tADDQ R8, CX")
		}
	}
	p("\tVZEROUPPER")
	p("\tRET")
	p("%s_overwrite:", name)
	for r := 0; r < mr; r++ {
		for j := 0; j < nv; j++ {
			p("\tVMULPS %s, %s, %s", al, acc(r, j), acc(r, j))
			p("\tVMOVUPS %s, %d(CX)", acc(r, j), j*vbytes)
		}
		if r < mr-1 {
			p("\tADDQ R8, CX")
		}
	}
	p("\tVZEROUPPER")
	p("\tRET")
}

// transpose writes a packing routine for panels read across rows: every 16 k
// steps it loads 16 floats from each of rows source rows (the rest are zero),
// transposes the 16x16 block in registers and stores step p's rows values at
// dst + p·step bytes. kc must be a multiple of 16.
func transpose(name string, rows, step int) {
	transposeHeader(name)
	p("\tLEAQ (R10)(DX*4), R12") // 7·ld
	p("\tLEAQ (SI)(DX*8), R9")   // row 8
	p("\tMOVL $%d, AX", (1<<rows)-1)
	p("\tKMOVW AX, K1")
	p("\tSHRQ $4, CX")
	p("\tJEQ %s_done", name)
	p("%s_loop:", name)
	addr := []string{"(%s)", "(%s)(DX*1)", "(%s)(DX*2)", "(%s)(R10*1)", "(%s)(DX*4)", "(%s)(R11*1)", "(%s)(R10*2)", "(%s)(R12*1)"}
	for r := 0; r < 16; r++ {
		base := "SI"
		if r >= 8 {
			base = "R9"
		}
		if r < rows {
			p("\tVMOVUPS "+addr[r%8]+", Z%d", base, r)
		} else {
			p("\tVPXORD Z%d, Z%d, Z%d", r, r, r)
		}
	}
	// Stage 1: interleave floats of row pairs.
	for i := 0; i < 8; i++ {
		p("\tVUNPCKLPS Z%d, Z%d, Z%d", 2*i+1, 2*i, 16+2*i)
		p("\tVUNPCKHPS Z%d, Z%d, Z%d", 2*i+1, 2*i, 16+2*i+1)
	}
	// Stage 2: interleave pairs; u[4g+q] lane L = column 4L+q of rows 4g..4g+3.
	for g := 0; g < 4; g++ {
		t := 16 + 4*g
		p("\tVUNPCKLPD Z%d, Z%d, Z%d", t+2, t, 4*g)
		p("\tVUNPCKHPD Z%d, Z%d, Z%d", t+2, t, 4*g+1)
		p("\tVUNPCKLPD Z%d, Z%d, Z%d", t+3, t+1, 4*g+2)
		p("\tVUNPCKHPD Z%d, Z%d, Z%d", t+3, t+1, 4*g+3)
	}
	// Stage 3: gather 128-bit lanes of row groups.
	for q := 0; q < 4; q++ {
		p("\tVSHUFF32X4 $0x44, Z%d, Z%d, Z%d", 4+q, q, 16+q)
		p("\tVSHUFF32X4 $0xEE, Z%d, Z%d, Z%d", 4+q, q, 20+q)
		p("\tVSHUFF32X4 $0x44, Z%d, Z%d, Z%d", 12+q, 8+q, 24+q)
		p("\tVSHUFF32X4 $0xEE, Z%d, Z%d, Z%d", 12+q, 8+q, 28+q)
	}
	// Stage 4: column 4L+q, rows 0..15.
	for q := 0; q < 4; q++ {
		p("\tVSHUFF32X4 $0x88, Z%d, Z%d, Z%d", 24+q, 16+q, q)
		p("\tVSHUFF32X4 $0xDD, Z%d, Z%d, Z%d", 24+q, 16+q, 4+q)
		p("\tVSHUFF32X4 $0x88, Z%d, Z%d, Z%d", 28+q, 20+q, 8+q)
		p("\tVSHUFF32X4 $0xDD, Z%d, Z%d, Z%d", 28+q, 20+q, 12+q)
	}
	for c := 0; c < 16; c++ {
		if rows < 16 {
			p("\tVMOVUPS Z%d, K1, %d(DI)", c, c*step)
		} else {
			p("\tVMOVUPS Z%d, %d(DI)", c, c*step)
		}
	}
	p("\tADDQ $64, SI")
	p("\tADDQ $64, R9")
	p("\tADDQ $%d, DI", 16*step)
	p("\tDECQ CX")
	p("\tJNE %s_loop", name)
	p("%s_done:", name)
	p("\tVZEROUPPER")
	p("\tRET")
}

// transposeHeader writes the start of a packing routine
// func name(dst, src *float32, ld, kc int): DI = dst, SI = src, DX = ld in
// bytes, CX = kc, R10 = 3·ld and R11 = 5·ld.
func transposeHeader(name string) {
	p("")
	p("// func %s(dst, src *float32, ld, kc int)", name)
	p("TEXT ·%s(SB), NOSPLIT, $0-32", name)
	p("\tMOVQ dst+0(FP), DI")
	p("\tMOVQ src+8(FP), SI")
	p("\tMOVQ ld+16(FP), DX")
	p("\tSHLQ $2, DX")
	p("\tMOVQ kc+24(FP), CX")
	p("\tLEAQ (DX)(DX*2), R10") // 3·ld
	p("\tLEAQ (DX)(DX*4), R11") // 5·ld
}

// transposeAVX2 writes packTrans8AVX2 and packTrans6AVX2, the AVX2 packing
// routines for panels read across rows: every 8 k steps they load 8 floats
// from each source row, transpose in registers and store step p's values at
// dst + p·step bytes. kc must be a multiple of 8.
//
// packTrans8AVX2 reads 8 rows and stores 8 floats a step, 64 bytes apart
// (half of the AVX2 kernel's 16-column panel of a transposed B). Each ymm
// holds 4 floats of row i in its low lane and of row i+4 in its high lane,
// so one 4x4 transpose inside the lanes gives whole steps.
//
// packTrans6AVX2 reads 6 rows and stores 6 floats a step, 24 bytes apart
// (the AVX2 kernel's 6-row panel of A): rows 0-3 by a 4x4 transpose inside
// the lanes (the low lane steps 0-3, the high lane steps 4-7), rows 4-5 by
// interleaving their floats, stored as 16 and 8 bytes a step.
func transposeAVX2() {
	rowAddr := []string{"(%s)", "(%s)(DX*1)", "(%s)(DX*2)", "(%s)(R10*1)", "(%s)(DX*4)", "(%s)(R11*1)"}
	prologue := func(name string) {
		transposeHeader(name)
		p("\tLEAQ (SI)(DX*4), R9") // row 4
		p("\tSHRQ $3, CX")
		p("\tJEQ %s_done", name)
		p("%s_loop:", name)
	}
	epilogue := func(name string, dstStep int) {
		p("\tADDQ $32, SI")
		p("\tADDQ $32, R9")
		p("\tADDQ $%d, DI", dstStep)
		p("\tDECQ CX")
		p("\tJNE %s_loop", name)
		p("%s_done:", name)
		p("\tVZEROUPPER")
		p("\tRET")
	}
	// lanes4x4 transposes Y[in..in+3] (row r of the group in register in+r)
	// inside each 128-bit lane into Y[out..out+3] (step q in out+q), with
	// Y8-Y11 as scratch.
	lanes4x4 := func(in, out int) {
		p("\tVUNPCKLPS Y%d, Y%d, Y8", in+1, in)
		p("\tVUNPCKHPS Y%d, Y%d, Y9", in+1, in)
		p("\tVUNPCKLPS Y%d, Y%d, Y10", in+3, in+2)
		p("\tVUNPCKHPS Y%d, Y%d, Y11", in+3, in+2)
		p("\tVUNPCKLPD Y10, Y8, Y%d", out)
		p("\tVUNPCKHPD Y10, Y8, Y%d", out+1)
		p("\tVUNPCKLPD Y11, Y9, Y%d", out+2)
		p("\tVUNPCKHPD Y11, Y9, Y%d", out+3)
	}

	const t8 = "packTrans8AVX2"
	prologue(t8)
	for r := 0; r < 4; r++ {
		// Y[r]: k steps 0-3 of rows r and r+4; Y[4+r]: steps 4-7.
		p("\tVMOVUPS "+rowAddr[r]+", X%d", "SI", r)
		p("\tVINSERTF128 $1, "+rowAddr[r]+", Y%d, Y%d", "R9", r, r)
		p("\tVMOVUPS 16"+rowAddr[r]+", X%d", "SI", 4+r)
		p("\tVINSERTF128 $1, 16"+rowAddr[r]+", Y%d, Y%d", "R9", 4+r, 4+r)
	}
	for half := 0; half < 2; half++ {
		lanes4x4(4*half, 12)
		for q := 0; q < 4; q++ {
			p("\tVMOVUPS Y%d, %d(DI)", 12+q, (4*half+q)*64)
		}
	}
	epilogue(t8, 8*64)

	const t6 = "packTrans6AVX2"
	prologue(t6)
	for r := 0; r < 6; r++ {
		p("\tVMOVUPS "+rowAddr[r]+", Y%d", "SI", r)
	}
	lanes4x4(0, 12)             // Y12+q: rows 0-3 of steps q and q+4
	p("\tVUNPCKLPS Y5, Y4, Y6") // rows 4-5 of steps 0, 1 | 4, 5
	p("\tVUNPCKHPS Y5, Y4, Y7") // rows 4-5 of steps 2, 3 | 6, 7
	for half := 0; half < 2; half++ {
		if half == 1 {
			for q := 0; q < 4; q++ {
				p("\tVEXTRACTF128 $1, Y%d, X%d", 12+q, 12+q)
			}
			p("\tVEXTRACTF128 $1, Y6, X6")
			p("\tVEXTRACTF128 $1, Y7, X7")
		}
		for q := 0; q < 4; q++ {
			off := (4*half + q) * 24
			p("\tVMOVUPS X%d, %d(DI)", 12+q, off)
			pair, store := 6+q/2, "VMOVLPS"
			if q%2 == 1 {
				store = "VMOVHPS"
			}
			p("\t%s X%d, %d(DI)", store, pair, off+16)
		}
	}
	epilogue(t6, 8*24)
}

// peak writes a loop of independent FMAs (n iterations of 24 zmm or 12 ymm FMAs).
func peak(name, vec string, nacc int) {
	p("")
	p("// func %s(n int)", name)
	p("TEXT ·%s(SB), NOSPLIT, $0-8", name)
	p("\tMOVQ n+0(FP), DX")
	for i := 0; i < nacc+2; i++ {
		if vec == "Z" {
			p("\tVPXORD %s%d, %s%d, %s%d", vec, i, vec, i, vec, i)
		} else {
			p("\tVXORPS %s%d, %s%d, %s%d", vec, i, vec, i, vec, i)
		}
	}
	p("%s_loop:", name)
	for i := 0; i < nacc; i++ {
		p("\tVFMADD231PS %s%d, %s%d, %s%d", vec, nacc, vec, nacc+1, vec, i)
	}
	p("\tDECQ DX")
	p("\tJNE %s_loop", name)
	p("\tVZEROUPPER")
	p("\tRET")
}

func main() {
	p("// Code generated by gen_kernels.go; DO NOT EDIT.")
	p("")
	p("//go:build amd64 && !purego && !noasm")
	p("")
	p("#include \"textflag.h\"")
	// The main kernels, then one kernel per smaller row count for the last
	// rows of C (same packed panels, fewer rows computed).
	var decl bytes.Buffer
	fmt.Fprintf(&decl, "// Code generated by gen_kernels.go; DO NOT EDIT.\n\n//go:build amd64 && !purego && !noasm\n\npackage gemm\n")
	declare := func(name string) {
		fmt.Fprintf(&decl, "\n//go:noescape\nfunc %s(kc int, a, b, c *float32, ldc int, alpha float32, overwrite bool)\n", name)
	}
	table := func(prefix, vec string, mr, nr int) {
		var names []string
		for rows := 1; rows <= mr; rows++ {
			name := fmt.Sprintf("%s%dx%d", prefix, rows, nr)
			kernel(name, vec, rows, mr, nr, 4, 256)
			declare(name)
			names = append(names, name)
		}
		fmt.Fprintf(&decl, "\n// %s%dx%dRows[r] computes r rows of a %dx%d tile.\nvar %s%dx%dRows = []func(kc int, a, b, c *float32, ldc int, alpha float32, overwrite bool){nil", prefix, mr, nr, mr, nr, prefix, mr, nr)
		for _, n := range names {
			fmt.Fprintf(&decl, ", %s", n)
		}
		fmt.Fprintf(&decl, "}\n")
	}
	table("kernAVX512x", "Z", 14, 32)
	table("kernAVX2x", "Y", 6, 16)
	// Register blocks compared by BenchmarkKernel and BenchmarkVariants.
	kernel("kernAVX512x6x64", "Z", 6, 6, 64, 4, 256)
	declare("kernAVX512x6x64")
	kernel("kernAVX512x8x48", "Z", 8, 8, 48, 4, 256)
	declare("kernAVX512x8x48")
	peak("fmaPeakAVX512", "Z", 24)
	peak("fmaPeakAVX2", "Y", 12)
	transpose("packTrans14AVX512", 14, 14*4)
	transpose("packTrans16AVX512", 16, 32*4)
	transposeAVX2()
	out.WriteString(packAsm)
	if err := os.WriteFile("kernels_amd64.s", out.Bytes(), 0o644); err != nil {
		log.Fatal(err)
	}
	src, err := format.Source(decl.Bytes())
	if err != nil {
		log.Fatal(err)
	}
	if err := os.WriteFile("kernels_decl_amd64.go", src, 0o644); err != nil {
		log.Fatal(err)
	}
}

// packAsm holds the AVX-512 packing routines (and packRowsAVX2). Each writes kc steps of up to 32
// lanes; lanes outside the load masks are zero, lanes outside the store masks
// are not written, and dst advances step bytes per k step.
const packAsm = `
// func packCopyAVX512(dst, src *float32, ld, kc int, loadLo, loadHi, storeLo, storeHi uint16, step int)
// Step p copies the contiguous run src[p·ld : p·ld+32] under the load masks.
TEXT ·packCopyAVX512(SB), NOSPLIT, $0-48
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ ld+16(FP), DX
	SHLQ $2, DX
	MOVQ kc+24(FP), CX
	KMOVW loadLo+32(FP), K1
	KMOVW loadHi+34(FP), K2
	KMOVW storeLo+36(FP), K3
	KMOVW storeHi+38(FP), K4
	MOVQ step+40(FP), R8
	TESTQ CX, CX
	JEQ copydone
copyloop:
	VMOVUPS.Z (SI), K1, Z0
	VMOVUPS.Z 64(SI), K2, Z1
	VMOVUPS Z0, K3, (DI)
	VMOVUPS Z1, K4, 64(DI)
	ADDQ DX, SI
	ADDQ R8, DI
	DECQ CX
	JNE copyloop
copydone:
	VZEROUPPER
	RET

// func packRowsAVX512(dst, src *float32, ld, kc, panels, panelBytes int)
// Packs panels full 32-wide panels row by row: step p of panel q is the 32
// floats at src + p·ld + 32·q, stored at dst + q·panelBytes + 128·p. Reading
// whole rows in order keeps the hardware prefetchers streaming.
TEXT ·packRowsAVX512(SB), NOSPLIT, $0-48
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ ld+16(FP), DX
	SHLQ $2, DX
	MOVQ kc+24(FP), CX
	MOVQ panels+32(FP), R8
	MOVQ panelBytes+40(FP), R9
	TESTQ CX, CX
	JEQ rowsdone
	TESTQ R8, R8
	JEQ rowsdone
rowsloop:
	MOVQ SI, AX
	MOVQ DI, BX
	MOVQ R8, R10
rowspanel:
	VMOVUPS (AX), Z0
	VMOVUPS 64(AX), Z1
	VMOVUPS Z0, (BX)
	VMOVUPS Z1, 64(BX)
	ADDQ $128, AX
	ADDQ R9, BX
	DECQ R10
	JNE rowspanel
	ADDQ DX, SI
	ADDQ $128, DI
	DECQ CX
	JNE rowsloop
rowsdone:
	VZEROUPPER
	RET

// func packRowsAVX2(dst, src *float32, ld, rows, panels, panelBytes int)
// Packs rows (at most 8) consecutive steps of panels full 16-wide panels,
// panel by panel: step p of panel q is the 16 floats at src + p·ld + 16·q,
// stored at dst + q·panelBytes + 64·p. A few rows at a time, so that the
// stores of a panel are consecutive (stores panelBytes apart, one per panel
// and row, map to few cache sets and evicted each other).
TEXT ·packRowsAVX2(SB), NOSPLIT, $0-48
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ ld+16(FP), DX
	SHLQ $2, DX
	MOVQ rows+24(FP), CX
	MOVQ panels+32(FP), R8
	MOVQ panelBytes+40(FP), R9
	TESTQ CX, CX
	JEQ rows2done
	TESTQ R8, R8
	JEQ rows2done
rows2panel:
	MOVQ SI, AX
	MOVQ DI, BX
	MOVQ CX, R10
rows2row:
	VMOVUPS (AX), Y0
	VMOVUPS 32(AX), Y1
	VMOVUPS Y0, (BX)
	VMOVUPS Y1, 32(BX)
	ADDQ DX, AX
	ADDQ $64, BX
	DECQ R10
	JNE rows2row
	ADDQ $64, SI
	ADDQ R9, DI
	DECQ R8
	JNE rows2panel
rows2done:
	VZEROUPPER
	RET

// func packRows6AVX2(dst, src *float32, ld, rows, panels, panelBytes int)
// packRowsAVX2 for a transposed A's 6-wide panels: step p of panel q is the
// 6 floats at src + p·ld + 6·q, stored at dst + q·panelBytes + 24·p.
TEXT ·packRows6AVX2(SB), NOSPLIT, $0-48
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ ld+16(FP), DX
	SHLQ $2, DX
	MOVQ rows+24(FP), CX
	MOVQ panels+32(FP), R8
	MOVQ panelBytes+40(FP), R9
	TESTQ CX, CX
	JEQ rows6done
	TESTQ R8, R8
	JEQ rows6done
rows6panel:
	MOVQ SI, AX
	MOVQ DI, BX
	MOVQ CX, R10
rows6row:
	VMOVUPS (AX), X0
	MOVQ 16(AX), R11
	VMOVUPS X0, (BX)
	MOVQ R11, 16(BX)
	ADDQ DX, AX
	ADDQ $24, BX
	DECQ R10
	JNE rows6row
	ADDQ $24, SI
	ADDQ R9, DI
	DECQ R8
	JNE rows6panel
rows6done:
	VZEROUPPER
	RET

// func packGatherAVX512(dst, src *float32, idx *[32]int32, kc int, loadLo, loadHi, storeLo, storeHi uint16, step int)
// Step p gathers src[idx[l]+p] for every lane l under the load masks.
TEXT ·packGatherAVX512(SB), NOSPLIT, $0-48
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ idx+16(FP), AX
	VMOVDQU32 (AX), Z2
	VMOVDQU32 64(AX), Z3
	MOVQ kc+24(FP), CX
	KMOVW loadLo+32(FP), K1
	KMOVW loadHi+34(FP), K2
	KMOVW storeLo+36(FP), K3
	KMOVW storeHi+38(FP), K4
	MOVQ step+40(FP), R8
	TESTQ CX, CX
	JEQ gatherdone
	KORTESTW K4, K4
	JNE gatherloop2
gatherloop1:
	VPXORD Z0, Z0, Z0
	KMOVW K1, K5
	VGATHERDPS (SI)(Z2*4), K5, Z0
	VMOVUPS Z0, K3, (DI)
	ADDQ $4, SI
	ADDQ R8, DI
	DECQ CX
	JNE gatherloop1
	JMP gatherdone
gatherloop2:
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	KMOVW K1, K5
	KMOVW K2, K6
	VGATHERDPS (SI)(Z2*4), K5, Z0
	VGATHERDPS (SI)(Z3*4), K6, Z1
	VMOVUPS Z0, K3, (DI)
	VMOVUPS Z1, K4, 64(DI)
	ADDQ $4, SI
	ADDQ R8, DI
	DECQ CX
	JNE gatherloop2
gatherdone:
	VZEROUPPER
	RET
`
