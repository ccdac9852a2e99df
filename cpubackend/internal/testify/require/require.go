// Package require is the subset of github.com/stretchr/testify/require that
// the tests copied from GoMLX's simplego use: the assertions of package
// assert (cpubackend/internal/testify/assert), which stop the test
// (t.FailNow) when they fail.
package require

import "github.com/gotrain/gotrain/cpubackend/internal/testify/assert"

// TestingT is the part of *testing.T the assertions use.
type TestingT interface {
	Errorf(format string, args ...any)
	FailNow()
}

type helper interface{ Helper() }

// Equal is assert.Equal, then t.FailNow if it failed.
func Equal(t TestingT, expected, actual any, msgAndArgs ...any) {
	if h, ok := t.(helper); ok {
		h.Helper()
	}
	if !assert.Equal(t, expected, actual, msgAndArgs...) {
		t.FailNow()
	}
}

// Equalf is assert.Equalf, then t.FailNow if it failed.
func Equalf(t TestingT, expected, actual any, msg string, args ...any) {
	if h, ok := t.(helper); ok {
		h.Helper()
	}
	if !assert.Equalf(t, expected, actual, msg, args...) {
		t.FailNow()
	}
}

// InDelta is assert.InDelta, then t.FailNow if it failed.
func InDelta(t TestingT, expected, actual any, delta float64, msgAndArgs ...any) {
	if h, ok := t.(helper); ok {
		h.Helper()
	}
	if !assert.InDelta(t, expected, actual, delta, msgAndArgs...) {
		t.FailNow()
	}
}

// NoError is assert.NoError, then t.FailNow if it failed.
func NoError(t TestingT, err error, msgAndArgs ...any) {
	if h, ok := t.(helper); ok {
		h.Helper()
	}
	if !assert.NoError(t, err, msgAndArgs...) {
		t.FailNow()
	}
}

// NoErrorf is assert.NoErrorf, then t.FailNow if it failed.
func NoErrorf(t TestingT, err error, msg string, args ...any) {
	if h, ok := t.(helper); ok {
		h.Helper()
	}
	if !assert.NoErrorf(t, err, msg, args...) {
		t.FailNow()
	}
}

// Error is assert.Error, then t.FailNow if it failed.
func Error(t TestingT, err error, msgAndArgs ...any) {
	if h, ok := t.(helper); ok {
		h.Helper()
	}
	if !assert.Error(t, err, msgAndArgs...) {
		t.FailNow()
	}
}

// True is assert.True, then t.FailNow if it failed.
func True(t TestingT, value bool, msgAndArgs ...any) {
	if h, ok := t.(helper); ok {
		h.Helper()
	}
	if !assert.True(t, value, msgAndArgs...) {
		t.FailNow()
	}
}

// Nil is assert.Nil, then t.FailNow if it failed.
func Nil(t TestingT, object any, msgAndArgs ...any) {
	if h, ok := t.(helper); ok {
		h.Helper()
	}
	if !assert.Nil(t, object, msgAndArgs...) {
		t.FailNow()
	}
}

// NotNil is assert.NotNil, then t.FailNow if it failed.
func NotNil(t TestingT, object any, msgAndArgs ...any) {
	if h, ok := t.(helper); ok {
		h.Helper()
	}
	if !assert.NotNil(t, object, msgAndArgs...) {
		t.FailNow()
	}
}

// Len is assert.Len, then t.FailNow if it failed.
func Len(t TestingT, object any, n int, msgAndArgs ...any) {
	if h, ok := t.(helper); ok {
		h.Helper()
	}
	if !assert.Len(t, object, n, msgAndArgs...) {
		t.FailNow()
	}
}

// Panics is assert.Panics, then t.FailNow if it failed.
func Panics(t TestingT, f func(), msgAndArgs ...any) {
	if h, ok := t.(helper); ok {
		h.Helper()
	}
	if !assert.Panics(t, f, msgAndArgs...) {
		t.FailNow()
	}
}

// NotPanics is assert.NotPanics, then t.FailNow if it failed.
func NotPanics(t TestingT, f func(), msgAndArgs ...any) {
	if h, ok := t.(helper); ok {
		h.Helper()
	}
	if !assert.NotPanics(t, f, msgAndArgs...) {
		t.FailNow()
	}
}
