//go:build !amd64 || purego

package fft

// kernelsBuilt tells whether this build has the assembly kernels.
const kernelsBuilt = false

// useAVX2 is false where no vector kernel exists.
var useAVX2 = false

func radix4AVX2(y, x *complex128, m, s int, tw *complex128) {}

func radix2AVX2(y, x *complex128, s int) {}

func powerUnpackAVX2(dst *float64, z, tw *complex128, h, batch int, c *[2][4]float64) {}

func halfFirstAVX2(y *complex128, x *complex64, m int, tw *complex128) {}

func radix4LastAVX2(y, x *complex128, s int) {}
