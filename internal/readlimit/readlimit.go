// Package readlimit bounds what gotrain's readers take in: a reader that
// fails once its input passes a size cap, a whole-file read that checks a
// regular file's size before reading it, and the error both give, which
// names the input, the cap and the option that raises it. It serves the
// CSV, IDX, corpus and instruction readers, so that a huge or endless
// input (a FIFO, /dev/zero, a gzip bomb) is refused instead of read until
// memory runs out.
package readlimit

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
)

// ErrTooLarge is wrapped by every [*Error].
var ErrTooLarge = errors.New("input larger than its size limit")

// Error is the error of an input larger than its cap.
type Error struct {
	// Name is the input (a file name).
	Name string
	// Limit is the cap in bytes.
	Limit int64
	// Option names the option that raises the cap, such as
	// "CSVOptions.MaxBytes" ("": a fixed cap).
	Option string
}

func (e *Error) Error() string {
	if e.Option == "" {
		return fmt.Sprintf("%s is larger than the %s limit", e.Name, Bytes(e.Limit))
	}
	return fmt.Sprintf("%s is larger than the %s limit; raise it with %s", e.Name, Bytes(e.Limit), e.Option)
}

// Unwrap returns ErrTooLarge.
func (e *Error) Unwrap() error { return ErrTooLarge }

// Bytes writes n bytes for people: "1 GiB", "1.5 MiB", "100 bytes"; a
// size that is not a whole number of its unit also gives the exact count
// ("976.6 KiB (1000000 bytes)").
func Bytes(n int64) string {
	if n < 1024 {
		return strconv.FormatInt(n, 10) + " bytes"
	}
	units := []string{"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"}
	v, u, unit := float64(n)/1024, 0, 1024.0
	for v >= 1024 && u < len(units)-1 {
		v /= 1024
		u++
		unit *= 1024
	}
	short := strconv.FormatFloat(v, 'f', 1, 64)
	s := strings.TrimSuffix(short, ".0") + " " + units[u]
	if r, _ := strconv.ParseFloat(short, 64); r*unit != float64(n) {
		s += " (" + strconv.FormatInt(n, 10) + " bytes)"
	}
	return s
}

// Check returns the cap that max means: def when max is 0, max when
// positive; a negative max is an error naming option.
func Check(max, def int64, option string) (int64, error) {
	switch {
	case max == 0:
		return def, nil
	case max < 0:
		return 0, fmt.Errorf("%s %d: want a positive number of bytes (0: the default %s)", option, max, Bytes(def))
	}
	return max, nil
}

// Reader reads from R and fails with an [*Error] once more than Limit
// bytes have come from it: an input of exactly Limit bytes reads whole.
type Reader struct {
	R      io.Reader
	Limit  int64
	Name   string // for the error
	Option string // for the error
	n      int64
}

// NewReader returns a Reader of r with the cap limit; name and option are
// for its error.
func NewReader(r io.Reader, limit int64, name, option string) *Reader {
	return &Reader{R: r, Limit: limit, Name: name, Option: option}
}

func (r *Reader) Read(p []byte) (int, error) {
	if r.n > r.Limit {
		return 0, &Error{Name: r.Name, Limit: r.Limit, Option: r.Option}
	}
	// Read at most one byte beyond the cap: seeing it is how the cap is
	// known to be passed.
	// (r.Limit - r.n, not r.Limit + 1 - r.n: that overflows at a cap of
	// math.MaxInt64.)
	if left := r.Limit - r.n; int64(len(p)) > left && left < math.MaxInt64 {
		p = p[:left+1]
	}
	n, err := r.R.Read(p)
	r.n += int64(n)
	if r.n > r.Limit {
		return n - int(r.n-r.Limit), &Error{Name: r.Name, Limit: r.Limit, Option: r.Option}
	}
	return n, err
}

// ReadFile reads the file path whole, at most limit bytes of it. A regular
// file's size is checked before anything is read; other files (a FIFO, a
// device) are read through the cap. Errors name path; a file over the cap
// gives an [*Error] naming option.
func ReadFile(path string, limit int64, option string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if st.IsDir() {
		return nil, fmt.Errorf("%s is a directory", path)
	}
	if st.Mode().IsRegular() && st.Size() > limit {
		return nil, &Error{Name: path, Limit: limit, Option: option}
	}
	b, err := io.ReadAll(NewReader(f, limit, path, option))
	if err != nil {
		var le *Error
		if errors.As(err, &le) {
			return nil, err
		}
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	return b, nil
}

// Rename returns err with the [*Error] in its chain, if any, naming
// option as the one that raises the cap (a caller's own option that sets
// the reader's): its message says so, and errors.As and errors.Is see
// through it as through err.
func Rename(err error, option string) error {
	var le *Error
	if !errors.As(err, &le) || le.Option == option {
		return err
	}
	old := le.Error()
	le.Option = option
	return &renamed{msg: strings.Replace(err.Error(), old, le.Error(), 1), err: err}
}

// renamed is an error chain with a cap's option renamed in its message.
type renamed struct {
	msg string
	err error
}

func (r *renamed) Error() string { return r.msg }
func (r *renamed) Unwrap() error { return r.err }
