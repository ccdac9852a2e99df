//go:build ignore

// gen_bf16 writes bf16_amd64.s: the bfloat16 micro-kernel of package gemm
// (AVX-512 BF16's VDPBF16PS, which Go's assembler does not know: the
// generator encodes it as bytes) and a loop of them that measures the
// machine's bfloat16 peak.
//
//	go run gen_bf16.go
package main

import (
	"bytes"
	"fmt"
	"log"
	"os"
)

var out bytes.Buffer

func p(format string, args ...any) { fmt.Fprintf(&out, format+"\n", args...) }

// vdpbf16ps returns the bytes of VDPBF16PS zmm(src2), zmm(src1), zmm(dst) in
// Go operand order (Intel: VDPBF16PS zmm_dst, zmm_src1, zmm_src2): for each
// of the 16 float32 lanes, dst += src1.lo·src2.lo + src1.hi·src2.hi over the
// lane's two bfloat16 halves. EVEX.512.F3.0F38.W0 52 /r, register form:
// ModRM.reg and EVEX.R, R' name dst; EVEX.vvvv and V' src1; ModRM.rm and
// EVEX.B, X src2.
func vdpbf16ps(src2, src1, dst int) string {
	bit := func(v, i int) int { return (v >> i) & 1 }
	p0 := (1-bit(dst, 3))<<7 | (1-bit(src2, 4))<<6 | (1-bit(src2, 3))<<5 | (1-bit(dst, 4))<<4 | 0b10 // map 0F38
	p1 := 0<<7 | ((^src1)&15)<<3 | 1<<2 | 0b10                                                       // W0, pp F3
	p2 := 0b10<<5 | (1-bit(src1, 4))<<3                                                              // L'L 512
	modrm := 0xC0 | (dst&7)<<3 | src2&7
	return fmt.Sprintf("BYTE $0x62; BYTE $0x%02X; BYTE $0x%02X; BYTE $0x%02X; BYTE $0x52; BYTE $0x%02X // VDPBF16PS Z%d, Z%d, Z%d",
		p0, p1, p2, modrm, src2, src1, dst)
}

// kernel writes the 14x32 micro-kernel: for kp steps of packed panels (A:
// 14 dwords a step, each the bfloat16 pair A[i][2p], A[i][2p+1]; B: 32
// dwords a step, B[2p][j], B[2p+1][j]) it computes the float32 tile
// C[0:14, 0:32] = Σ_p A·B, added to C's contents when acc is set. Z0-Z27
// hold the tile (row r in Z2r, Z2r+1), Z28 and Z29 a step of B, Z30 and Z31
// A's broadcast pairs, alternating so that consecutive rows do not wait on
// each other.
//
// With out16 it writes bf16Kern14x32To16(kp int, a, b *uint32, c *uint16,
// ldc int) instead: the tile's float32 sums truncated to bfloat16 (the top
// half of each lane, as GoMLX's bfloat16.FromFloat32) and stored over C.
func kernel(out16 bool) { kernelRows(out16, 14) }

// kernelRows writes kernel's micro-kernel for the first mr rows of a
// tile (mr ≤ 14; the packed A panel still has 14 lanes a step): with mr <
// 14 only its bfloat16 form, bf16Kern<mr>x32To16, for a partial tile's rows,
// which then need neither the padding rows' products nor a float32 copy.
func kernelRows(out16 bool, mr int) {
	p("")
	if out16 {
		p("// func bf16Kern%dx32To16(kp int, a, b *uint32, c *uint16, ldc int)", mr)
		p("TEXT ·bf16Kern%dx32To16(SB), NOSPLIT, $0-40", mr)
	} else {
		p("// func bf16Kern14x32(kp int, a, b *uint32, c *float32, ldc int, acc bool)")
		p("TEXT ·bf16Kern14x32(SB), NOSPLIT, $0-41")
	}
	p("\tMOVQ kp+0(FP), DX")
	p("\tMOVQ a+8(FP), AX")
	p("\tMOVQ b+16(FP), BX")
	p("\tMOVQ c+24(FP), CX")
	p("\tMOVQ ldc+32(FP), R8")
	if out16 {
		p("\tSHLQ $1, R8")
	} else {
		p("\tSHLQ $2, R8")
	}
	for z := 0; z < 2*mr; z++ {
		p("\tVPXORD Z%d, Z%d, Z%d", z, z, z)
	}
	p("\tTESTQ DX, DX")
	p("\tJLE store")
	p("loop:")
	p("\tVMOVUPS (BX), Z28")
	p("\tVMOVUPS 64(BX), Z29")
	p("\tPREFETCHT0 1024(BX)")
	p("\tPREFETCHT0 512(AX)")
	for r := 0; r < mr; r++ {
		bc := 30 + r%2
		p("\tVPBROADCASTD %d(AX), Z%d", 4*r, bc)
		p("\t%s", vdpbf16ps(bc, 28, 2*r))
		p("\t%s", vdpbf16ps(bc, 29, 2*r+1))
	}
	p("\tADDQ $%d, AX", 4*14)
	p("\tADDQ $128, BX")
	p("\tDECQ DX")
	p("\tJNZ loop")
	p("store:")
	if out16 {
		for r := 0; r < mr; r++ {
			p("\tVPSRLD $16, Z%d, Z%d", 2*r, 2*r)
			p("\tVPSRLD $16, Z%d, Z%d", 2*r+1, 2*r+1)
			p("\tVPMOVDW Z%d, (CX)", 2*r)
			p("\tVPMOVDW Z%d, 32(CX)", 2*r+1)
			p("\tADDQ R8, CX")
		}
		p("\tVZEROUPPER")
		p("\tRET")
		return
	}
	p("\tMOVBLZX acc+40(FP), R9")
	p("\tTESTQ R9, R9")
	p("\tJZ overwrite")
	for r := 0; r < mr; r++ {
		p("\tVADDPS (CX), Z%d, Z%d", 2*r, 2*r)
		p("\tVADDPS 64(CX), Z%d, Z%d", 2*r+1, 2*r+1)
		p("\tVMOVUPS Z%d, (CX)", 2*r)
		p("\tVMOVUPS Z%d, 64(CX)", 2*r+1)
		p("\tADDQ R8, CX")
	}
	p("\tVZEROUPPER")
	p("\tRET")
	p("overwrite:")
	for r := 0; r < mr; r++ {
		p("\tVMOVUPS Z%d, (CX)", 2*r)
		p("\tVMOVUPS Z%d, 64(CX)", 2*r+1)
		p("\tADDQ R8, CX")
	}
	p("\tVZEROUPPER")
	p("\tRET")
}

// peak writes bf16Peak(n): n rounds of 24 independent VDPBF16PS on
// registers (the machine's bfloat16 multiply-add rate, for the benchmark
// that sets the kernel's efficiency against it).
func peak() {
	p("")
	p("// func bf16Peak(n int)")
	p("TEXT ·bf16Peak(SB), NOSPLIT, $0-8")
	p("\tMOVQ n+0(FP), DX")
	for z := 0; z < 26; z++ {
		p("\tVPXORD Z%d, Z%d, Z%d", z, z, z)
	}
	p("\tTESTQ DX, DX")
	p("\tJLE done")
	p("loop:")
	for z := 0; z < 24; z++ {
		p("\t%s", vdpbf16ps(24, 25, z))
	}
	p("\tDECQ DX")
	p("\tJNZ loop")
	p("done:")
	p("\tVZEROUPPER")
	p("\tRET")
}

// pairs writes bf16PackPairs: kp steps of a panel whose pairs come from
// two rows of src (B not transposed, A transposed): step p reads the words
// of rows 2p and 2p+1 (ld elements apart) under the 32-bit load mask (the
// rest read as zero) and writes their interleaving, word l of row 2p then
// of row 2p+1, as 32-bit lanes under the store masks of the low and high
// 16 lanes, step bytes apart. VPERMT2W interleaves with two index vectors.
func pairs() {
	p("")
	p("// bf16Interleave<> holds VPERMT2W's indices: lanes 0-15, then 16-31, of the")
	p("// first table interleaved with the same lanes of the second (32 + lane).")
	for half := 0; half < 2; half++ {
		for q := 0; q < 8; q++ {
			var v uint64
			for w := 0; w < 4; w++ {
				i := q*2 + w/2 + 16*half
				idx := i
				if w%2 == 1 {
					idx = 32 + i
				}
				v |= uint64(idx) << (16 * w)
			}
			p("DATA bf16Interleave<>+%d(SB)/8, $0x%016x", 64*half+8*q, v)
		}
	}
	p("GLOBL bf16Interleave<>(SB), RODATA|NOPTR, $128")
	p("")
	p("// func bf16PackPairs(dst *uint32, src *uint16, ld, kp int, load uint32, storeLo, storeHi uint16, step int)")
	p("TEXT ·bf16PackPairs(SB), NOSPLIT, $0-48")
	p("\tMOVQ dst+0(FP), DI")
	p("\tMOVQ src+8(FP), SI")
	p("\tMOVQ ld+16(FP), R8")
	p("\tSHLQ $1, R8")
	p("\tMOVQ kp+24(FP), DX")
	p("\tMOVL load+32(FP), AX")
	p("\tKMOVD AX, K1")
	p("\tMOVWLZX storeLo+36(FP), AX")
	p("\tKMOVW AX, K2")
	p("\tMOVWLZX storeHi+38(FP), AX")
	p("\tKMOVW AX, K3")
	p("\tMOVQ step+40(FP), R9")
	p("\tVMOVDQU64 bf16Interleave<>+0(SB), Z30")
	p("\tVMOVDQU64 bf16Interleave<>+64(SB), Z31")
	p("\tLEAQ (R8)(R8*1), R10")
	p("\tTESTQ DX, DX")
	p("\tJLE done")
	p("loop:")
	p("\tVMOVDQU16.Z (SI), K1, Z0")
	p("\tVMOVDQU16.Z (SI)(R8*1), K1, Z1")
	p("\tVMOVDQU64 Z0, Z2")
	p("\tVPERMT2W Z1, Z30, Z2")
	p("\tVPERMT2W Z1, Z31, Z0")
	p("\tVMOVDQU32 Z2, K2, (DI)")
	p("\tVMOVDQU32 Z0, K3, 64(DI)")
	p("\tADDQ R10, SI")
	p("\tADDQ R9, DI")
	p("\tDECQ DX")
	p("\tJNZ loop")
	p("done:")
	p("\tVZEROUPPER")
	p("\tRET")
}

func main() {
	p("// Code generated by gen_bf16.go; DO NOT EDIT.")
	p("")
	p("//go:build amd64 && !purego && !noasm")
	p("")
	p("#include \"textflag.h\"")
	kernel(false)
	kernel(true)
	for mr := 1; mr < 14; mr++ {
		kernelRows(true, mr)
	}
	peak()
	pairs()
	if err := os.WriteFile("bf16_amd64.s", out.Bytes(), 0o644); err != nil {
		log.Fatal(err)
	}
}
