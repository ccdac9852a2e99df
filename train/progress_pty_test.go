//go:build linux

package train

import (
	"fmt"
	"os"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// openPTY opens a pseudo-terminal pair, or skips the test.
func openPTY(t *testing.T) (master, slave *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	t.Cleanup(func() { m.Close() })
	if err := unix.IoctlSetPointerInt(int(m.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Skipf("unlocking the pseudo-terminal: %v", err)
	}
	n, err := unix.IoctlGetInt(int(m.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Skipf("pseudo-terminal number: %v", err)
	}
	s, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("opening the pseudo-terminal: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return m, s
}

// On a terminal, auto mode draws the progress bar.
func TestProgressAutoOnTerminal(t *testing.T) {
	master, slave := openPTY(t)
	if !IsTerminal(slave) {
		t.Fatal("a pseudo-terminal is not taken for a terminal")
	}
	p := newProgress(ProgressAuto, slave, 0, 0, 10)
	if _, ok := p.(*barProgress); !ok {
		t.Fatalf("auto on a terminal gave %T, want the bar", p)
	}
	p.update(ProgressStatus{Step: 5, Total: 10, Loss: 0.5, SamplesPerSec: 100})
	p.finish(ProgressStatus{Step: 10, Total: 10, Loss: 0.25, SamplesPerSec: 100})
	if err := master.SetReadDeadline(time.Now().Add(5 * time.Second)); err != nil {
		t.Skipf("cannot bound the read from the terminal: %v", err)
	}
	buf := make([]byte, 4096)
	n, err := master.Read(buf)
	if err != nil || n == 0 {
		t.Fatalf("read %d bytes from the terminal: %v", n, err)
	}
}
