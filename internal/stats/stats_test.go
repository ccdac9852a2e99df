package stats

import (
	"slices"
	"testing"
)

func TestMedian(t *testing.T) {
	for _, c := range []struct {
		in   []float64
		want float64
	}{
		{nil, 0},
		{[]float64{3}, 3},
		{[]float64{3, 1}, 2},
		{[]float64{5, 1, 3}, 3},
		{[]float64{4, 1, 3, 2}, 2.5},
		{[]float64{-1, 7, 7, 0, 100}, 7},
	} {
		in := slices.Clone(c.in)
		if got := Median(in); got != c.want {
			t.Errorf("Median(%v) = %v, want %v", c.in, got, c.want)
		}
		if !slices.Equal(in, c.in) {
			t.Errorf("Median(%v) reordered its input to %v", c.in, in)
		}
		s := slices.Clone(c.in)
		slices.Sort(s)
		if got := SortedMedian(s); got != c.want {
			t.Errorf("SortedMedian(%v) = %v, want %v", s, got, c.want)
		}
	}
}
