//go:build unix

package text

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// letters reads "abc" for ever.
type letters struct{}

func (letters) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = "abc"[i%3]
	}
	return len(p), nil
}

// TestLoadTextRefusesEndlessFIFO checks that a corpus FIFO fed without end
// is read up to the cap, then refused.
func TestLoadTextRefusesEndlessFIFO(t *testing.T) {
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
		_, _ = io.Copy(w, letters{})
	}()
	done := make(chan error, 1)
	go func() { _, err := LoadTextMax(p, 8<<20); done <- err }()
	select {
	case err := <-done:
		if !errors.Is(err, ErrTooLarge) {
			t.Errorf("endless FIFO: %v", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("still reading the FIFO after a minute")
	}
}
