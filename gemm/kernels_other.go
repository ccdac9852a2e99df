//go:build !amd64 || purego || noasm

package gemm

// kernelsBuilt tells whether this build has the assembly kernels.
const kernelsBuilt = false

// asmKernels is empty where no assembly kernel is built: only the Go path runs.
func asmKernels() []*kernel { return nil }

// packPanel reports false: the Go code packs every panel.
func packPanel(kr *kernel, dst, src []float32, off, ld, kc, h, lanes int, contiguous bool) bool {
	return false
}

// packBRows packs nothing here: the Go code packs every panel.
func packBRows(kr *kernel, dst, b []float32, ldb, pc, kc, jc, nc int) int { return 0 }

// packARows has no assembly here: packA's Go code packs every panel.
func packARows(kr *kernel, dst, a []float32, lda, ic, mc, pc, kc int) int { return 0 }

// packAcrossAVX2 packs nothing here: the Go code packs every panel.
func packAcrossAVX2(kr *kernel, dst, src []float32, off, ld, kc, lanes int) int { return 0 }
