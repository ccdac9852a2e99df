package signal

// Work buffers that a kernel reads and writes at the same index should
// not start at the same offset within a 4 KiB page: a load whose address
// equals an earlier store's in its low 12 bits waits for that store (the
// CPU's store-to-load check looks at those bits first), which slowed the
// Welch accumulation by a fifth. The helpers below cut several buffers
// from one allocation, each skewed by a few cache lines and a bit from
// the one before.

// skewComplex and skewFloat are the skews, in elements (144 and 136 bytes).
const (
	skewComplex = 9
	skewFloat   = 17
)

// skewedComplex returns count slices of n complex128 values (capacity n)
// from one allocation, each skewComplex values after the previous one's end.
func skewedComplex(count, n int) [][]complex128 {
	all := make([]complex128, count*(n+skewComplex))
	out := make([][]complex128, count)
	for i := range out {
		lo := i * (n + skewComplex)
		out[i] = all[lo : lo+n : lo+n]
	}
	return out
}

// skewedFloat is skewedComplex for float64 values.
func skewedFloat(count, n int) [][]float64 {
	all := make([]float64, count*(n+skewFloat))
	out := make([][]float64, count)
	for i := range out {
		lo := i * (n + skewFloat)
		out[i] = all[lo : lo+n : lo+n]
	}
	return out
}
