//go:build unix

package forest

import (
	"bytes"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestSaveFileKeepsCharDevice checks that `forest train --save` to a
// character device (`mknod x c 1 3`, /dev/null) writes through it and
// leaves it a device, as `forest predict --out` does.
func TestSaveFileKeepsCharDevice(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x")
	if err := syscall.Mknod(path, syscall.S_IFCHR|0o666, 1<<8|3); err != nil {
		if os.Geteuid() == 0 {
			t.Skipf("mknod: %v", err)
		}
		path = "/dev/null" // only root could replace it
	}
	f := tinyForest(t, Classification)
	p := &Predictions{Forest: f, Rows: 2, Values: []float64{1, 0}}
	for name, write := range map[string]func() error{
		"SaveFile":  func() error { return f.SaveFile(path) },
		"WriteFile": func() error { return p.WriteFile(path) },
	} {
		if err := write(); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if st, err := os.Lstat(path); err != nil || st.Mode()&fs.ModeCharDevice == 0 {
			t.Fatalf("%s: after the write %v, %v; want a character device", name, st.Mode(), err)
		}
	}
}

// TestSaveFileWritesThroughFIFO checks that a model saved to a named pipe
// reaches its reader, byte for byte, and the pipe stays.
func TestSaveFileWritesThroughFIFO(t *testing.T) {
	path := filepath.Join(t.TempDir(), "pipe")
	if err := syscall.Mkfifo(path, 0o644); err != nil {
		t.Skipf("no FIFO here: %v", err)
	}
	f := tinyForest(t, Regression)
	want := saveBytes(t, f)
	r, err := os.OpenFile(path, os.O_RDWR, 0) // a reader at once; never blocks
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	r.SetReadDeadline(time.Now().Add(10 * time.Second))
	got := make([]byte, len(want))
	read := make(chan error, 1)
	go func() { _, err := io.ReadFull(r, got); read <- err }()
	if err := f.SaveFile(path); err != nil {
		t.Fatal(err)
	}
	if err := <-read; err != nil {
		t.Fatalf("reading the pipe: %v", err)
	}
	if !bytes.Equal(got, want) {
		t.Error("the pipe's reader got another model")
	}
	if st, err := os.Lstat(path); err != nil || st.Mode()&fs.ModeNamedPipe == 0 {
		t.Errorf("after the write %v, %v; want the FIFO kept", st.Mode(), err)
	}
}

// TestSaveFileUsualPermissions checks that a new model file gets 0666 less
// the umask, as os.Create gives (not the 0600 of a temporary file).
func TestSaveFileUsualPermissions(t *testing.T) {
	old := syscall.Umask(0o022)
	defer syscall.Umask(old)
	dir := t.TempDir()
	f := tinyForest(t, Regression)
	for _, name := range []string{"m.model", "p.csv"} {
		path := filepath.Join(dir, name)
		var err error
		if name == "m.model" {
			err = f.SaveFile(path)
		} else {
			err = (&Predictions{Forest: f, Rows: 1, Values: []float64{0.5}}).WriteFile(path)
		}
		if err != nil {
			t.Fatal(err)
		}
		if st, err := os.Stat(path); err != nil || st.Mode() != 0o644 {
			t.Errorf("%s: mode %v (%v), want 0644 under umask 022", name, st.Mode(), err)
		}
	}
}
