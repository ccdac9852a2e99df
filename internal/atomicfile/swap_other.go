//go:build !linux

package atomicfile

import "errors"

// exchange cannot swap two names atomically on this system: ReplaceDir
// falls back to two renames.
func exchange(a, b string) error { return errors.ErrUnsupported }
