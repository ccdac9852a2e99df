//go:build !amd64 || purego || noasm

package cpubackend

import "github.com/gomlx/gomlx/backends"

// Without the assembly the Go loops of bf16vec.go do all the elements.

func vecWidenBF16(dst []float32, src []uint16) int { return 0 }

func vecNarrowBF16(dst []uint16, src []float32) int { return 0 }

func vecTruncBF16(x []float32) int { return 0 }

func vecBinaryBF16(op backends.OpType, dst, a, b []uint16, as, bs *float32) int { return 0 }

func vecLogisticForBF16(dst, a []float32) int { return 0 }
