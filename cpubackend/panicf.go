package cpubackend

import "github.com/pkg/errors"

// panicf panics with an error carrying a stack trace, as GoMLX's internal
// exceptions.Panicf does; GoMLX's graph layer recovers it into an error.
func panicf(format string, args ...any) {
	panic(errors.Errorf(format, args...))
}
