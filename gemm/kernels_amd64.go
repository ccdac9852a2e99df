//go:build amd64 && !purego && !noasm

package gemm

import (
	"math"

	"github.com/gotrain/gotrain/internal/cpufeat"
)

// The micro-kernels are written by gen_kernels.go into kernels_amd64.s and
// declared in kernels_decl_amd64.go.
// Each computes C[0:MR, 0:NR] += alpha·A·B (C = alpha·A·B with overwrite) for a
// packed A micro-panel (kc steps of MR floats) and a packed B micro-panel (kc
// steps of NR floats); C is row-major with ldc elements between rows.

//go:generate go run gen_kernels.go

// packCopyAVX512 copies kc steps of up to 32 contiguous floats (src advances ld
// floats a step, dst step bytes): lanes outside the load masks are zero, lanes
// outside the store masks are not written.
//
//go:noescape
func packCopyAVX512(dst, src *float32, ld, kc int, loadLo, loadHi, storeLo, storeHi uint16, step int)

// packGatherAVX512 is packCopyAVX512 for panels read across rows: lane l of
// step p is src[idx[l]+p].
//
//go:noescape
func packGatherAVX512(dst, src *float32, idx *[32]int32, kc int, loadLo, loadHi, storeLo, storeHi uint16, step int)

// packRowsAVX512 packs panels full 32-wide panels of a row-major B row by row
// (step p of panel q at dst + q·panelBytes + 128·p bytes).
//
//go:noescape
func packRowsAVX512(dst, src *float32, ld, kc, panels, panelBytes int)

// packBRows packs the full panels of op(B)[pc:pc+kc, jc:jc+nc] for a
// non-transposed B when kr packs with assembly (AVX-512's 32-wide panels,
// AVX2's 16-wide ones), reading B row by row; it returns how many columns
// it packed (a multiple of the panel width, maybe 0).
func packBRows(kr *kernel, dst, b []float32, ldb, pc, kc, jc, nc int) int {
	if kc == 0 {
		return 0
	}
	switch {
	case kr.asmPack && kr.nr == 32 && nc >= 32:
		panels := nc / 32
		packRowsAVX512(&dst[0], &b[pc*ldb+jc], ldb, kc, panels, 32*kc*4)
		return panels * 32
	case kr.avx2Pack && kr.nr == 16 && nc >= 16:
		panels := nc / 16
		packRowBlocks(packRowsAVX2, dst, b, pc*ldb+jc, ldb, kc, panels, 16)
		return panels * 16
	}
	return 0
}

// packARows packs the full 6-row panels of a transposed A, op(A)[ic:ic+mc,
// pc:pc+kc] with op(A)[i,p] = a[p·lda+i], when kr packs with AVX2, eight
// steps at a time panel by panel (as packBRows); it returns how many rows
// it packed (a multiple of 6, maybe 0).
func packARows(kr *kernel, dst, a []float32, lda, ic, mc, pc, kc int) int {
	if !kr.avx2Pack || kr.mr != 6 || kc == 0 || mc < 6 {
		return 0
	}
	panels := mc / 6
	packRowBlocks(packRows6AVX2, dst, a, pc*lda+ic, lda, kc, panels, 6)
	return panels * 6
}

// packRowBlocks packs panels full width-wide panels whose kc steps are
// contiguous runs ld apart from src[off:] (step p of panel q: width floats
// at off + p·ld + width·q), eight steps at a time panel by panel with fn
// (packRowsAVX2, packRows6AVX2): row by row, the stores one panel apart
// fell in the same cache sets.
func packRowBlocks(fn func(dst, src *float32, ld, rows, panels, panelBytes int), dst, src []float32, off, ld, kc, panels, width int) {
	_ = src[off+(kc-1)*ld+panels*width-1] // the last float read
	_ = dst[panels*width*kc-1]
	for p := 0; p < kc; p += 8 {
		fn(&dst[width*p], &src[off+p*ld], ld, min(8, kc-p), panels, width*kc*4)
	}
}

// packRows6AVX2 packs rows (at most 8) steps of panels full 6-wide panels
// of a transposed A, panel by panel (see gen_kernels.go).
//
//go:noescape
func packRows6AVX2(dst, src *float32, ld, rows, panels, panelBytes int)

// packRowsAVX2 packs rows (at most 8) steps of panels full 16-wide panels
// of a non-transposed B, panel by panel (see gen_kernels.go).
//
//go:noescape
func packRowsAVX2(dst, src *float32, ld, rows, panels, panelBytes int)

// packTrans14AVX512 packs 14 rows (ld apart) into kc steps of 14 values; kc is
// a multiple of 16.
//
//go:noescape
func packTrans14AVX512(dst, src *float32, ld, kc int)

// packTrans16AVX512 packs 16 rows (ld apart) into kc steps of 16 values placed
// 32 floats apart (half of a 32-wide panel); kc is a multiple of 16.
//
//go:noescape
func packTrans16AVX512(dst, src *float32, ld, kc int)

// packTrans8AVX2 packs 8 rows (ld apart) into kc steps of 8 values placed 16
// floats apart (half of the AVX2 kernel's 16-column panel); kc is a multiple
// of 8.
//
//go:noescape
func packTrans8AVX2(dst, src *float32, ld, kc int)

// packTrans6AVX2 packs 6 rows (ld apart) into kc steps of 6 values (the AVX2
// kernel's 6-row panel); kc is a multiple of 8.
//
//go:noescape
func packTrans6AVX2(dst, src *float32, ld, kc int)

// packAcrossAVX2 packs, when kr allows it, the first kc&^7 steps of a full
// AVX2 panel read across rows: lanes 6 (6 rows of A) or 16 (16 rows of a
// transposed B), step p, lane l reading src[off+l·ld+p]. It returns the number
// of steps packed; the Go code packs the rest.
func packAcrossAVX2(kr *kernel, dst, src []float32, off, ld, kc, lanes int) int {
	k8 := kc &^ 7
	if !kr.avx2Pack || k8 == 0 || (lanes != 6 && lanes != 16) {
		return 0
	}
	_ = src[off+(lanes-1)*ld+k8-1]
	_ = dst[k8*lanes-1]
	if lanes == 6 {
		packTrans6AVX2(&dst[0], &src[off], ld, k8)
		return k8
	}
	packTrans8AVX2(&dst[0], &src[off], ld, k8)
	packTrans8AVX2(&dst[8], &src[off+8*ld], ld, k8)
	return k8
}

// fmaPeakAVX512 runs n iterations of 24 independent 16-wide FMAs (peak probe).
func fmaPeakAVX512(n int)

// fmaPeakAVX2 runs n iterations of 12 independent 8-wide FMAs (peak probe).
func fmaPeakAVX2(n int)

// kernelsBuilt tells whether this build has the assembly kernels.
const kernelsBuilt = true

// hasAVX512 and hasAVX2 tell which assembly kernels the CPU and GOTRAIN_CPU
// (package internal/cpufeat) allow.
var (
	hasAVX512 = cpufeat.HasAVX512F
	hasAVX2   = cpufeat.HasAVX2FMA
)

// Blocking for this machine (Sapphire Rapids: 48 KiB L1d, 2 MiB L2 per core):
// the KC×NR micro-panel of B (32 KiB) stays in L1 and the MC×KC block of A
// (about 0.5 MiB) in L2. BenchmarkVariants compared the 14x32, 8x48 and 6x64
// register blocks with KC 192-384 and A blocks of 0.25-1 MiB on 1024³: 14x32
// was best, and its KC/MC settings were within 5% of each other.
var (
	kernelAVX512 = &kernel{name: "avx512", mr: 14, nr: 32, kc: 256, mc: 504, nc: 4096, fn: kernAVX512x14x32, rows: kernAVX512x14x32Rows, asmPack: true}
	kernelAVX2   = &kernel{name: "avx2", mr: 6, nr: 16, kc: 256, mc: 240, nc: 4096, fn: kernAVX2x6x16, rows: kernAVX2x6x16Rows, avx2Pack: true}
)

// asmKernels lists the assembly kernels in order of preference.
func asmKernels() []*kernel {
	var ks []*kernel
	if hasAVX512 {
		ks = append(ks, kernelAVX512)
	}
	if hasAVX2 {
		ks = append(ks, kernelAVX2)
	}
	return ks
}

// packPanel packs one micro-panel with AVX-512 when kr allows it: kc steps of
// lanes values, of which the first h come from src[off:] (step p, lane l reads
// src[off+p·ld+l] if contiguous, else src[off+l·ld+p]) and the rest are zero.
// It reports false, having done nothing, when the Go code must do it.
func packPanel(kr *kernel, dst, src []float32, off, ld, kc, h, lanes int, contiguous bool) bool {
	if !kr.asmPack || lanes > 32 || kc == 0 {
		return false
	}
	load := uint32(1)<<h - 1
	store := uint32(1)<<lanes - 1
	lo, hi := uint16(load), uint16(load>>16)
	slo, shi := uint16(store), uint16(store>>16)
	if contiguous {
		packCopyAVX512(&dst[0], &src[off], ld, kc, lo, hi, slo, shi, lanes*4)
		return true
	}
	// Full panels use 16x16 register transposes for the first kc16 steps,
	// the rest (and edge panels) gathers, whose indices are 32-bit.
	kc16 := 0
	if h == lanes && (lanes == 14 && kr.mr == 14 || lanes == 32 && kr.nr == 32) {
		kc16 = kc &^ 15
	}
	if kc16 < kc && (h-1)*ld+kc > math.MaxInt32 {
		return false
	}
	if kc16 > 0 {
		if lanes == 14 {
			packTrans14AVX512(&dst[0], &src[off], ld, kc16)
		} else {
			packTrans16AVX512(&dst[0], &src[off], ld, kc16)
			packTrans16AVX512(&dst[16], &src[off+16*ld], ld, kc16)
		}
		if kc16 == kc {
			return true
		}
	}
	done := kc16
	var idx [32]int32
	for l := 0; l < h; l++ {
		idx[l] = int32(l * ld)
	}
	packGatherAVX512(&dst[done*lanes], &src[off+done], &idx, kc-done, lo, hi, slo, shi, lanes*4)
	return true
}
