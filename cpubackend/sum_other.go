//go:build !amd64 || purego || noasm

package cpubackend

// hasSumAVX2 is false where the AVX2 loops are not built.
var hasSumAVX2 = false

// sum32Groups has no assembly here: sum32Add's Go loop adds every element.
func sum32Groups(s *[32]float32, x []float32) int { return 0 }

// sum32Finish combines the running sums (sum32FinishGo).
func sum32Finish(s *[32]float32) float32 { return sum32FinishGo(s) }
