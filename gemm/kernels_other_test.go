//go:build !amd64 || purego || noasm

package gemm

func hasAVX512Kernel() bool { return false }
func hasAVX2Kernel() bool   { return false }
func fmaPeak512(int)        {}
func fmaPeak256(int)        {}
