package readlimit

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// endless reads the same byte for ever, like /dev/zero.
type endless struct{}

func (endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'x'
	}
	return len(p), nil
}

func TestBytes(t *testing.T) {
	for n, want := range map[int64]string{
		0: "0 bytes", 1023: "1023 bytes", 1024: "1 KiB", 1 << 30: "1 GiB", 3 << 29: "1.5 GiB",
		1000000: "976.6 KiB (1000000 bytes)", 1<<30 + 1: "1 GiB (1073741825 bytes)",
	} {
		if got := Bytes(n); got != want {
			t.Errorf("Bytes(%d) = %q, want %q", n, got, want)
		}
	}
}

// TestReaderStopsEndlessInput checks that an endless input fails after
// the cap with the error naming the input, the cap and the option, and
// that an input of exactly the cap reads whole.
func TestReaderStopsEndlessInput(t *testing.T) {
	b, err := io.ReadAll(NewReader(endless{}, 1<<20, "in.csv", "CSVOptions.MaxBytes"))
	var le *Error
	if !errors.As(err, &le) || !errors.Is(err, ErrTooLarge) || len(b) != 1<<20 {
		t.Fatalf("%d bytes, %v; want 1 MiB and an *Error", len(b), err)
	}
	if want := "in.csv is larger than the 1 MiB limit; raise it with CSVOptions.MaxBytes"; err.Error() != want {
		t.Errorf("error %q, want %q", err, want)
	}
	for _, n := range []int{0, 1, 4096, 4097} {
		b, err := io.ReadAll(NewReader(bytes.NewReader(make([]byte, n)), 4096, "x", "X"))
		if (err != nil) != (n > 4096) || n <= 4096 && len(b) != n {
			t.Errorf("%d bytes under a cap of 4096: read %d, %v", n, len(b), err)
		}
	}
}

// TestReadFile checks the cap on a regular file (by its size, before
// reading) and the errors of other files.
func TestReadFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f")
	if err := os.WriteFile(p, make([]byte, 100), 0o644); err != nil {
		t.Fatal(err)
	}
	if b, err := ReadFile(p, 100, "X"); err != nil || len(b) != 100 {
		t.Errorf("100 bytes under 100: %d, %v", len(b), err)
	}
	if _, err := ReadFile(p, 99, "X"); !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), p) {
		t.Errorf("100 bytes under 99: %v", err)
	}
	if _, err := ReadFile(dir, 99, "X"); err == nil || !strings.Contains(err.Error(), "directory") {
		t.Errorf("directory: %v", err)
	}
	if _, err := ReadFile(filepath.Join(dir, "absent"), 99, "X"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("absent: %v", err)
	}
}

func TestCheck(t *testing.T) {
	if n, err := Check(0, 7, "O"); n != 7 || err != nil {
		t.Errorf("Check(0) = %d, %v", n, err)
	}
	if n, err := Check(5, 7, "O"); n != 5 || err != nil {
		t.Errorf("Check(5) = %d, %v", n, err)
	}
	if _, err := Check(-1, 1<<30, "CSVOptions.MaxBytes"); err == nil || err.Error() != "CSVOptions.MaxBytes -1: want a positive number of bytes (0: the default 1 GiB)" {
		t.Errorf("Check(-1) = %v", err)
	}
}

func TestRename(t *testing.T) {
	_, err := io.ReadAll(NewReader(endless{}, 10, "in", "CSVOptions.MaxBytes"))
	err = Rename(fmt.Errorf("forest: %w", err), "DataSpec.MaxBytes")
	if err.Error() != "forest: in is larger than the 10 bytes limit; raise it with DataSpec.MaxBytes" {
		t.Errorf("renamed: %v", err)
	}
	if Rename(nil, "X") != nil || Rename(io.EOF, "X") != io.EOF {
		t.Error("Rename changed an error without a cap")
	}
}

func TestRenameKeepsTheChain(t *testing.T) {
	_, err := io.ReadAll(NewReader(endless{}, 10, "in", "A"))
	err = Rename(fmt.Errorf("x: %w", err), "B")
	var le *Error
	if !errors.Is(err, ErrTooLarge) || !errors.As(err, &le) || le.Option != "B" {
		t.Errorf("chain: %v, %+v", err, le)
	}
}

// TestReaderWithoutPracticalLimit checks that a cap of math.MaxInt64 (no
// cap in practice) reads everything instead of overflowing.
func TestReaderWithoutPracticalLimit(t *testing.T) {
	r := NewReader(strings.NewReader("hello, world"), math.MaxInt64, "in", "opt")
	b, err := io.ReadAll(r)
	if err != nil || string(b) != "hello, world" {
		t.Errorf("ReadAll = %q, %v", b, err)
	}
}
