//go:build !amd64 || purego || noasm

package cpubackend

// hasTransposeAVX2 is false where the AVX2 tiles are not built.
var hasTransposeAVX2 = false

// transposeTiles8 has no assembly here: transposeFloat32's Go loops do the
// work.
func transposeTiles8(dst, src []float32, do, so, rowStride, colStride, rows8, cols8 int) bool {
	return false
}
