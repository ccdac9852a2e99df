package atomicfile

import (
	"errors"
	"fmt"

	"golang.org/x/sys/unix"
)

// exchange swaps the names a and b atomically (renameat2 with
// RENAME_EXCHANGE). It returns an error wrapping errors.ErrUnsupported
// where the kernel or the file system cannot.
func exchange(a, b string) error {
	err := unix.Renameat2(unix.AT_FDCWD, a, unix.AT_FDCWD, b, unix.RENAME_EXCHANGE)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EOPNOTSUPP):
		return fmt.Errorf("exchanging %s and %s: %w (%w)", a, b, errors.ErrUnsupported, err)
	default:
		return err
	}
}
