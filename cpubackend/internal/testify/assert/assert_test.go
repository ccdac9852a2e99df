package assert

import (
	"errors"
	"fmt"
	"math"
	"testing"
)

type recorder struct{ failures []string }

func (r *recorder) Errorf(format string, args ...any) {
	r.failures = append(r.failures, fmt.Sprintf(format, args...))
}

// TestSemantics checks the testify semantics the copied simplego tests rely on.
func TestSemantics(t *testing.T) {
	for _, c := range []struct {
		name string
		ok   bool
		got  func(r *recorder) bool
	}{
		{"Equal slices", true, func(r *recorder) bool { return Equal(r, []int32{1, 2}, []int32{1, 2}) }},
		{"Equal type mismatch", false, func(r *recorder) bool { return Equal(r, int32(1), int64(1)) }},
		{"Equal nil and empty []byte", false, func(r *recorder) bool { return Equal(r, []byte(nil), []byte{}) }},
		{"Equal NaN", false, func(r *recorder) bool { return Equal(r, math.NaN(), math.NaN()) }},
		{"Equal funcs", false, func(r *recorder) bool { return Equal(r, t.Name, t.Name) }},
		{"InDelta float32/float64", true, func(r *recorder) bool { return InDelta(r, float32(1), 1.0000001, 1e-6) }},
		{"InDelta too far", false, func(r *recorder) bool { return InDelta(r, 1.0, 1.1, 1e-2) }},
		{"InDelta both NaN", true, func(r *recorder) bool { return InDelta(r, math.NaN(), math.NaN(), 1) }},
		{"InDelta actual NaN", false, func(r *recorder) bool { return InDelta(r, 1.0, math.NaN(), 1) }},
		{"InDelta not numbers", false, func(r *recorder) bool { return InDelta(r, "1", 1.0, 1) }},
		{"NoError", false, func(r *recorder) bool { return NoError(r, errors.New("x")) }},
		{"Error", false, func(r *recorder) bool { return Error(r, nil) }},
		{"Nil typed nil pointer", true, func(r *recorder) bool { return Nil(r, (*int)(nil)) }},
		{"NotNil", false, func(r *recorder) bool { return NotNil(r, []int(nil)) }},
		{"Len", true, func(r *recorder) bool { return Len(r, []int{1, 2, 3}, 3) }},
		{"Len wrong", false, func(r *recorder) bool { return Len(r, "ab", 3) }},
		{"Panics", true, func(r *recorder) bool { return Panics(r, func() { panic(1) }) }},
		{"NotPanics", false, func(r *recorder) bool { return NotPanics(r, func() { panic(1) }) }},
		{"Equalf message", false, func(r *recorder) bool { return Equalf(r, 1, 2, "case %d", 7) }},
	} {
		r := &recorder{}
		if got := c.got(r); got != c.ok || (len(r.failures) == 0) != c.ok {
			t.Errorf("%s: got %v with failures %q, want %v", c.name, got, r.failures, c.ok)
		}
	}
}
