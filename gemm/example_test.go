package gemm_test

import (
	"fmt"
	"math"

	"github.com/gotrain/gotrain/gemm"
)

// A DotGeneral with one batch axis, lhs [batch, m, k] and rhs [batch, n, k]
// contracting the last axis of both, is a strided batch with B transposed.
func ExampleSgemmBatch() {
	const batch, m, n, k = 2, 2, 3, 2
	lhs := []float32{ // [2, 2, 2]
		1, 2,
		3, 4,

		1, 0,
		0, 1,
	}
	rhs := []float32{ // [2, 3, 2]
		1, 0,
		0, 1,
		1, 1,

		2, 3,
		4, 5,
		6, 7,
	}
	out := make([]float32, batch*m*n) // [2, 2, 3]
	err := gemm.SgemmBatch(false, true, m, n, k, 1, lhs, k, rhs, k, 0, out, n, batch, m*k, n*k, m*n)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(out[:6])
	fmt.Println(out[6:])
	// Output:
	// [1 2 3 3 4 7]
	// [2 4 6 3 5 7]
}

// Bad arguments are errors, not panics.
func ExampleSgemm_error() {
	c := make([]float32, 4)
	err := gemm.Sgemm(false, false, 2, 2, 3, 1, make([]float32, 5), 3, make([]float32, 6), 2, 0, c, 2)
	fmt.Println(err)
	// Output:
	// gemm: invalid arguments: A has 5 elements, needs 6 (2x3, ld 3, batch 1, stride 0)
}

// bfloat16 matrices are given as their bits (the top half of a float32);
// the products are exact and summed in float32, on VDPBF16PS where the
// CPU has AVX-512 BF16.
func ExampleGemmBF16() {
	bf16 := func(v ...float32) []uint16 {
		s := make([]uint16, len(v))
		for i, x := range v {
			s[i] = uint16(math.Float32bits(x) >> 16)
		}
		return s
	}
	a := bf16(1, 2, 3, 0.5, 0.25, -1) // 2x3
	b := bf16(1, 0, 0, 1, 2, 2)       // 3x2
	c := make([]float32, 4)
	if err := gemm.GemmBF16(false, false, 2, 2, 3, a, 3, b, 2, c, 2); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(c)
	// Output:
	// [7 8 -1.5 -1.75]
}
