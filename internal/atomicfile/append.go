package atomicfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// OpenAppend opens the file at path for appending, creating it (0666 less
// the umask) when it does not exist: for logs that a resumed run
// continues. A FIFO or character device is opened for writing; a
// directory, a socket or another special file is refused as [Write]
// refuses it. Appends are not atomic: a crash in the middle of a write can
// leave a partial last line, which readers of the log must expect.
func OpenAppend(path string) (*os.File, error) {
	t, err := resolve(path)
	if err != nil {
		return nil, wrap(path, err)
	}
	flag := os.O_WRONLY | os.O_APPEND | os.O_CREATE
	if t.through {
		flag = os.O_WRONLY
	}
	f, err := os.OpenFile(t.path, flag, 0o666)
	if err != nil {
		return nil, fmt.Errorf("opening %s: %w", path, bare(err))
	}
	return f, nil
}

// SameFile reports whether the paths a and b name the same file (after
// symbolic links, as os.SameFile decides it): a command refuses an output
// that is one of its inputs. A b that does not exist is not a's file; an a
// that cannot be examined is an error.
func SameFile(a, b string) (bool, error) {
	sa, err := os.Stat(a)
	if err != nil {
		return false, err
	}
	sb, err := os.Stat(b)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return os.SameFile(sa, sb), nil
}

// CreateNew creates the file path for appending, failing with an error
// that wraps fs.ErrExist when something already has that name: for a log
// that must never overwrite or continue another's, such as a TensorBoard
// event file. It gets the usual permission bits (0666 less the umask).
func CreateNew(path string) (*os.File, error) {
	if path == "" {
		return nil, wrap(path, errors.New("no file name given"))
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE|os.O_EXCL, 0o666)
	if err != nil {
		return nil, fmt.Errorf("creating %s: %w", path, bare(err))
	}
	return f, nil
}
