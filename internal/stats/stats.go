// Package stats holds the small statistics gotrain's packages share, so
// that each is defined once: the median of timings and of spectra.
package stats

import "slices"

// Median returns the median of xs (0 for none): the middle value, or the
// mean of the two middle values for an even count. xs is not modified.
func Median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	return SortedMedian(s)
}

// SortedMedian returns the median of s, which must be sorted in
// increasing order (0 for none). It does not allocate.
func SortedMedian(s []float64) float64 {
	n := len(s)
	switch {
	case n == 0:
		return 0
	case n%2 == 1:
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}
