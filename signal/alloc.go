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

// skewed returns count slices of n values (capacity n) from one
// allocation, each skew values after the previous one's end.
func skewed[T any](count, n, skew int) [][]T {
	all := make([]T, count*(n+skew))
	out := make([][]T, count)
	for i := range out {
		lo := i * (n + skew)
		out[i] = all[lo : lo+n : lo+n]
	}
	return out
}
