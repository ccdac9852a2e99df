//go:build !amd64 || purego || noasm

package cpubackend

// kernelsBuilt tells whether this build has the assembly loops.
const kernelsBuilt = false

// hasFastmathAVX512 is false where the AVX-512 loops are not built.
var hasFastmathAVX512 = false

// logisticFloat32 sets dst[j] = 1/(1 + e^−a[j]) (see logisticFloat32Go).
func logisticFloat32(dst, a []float32) { logisticFloat32Go(dst, a[:len(dst)]) }

// tanhFloat32 sets dst[j] = tanh(a[j]) (see tanhFloat32Go).
func tanhFloat32(dst, a []float32) { tanhFloat32Go(dst, a[:len(dst)]) }

// expFloat32 sets dst[j] = e^a[j] (see expFloat32Go).
func expFloat32(dst, a []float32) { expFloat32Go(dst, a[:len(dst)]) }

// hasFastmathAVX2 is false where the AVX2 loops are not built.
var hasFastmathAVX2 = false
