//go:build !amd64 || purego || noasm

package gemm

// bf16KernelOK is false where no assembly is built: GemmBF16Batch widens.
func bf16KernelOK() bool { return false }

// bf16Kern14x32 is never called without the assembly kernels.
func bf16Kern14x32(kp int, a, b *uint32, c *float32, ldc int, acc bool) {
	panic("gemm: no bfloat16 kernel in this build")
}

// packPairsAsm reports false: the Go code packs every panel.
func packPairsAsm(dst []uint32, src []uint16, off, ld, kp, h, lanes int) bool { return false }

// packDwordsAsm reports false: the Go code packs every panel.
func packDwordsAsm(dst []uint32, src []uint16, off, ld, kp, h, lanes int) bool { return false }

// bf16Kern14x32To16 is never called without the assembly kernels.
func bf16Kern14x32To16(kp int, a, b *uint32, c *uint16, ldc int) {
	panic("gemm: no bfloat16 kernel in this build")
}

// bf16KernRowsTo16 has no kernels without the assembly.
var bf16KernRowsTo16 [bf16MR]func(kp int, a, b *uint32, c *uint16, ldc int)
