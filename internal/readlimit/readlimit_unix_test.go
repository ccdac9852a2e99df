//go:build unix

package readlimit

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestReadFileStopsEndlessFIFO checks that a FIFO fed without end is read
// up to the cap, then refused.
func TestReadFileStopsEndlessFIFO(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("no FIFO: %v", err)
	}
	go func() {
		w, err := os.OpenFile(fifo, os.O_WRONLY, 0)
		if err != nil {
			return
		}
		defer w.Close()
		_, _ = io.Copy(w, endless{}) // until the reader closes
	}()
	if _, err := ReadFile(fifo, 1<<20, "X"); !errors.Is(err, ErrTooLarge) {
		t.Errorf("endless FIFO: %v", err)
	}
}
