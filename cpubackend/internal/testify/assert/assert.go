// Package assert is the subset of github.com/stretchr/testify/assert that the
// tests copied from GoMLX's simplego use, with testify's semantics (Equal is
// testify's ObjectsAreEqual: reflect.DeepEqual, bytes.Equal for []byte;
// InDelta converts both numbers to float64). gotrain does not depend on
// testify; these tests import this package instead, so that they stay
// otherwise as upstream wrote them.
package assert

import (
	"bytes"
	"fmt"
	"math"
	"reflect"
	"time"
)

// TestingT is the part of *testing.T the assertions use.
type TestingT interface {
	Errorf(format string, args ...any)
}

type helper interface{ Helper() }

func markHelper(t TestingT) {
	if h, ok := t.(helper); ok {
		h.Helper()
	}
}

// message formats testify's optional msgAndArgs: a single value, or a format
// and its arguments.
func message(msgAndArgs []any) string {
	switch len(msgAndArgs) {
	case 0:
		return ""
	case 1:
		if s, ok := msgAndArgs[0].(string); ok {
			return s
		}
		return fmt.Sprintf("%+v", msgAndArgs[0])
	default:
		if s, ok := msgAndArgs[0].(string); ok {
			return fmt.Sprintf(s, msgAndArgs[1:]...)
		}
		return fmt.Sprint(msgAndArgs...)
	}
}

// Fail reports a failure with the given text and the optional message.
func Fail(t TestingT, failure string, msgAndArgs ...any) bool {
	markHelper(t)
	if m := message(msgAndArgs); m != "" {
		t.Errorf("%s\n\tMessages: %s", failure, m)
	} else {
		t.Errorf("%s", failure)
	}
	return false
}

// ObjectsAreEqual is testify's equality: reflect.DeepEqual, except that two
// []byte are compared with bytes.Equal.
func ObjectsAreEqual(expected, actual any) bool {
	if expected == nil || actual == nil {
		return expected == actual
	}
	exp, ok := expected.([]byte)
	if !ok {
		return reflect.DeepEqual(expected, actual)
	}
	act, ok := actual.([]byte)
	if !ok {
		return false
	}
	if exp == nil || act == nil {
		return exp == nil && act == nil
	}
	return bytes.Equal(exp, act)
}

func isFunc(v any) bool {
	return v != nil && reflect.TypeOf(v).Kind() == reflect.Func
}

// Equal asserts that expected and actual are equal (ObjectsAreEqual).
func Equal(t TestingT, expected, actual any, msgAndArgs ...any) bool {
	markHelper(t)
	if isFunc(expected) || isFunc(actual) {
		return Fail(t, fmt.Sprintf("Invalid operation: %#v == %#v (cannot take func type as argument)", expected, actual), msgAndArgs...)
	}
	if !ObjectsAreEqual(expected, actual) {
		return Fail(t, fmt.Sprintf("Not equal: \n\texpected: %#v (%T)\n\tactual  : %#v (%T)", expected, expected, actual, actual), msgAndArgs...)
	}
	return true
}

// Equalf is Equal with a format message.
func Equalf(t TestingT, expected, actual any, msg string, args ...any) bool {
	markHelper(t)
	return Equal(t, expected, actual, append([]any{msg}, args...)...)
}

func toFloat(x any) (float64, bool) {
	switch xn := x.(type) {
	case uint:
		return float64(xn), true
	case uint8:
		return float64(xn), true
	case uint16:
		return float64(xn), true
	case uint32:
		return float64(xn), true
	case uint64:
		return float64(xn), true
	case int:
		return float64(xn), true
	case int8:
		return float64(xn), true
	case int16:
		return float64(xn), true
	case int32:
		return float64(xn), true
	case int64:
		return float64(xn), true
	case float32:
		return float64(xn), true
	case float64:
		return xn, true
	case time.Duration:
		return float64(xn), true
	}
	return 0, false
}

// InDelta asserts that two numbers are within delta of each other.
func InDelta(t TestingT, expected, actual any, delta float64, msgAndArgs ...any) bool {
	markHelper(t)
	af, aok := toFloat(expected)
	bf, bok := toFloat(actual)
	if !aok || !bok {
		return Fail(t, "Parameters must be numerical", msgAndArgs...)
	}
	if math.IsNaN(af) && math.IsNaN(bf) {
		return true
	}
	if math.IsNaN(af) {
		return Fail(t, "Expected must not be NaN", msgAndArgs...)
	}
	if math.IsNaN(bf) {
		return Fail(t, fmt.Sprintf("Expected %v with delta %v, but was NaN", expected, delta), msgAndArgs...)
	}
	if dt := af - bf; dt < -delta || dt > delta {
		return Fail(t, fmt.Sprintf("Max difference between %v and %v allowed is %v, but difference was %v", expected, actual, delta, dt), msgAndArgs...)
	}
	return true
}

// NoError asserts that err is nil.
func NoError(t TestingT, err error, msgAndArgs ...any) bool {
	markHelper(t)
	if err != nil {
		return Fail(t, fmt.Sprintf("Received unexpected error:\n%+v", err), msgAndArgs...)
	}
	return true
}

// NoErrorf is NoError with a format message.
func NoErrorf(t TestingT, err error, msg string, args ...any) bool {
	markHelper(t)
	return NoError(t, err, append([]any{msg}, args...)...)
}

// Error asserts that err is not nil.
func Error(t TestingT, err error, msgAndArgs ...any) bool {
	markHelper(t)
	if err == nil {
		return Fail(t, "An error is expected but got nil.", msgAndArgs...)
	}
	return true
}

// True asserts that value is true.
func True(t TestingT, value bool, msgAndArgs ...any) bool {
	markHelper(t)
	if !value {
		return Fail(t, "Should be true", msgAndArgs...)
	}
	return true
}

func isNil(object any) bool {
	if object == nil {
		return true
	}
	v := reflect.ValueOf(object)
	switch v.Kind() {
	case reflect.Chan, reflect.Func, reflect.Interface, reflect.Map, reflect.Pointer, reflect.Slice, reflect.UnsafePointer:
		return v.IsNil()
	}
	return false
}

// Nil asserts that object is nil (or a nil pointer, slice, map, ...).
func Nil(t TestingT, object any, msgAndArgs ...any) bool {
	markHelper(t)
	if !isNil(object) {
		return Fail(t, fmt.Sprintf("Expected nil, but got: %#v", object), msgAndArgs...)
	}
	return true
}

// NotNil asserts that object is not nil.
func NotNil(t TestingT, object any, msgAndArgs ...any) bool {
	markHelper(t)
	if isNil(object) {
		return Fail(t, "Expected value not to be nil.", msgAndArgs...)
	}
	return true
}

// Len asserts that object (a slice, array, map, string or channel) has length n.
func Len(t TestingT, object any, n int, msgAndArgs ...any) bool {
	markHelper(t)
	v := reflect.ValueOf(object)
	switch v.Kind() {
	case reflect.Slice, reflect.Array, reflect.Map, reflect.String, reflect.Chan:
	default:
		return Fail(t, fmt.Sprintf("\"%v\" could not be applied builtin len()", object), msgAndArgs...)
	}
	if l := v.Len(); l != n {
		return Fail(t, fmt.Sprintf("\"%v\" should have %d item(s), but has %d", object, n, l), msgAndArgs...)
	}
	return true
}

func didPanic(f func()) (panicked bool, value any) {
	panicked = true
	defer func() { value = recover() }()
	f()
	panicked = false
	return
}

// Panics asserts that f panics.
func Panics(t TestingT, f func(), msgAndArgs ...any) bool {
	markHelper(t)
	if panicked, value := didPanic(f); !panicked {
		return Fail(t, fmt.Sprintf("func %p should panic\n\tPanic value:\t%#v", f, value), msgAndArgs...)
	}
	return true
}

// NotPanics asserts that f does not panic.
func NotPanics(t TestingT, f func(), msgAndArgs ...any) bool {
	markHelper(t)
	if panicked, value := didPanic(f); panicked {
		return Fail(t, fmt.Sprintf("func %p should not panic\n\tPanic value:\t%v", f, value), msgAndArgs...)
	}
	return true
}
