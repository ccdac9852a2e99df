//go:build unix

package data

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// fifoFedBy makes a FIFO and feeds it from r on a goroutine until the
// reader closes it.
func fifoFedBy(t *testing.T, r io.Reader) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(p, 0o600); err != nil {
		t.Skipf("no FIFO: %v", err)
	}
	go func() {
		w, err := os.OpenFile(p, os.O_WRONLY, 0)
		if err != nil {
			return
		}
		defer w.Close()
		_, _ = io.Copy(w, r)
	}()
	return p
}

// within fails the test if f does not return within d (an endless input
// read without a cap never returns).
func within(t *testing.T, d time.Duration, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); f() }()
	select {
	case <-done:
	case <-time.After(d):
		t.Fatalf("still reading after %v", d)
	}
}

// TestLoadCSVRefusesEndlessFIFO checks that a FIFO fed without end is read
// up to the cap, then refused.
func TestLoadCSVRefusesEndlessFIFO(t *testing.T) {
	p := fifoFedBy(t, &rowsReader{n: -1})
	var err error
	within(t, time.Minute, func() { _, err = LoadCSV(p, CSVOptions{MaxBytes: 4 << 20}) })
	if !errors.Is(err, ErrTooLarge) {
		t.Errorf("endless FIFO: %v", err)
	}
}
