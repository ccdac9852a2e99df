//go:build amd64 && !purego && !noasm

package gemm

import (
	"unsafe"

	"github.com/gotrain/gotrain/internal/cpufeat"
)

//go:generate go run gen_bf16.go

// bf16Kern14x32 computes the float32 tile C[0:14, 0:32] = Σ_p A_p·B_p over
// kp steps of packed panels (A: 14 bfloat16 pairs a step, B: 32), added to
// C's contents when acc is set; ldc is in elements (bf16_amd64.s, written
// by gen_bf16.go).
//
//go:noescape
func bf16Kern14x32(kp int, a, b *uint32, c *float32, ldc int, acc bool)

// bf16Kern14x32To16 is bf16Kern14x32 storing the tile's sums over C as
// bfloat16, truncated (the top half of each float32).
//
//go:noescape
func bf16Kern14x32To16(kp int, a, b *uint32, c *uint16, ldc int)

// The bfloat16 micro-kernels of a partial tile's first h rows, h < 14
// (gen_bf16.go's kernelRows), by h.
//
//go:noescape
func bf16Kern1x32To16(kp int, a, b *uint32, c *uint16, ldc int)

//go:noescape
func bf16Kern2x32To16(kp int, a, b *uint32, c *uint16, ldc int)

//go:noescape
func bf16Kern3x32To16(kp int, a, b *uint32, c *uint16, ldc int)

//go:noescape
func bf16Kern4x32To16(kp int, a, b *uint32, c *uint16, ldc int)

//go:noescape
func bf16Kern5x32To16(kp int, a, b *uint32, c *uint16, ldc int)

//go:noescape
func bf16Kern6x32To16(kp int, a, b *uint32, c *uint16, ldc int)

//go:noescape
func bf16Kern7x32To16(kp int, a, b *uint32, c *uint16, ldc int)

//go:noescape
func bf16Kern8x32To16(kp int, a, b *uint32, c *uint16, ldc int)

//go:noescape
func bf16Kern9x32To16(kp int, a, b *uint32, c *uint16, ldc int)

//go:noescape
func bf16Kern10x32To16(kp int, a, b *uint32, c *uint16, ldc int)

//go:noescape
func bf16Kern11x32To16(kp int, a, b *uint32, c *uint16, ldc int)

//go:noescape
func bf16Kern12x32To16(kp int, a, b *uint32, c *uint16, ldc int)

//go:noescape
func bf16Kern13x32To16(kp int, a, b *uint32, c *uint16, ldc int)

// bf16KernRowsTo16 are the partial tiles' kernels, by their rows.
var bf16KernRowsTo16 = [bf16MR]func(kp int, a, b *uint32, c *uint16, ldc int){
	nil, bf16Kern1x32To16, bf16Kern2x32To16, bf16Kern3x32To16, bf16Kern4x32To16, bf16Kern5x32To16, bf16Kern6x32To16,
	bf16Kern7x32To16, bf16Kern8x32To16, bf16Kern9x32To16, bf16Kern10x32To16, bf16Kern11x32To16, bf16Kern12x32To16,
	bf16Kern13x32To16,
}

// bf16Peak runs n rounds of 24 independent VDPBF16PS (the benchmark of the
// machine's bfloat16 peak).
//
//go:noescape
func bf16Peak(n int)

// bf16KernelOK tells whether the CPU and GOTRAIN_CPU allow the VDPBF16PS
// kernel.
func bf16KernelOK() bool { return cpufeat.HasAVX512BF16 }

// bf16PackPairs packs kp steps of a panel from pairs of rows (bf16_amd64.s):
// step p interleaves the words of rows 2p and 2p+1 of src (ld elements
// apart) under the load mask, lane l of the result being their words l, and
// stores the lanes of storeLo (lanes 0-15) and storeHi (16-31), step bytes
// apart.
//
//go:noescape
func bf16PackPairs(dst *uint32, src *uint16, ld, kp int, load uint32, storeLo, storeHi uint16, step int)

// packPairsAsm packs kp steps of a panel of lanes 32-bit lanes whose first
// h lanes interleave two rows of src: step p reads src[off+2p·ld+l] and
// src[off+(2p+1)·ld+l]; the other lanes are zero. It reports false, having
// done nothing, when the Go code must do it.
func packPairsAsm(dst []uint32, src []uint16, off, ld, kp, h, lanes int) bool {
	if !cpufeat.HasAVX512BF16 || kp == 0 || lanes > 32 || h > lanes {
		return false
	}
	_ = src[off+(2*kp-1)*ld+h-1] // the last word read
	_ = dst[kp*lanes-1]
	store := uint32(1)<<lanes - 1
	bf16PackPairs(&dst[0], &src[off], ld, kp, uint32(1)<<h-1, uint16(store), uint16(store>>16), 4*lanes)
	return true
}

// packDwordsAsm packs kp steps of a panel of lanes 32-bit lanes whose first
// h lanes read pairs along rows of src: step p, lane l is the pair at
// src[off+l·ld+2p]; the other lanes are zero. These are 32-bit transposes,
// which Sgemm's AVX-512 packing does. It reports false, having done
// nothing, when the Go code must do it (an odd ld).
func packDwordsAsm(dst []uint32, src []uint16, off, ld, kp, h, lanes int) bool {
	if !cpufeat.HasAVX512BF16 || kp == 0 || ld%2 != 0 {
		return false
	}
	n := (h-1)*ld/2 + kp
	_ = src[off+2*n-1]
	fv := unsafe.Slice((*float32)(unsafe.Pointer(&src[off])), n)
	dv := unsafe.Slice((*float32)(unsafe.Pointer(&dst[0])), kp*lanes)
	return packPanel(kernelAVX512, dv, fv, 0, ld/2, kp, h, lanes, false)
}
