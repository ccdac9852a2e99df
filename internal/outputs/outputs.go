// Package outputs guards the files a command writes before it computes
// them, and lets a command write an output to its standard output through
// the same path-based writers as a file.
//
// [Check] refuses an output that cannot be written or that names one of
// the command's inputs; [NewPipe] gives a path (a pipe, written as any
// FIFO is by internal/atomicfile) whose bytes are copied to a writer.
package outputs

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"sync"

	"github.com/gotrain/gotrain/internal/atomicfile"
)

// Check returns an error when out cannot be written (atomicfile.Check: a
// directory, a socket, a missing folder) or when out names the same
// regular file as one of inputs, which map what each input is (such as
// "--data") to its path: writing it would destroy the input. Inputs that
// do not exist or are not regular files (a FIFO, /dev/stdin) are not
// compared. The error names the input by what it is.
func Check(out string, inputs map[string]string) error {
	if err := atomicfile.Check(out); err != nil {
		return err
	}
	whats := make([]string, 0, len(inputs))
	for what := range inputs {
		whats = append(whats, what)
	}
	sort.Strings(whats) // the same input named first on every run
	for _, what := range whats {
		in := inputs[what]
		if fi, err := os.Stat(in); err != nil || !fi.Mode().IsRegular() {
			continue
		}
		if same, _ := atomicfile.SameFile(in, out); same {
			return fmt.Errorf("%s is the input %s: refusing to overwrite it", out, what)
		}
	}
	return nil
}

// Pipe is a path whose bytes are copied to a writer: a command's output
// named "-" is written to Path by the library's writers and reaches
// standard output. Close ends the copy.
type Pipe struct {
	w    *os.File
	done chan error
	once sync.Once
	err  error
}

// NewPipe returns a Pipe copying to dst until Close.
func NewPipe(dst io.Writer) (*Pipe, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("outputs: pipe: %w", err)
	}
	p := &Pipe{w: w, done: make(chan error, 1)}
	go func() {
		_, err := io.Copy(dst, r)
		_ = r.Close()
		p.done <- err
	}()
	return p, nil
}

// Path is the name to write to: /dev/fd/N of the pipe's write end.
func (p *Pipe) Path() string { return fmt.Sprintf("/dev/fd/%d", p.w.Fd()) }

// Close closes the pipe's write end and waits until everything written
// has been copied; it returns the copy's error (a full disk behind the
// destination). Writers that opened Path must have closed it.
func (p *Pipe) Close() error {
	p.once.Do(func() { // a second Close returns the first's error
		werr := p.w.Close()
		if p.err = <-p.done; p.err == nil && werr != nil && !errors.Is(werr, os.ErrClosed) {
			p.err = werr
		}
	})
	return p.err
}
