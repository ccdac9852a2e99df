package traintest

import (
	"fmt"
	"math"
	"runtime"
	"testing"
)

// recorder is a testing.TB that records failures; Fatalf ends the goroutine.
type recorder struct {
	testing.TB
	failed bool
	msg    string
}

func (r *recorder) Helper()                      {}
func (r *recorder) Logf(string, ...any)          {}
func (r *recorder) Errorf(f string, args ...any) { r.failed, r.msg = true, fmt.Sprintf(f, args...) }
func (r *recorder) Fatalf(f string, args ...any) { r.Errorf(f, args...); runtime.Goexit() }
func (r *recorder) Fatal(args ...any)            { r.Fatalf("%s", fmt.Sprint(args...)) }

func check(cpu, simplego []float64) *recorder {
	r := &recorder{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		CheckCurvesAgree(r, "case", cpu, simplego, 0.8)
	}()
	<-done
	return r
}

func TestCheckCurvesAgree(t *testing.T) {
	cases := []struct {
		name        string
		cpu, sgo    []float64
		wantFailure bool
	}{
		{"equal and falling", []float64{2, 1.5, 1}, []float64{2, 1.5, 1}, false},
		{"rounding apart", []float64{2, 1.5, 1.00001}, []float64{2, 1.5, 1}, false},
		{"diverged", []float64{2, 1.5, 1.1}, []float64{2, 1.5, 1}, true},
		{"not falling", []float64{2, 1.9, 1.7}, []float64{2, 1.9, 1.7}, true},
		{"NaN", []float64{2, math.NaN(), 1}, []float64{2, 1.5, 1}, true},
		{"lengths differ", []float64{2, 1}, []float64{2}, true},
		{"empty", nil, nil, true},
	}
	for _, c := range cases {
		if r := check(c.cpu, c.sgo); r.failed != c.wantFailure {
			t.Errorf("%s: failed = %v (%q), want %v", c.name, r.failed, r.msg, c.wantFailure)
		}
	}
}

func TestCheckCurveMatches(t *testing.T) {
	cases := []struct {
		name        string
		got, want   []float64
		wantFailure bool
	}{
		{"equal", []float64{2, 1.5}, []float64{2, 1.5}, false},
		{"within 1e-3", []float64{2.0019, 1.5}, []float64{2, 1.5}, false},
		{"beyond 1e-3", []float64{2.0021, 1.5}, []float64{2, 1.5}, true},
		{"a step short", []float64{2}, []float64{2, 1.5}, true},
		{"empty", nil, nil, true},
	}
	for _, c := range cases {
		r := &recorder{}
		done := make(chan struct{})
		go func() {
			defer close(done)
			CheckCurveMatches(r, c.got, c.want, 1e-3)
		}()
		<-done
		if r.failed != c.wantFailure {
			t.Errorf("%s: failed = %v (%q), want %v", c.name, r.failed, r.msg, c.wantFailure)
		}
	}
}
