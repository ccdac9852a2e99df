//go:build unix

package atomicfile

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// names lists a folder's entries.
func names(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range es {
		out = append(out, e.Name())
	}
	return out
}

// withUmask runs fn under umask m (process-wide: these tests are not parallel).
func withUmask(m int, fn func()) {
	old := syscall.Umask(m)
	defer syscall.Umask(old)
	fn()
}

func TestWritePermissions(t *testing.T) {
	tests := []struct {
		name  string
		umask int
		old   fs.FileMode // 0: no file before
		want  fs.FileMode
	}{
		{"new file, umask 022", 0o022, 0, 0o644},
		{"new file, umask 077", 0o077, 0, 0o600},
		{"new file, umask 002", 0o002, 0, 0o664},
		{"replaced file keeps 0600", 0o022, 0o600, 0o600},
		{"replaced file keeps 0755", 0o022, 0o755, 0o755},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "out.txt")
			if tt.old != 0 {
				if err := os.WriteFile(path, []byte("old"), 0o600); err != nil {
					t.Fatal(err)
				}
				if err := os.Chmod(path, tt.old); err != nil {
					t.Fatal(err)
				}
			}
			withUmask(tt.umask, func() {
				if err := WriteFile(path, []byte("new")); err != nil {
					t.Fatal(err)
				}
			})
			st, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			if st.Mode() != tt.want {
				t.Errorf("mode %v, want %v", st.Mode(), tt.want)
			}
			if b, _ := os.ReadFile(path); string(b) != "new" {
				t.Errorf("content %q, want %q", b, "new")
			}
		})
	}
}

func TestWriteKeepsOldFileOnFailure(t *testing.T) {
	errFn := errors.New("the model does not encode")
	tests := []struct {
		name  string
		fn    func(w io.Writer) error
		panic bool
	}{
		{"error before writing", func(io.Writer) error { return errFn }, false},
		{"error after a partial write", func(w io.Writer) error {
			w.Write(bytes.Repeat([]byte("x"), 3*bufSize)) // past the buffer: bytes reach the file
			return errFn
		}, false},
		{"panic after a partial write", func(w io.Writer) error {
			w.Write(bytes.Repeat([]byte("x"), 3*bufSize))
			panic("boom")
		}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "model.bin")
			if err := os.WriteFile(path, []byte("good"), 0o644); err != nil {
				t.Fatal(err)
			}
			var err error
			func() {
				defer func() {
					if r := recover(); (r != nil) != tt.panic {
						t.Errorf("recovered %v; want a panic: %v", r, tt.panic)
					}
				}()
				err = Write(path, tt.fn)
			}()
			if !tt.panic && err != errFn {
				t.Errorf("error %v, want fn's error as it is", err)
			}
			if b, _ := os.ReadFile(path); string(b) != "good" {
				t.Errorf("the previous file holds %q, want %q", b, "good")
			}
			if n := names(t, dir); !slices.Equal(n, []string{"model.bin"}) {
				t.Errorf("folder holds %q, want only model.bin (no temporary file)", n)
			}
		})
	}
}

func TestWriteReplacesWholeFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "out.csv")
	if err := os.WriteFile(path, []byte("a much longer old content\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	big := bytes.Repeat([]byte("0123456789"), bufSize) // several buffers
	if err := Write(path, func(w io.Writer) error { _, err := w.Write(big); return err }); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); !bytes.Equal(b, big) {
		t.Errorf("file holds %d bytes, want %d", len(b), len(big))
	}
	if n := names(t, dir); !slices.Equal(n, []string{"out.csv"}) {
		t.Errorf("folder holds %q", n)
	}
}

func TestWriteThroughFIFO(t *testing.T) {
	path := filepath.Join(t.TempDir(), "pipe")
	if err := syscall.Mkfifo(path, 0o644); err != nil {
		t.Skipf("no FIFO here: %v", err)
	}
	// Opened read-write, the FIFO has a reader at once and never blocks
	// the writer's open; the read deadline ends the test if the FIFO was
	// replaced instead of written.
	r, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	want := bytes.Repeat([]byte("iq"), 100_000) // more than a pipe's buffer
	got := make([]byte, len(want))
	read := make(chan error, 1)
	r.SetReadDeadline(time.Now().Add(10 * time.Second))
	go func() { _, err := io.ReadFull(r, got); read <- err }()
	if err := WriteFile(path, want); err != nil {
		t.Fatal(err)
	}
	if err := <-read; err != nil {
		t.Fatalf("reading the FIFO: %v", err)
	}
	if !bytes.Equal(got, want) {
		t.Error("the FIFO's reader got other bytes")
	}
	if st, err := os.Lstat(path); err != nil || st.Mode()&fs.ModeNamedPipe == 0 {
		t.Errorf("after the write: %v, %v; want the FIFO still there", st.Mode(), err)
	}
}

func TestWriteThroughCharDevice(t *testing.T) {
	path := filepath.Join(t.TempDir(), "null")
	// A private copy of /dev/null (1, 3) where the test may make one; else
	// /dev/null itself, which only root could replace.
	if err := syscall.Mknod(path, syscall.S_IFCHR|0o666, 1<<8|3); err != nil {
		if os.Geteuid() == 0 {
			t.Skipf("mknod: %v", err)
		}
		path = "/dev/null"
	}
	for _, write := range []func() error{
		func() error { return WriteFile(path, []byte("discarded")) },
		func() error {
			f, err := OpenAppend(path)
			if err != nil {
				return err
			}
			f.WriteString("discarded")
			return f.Close()
		},
	} {
		if err := write(); err != nil {
			t.Fatal(err)
		}
		st, err := os.Lstat(path)
		if err != nil || st.Mode()&fs.ModeCharDevice == 0 {
			t.Fatalf("after the write: %v, %v; want %s still a character device", st.Mode(), err, path)
		}
	}
}

func TestWriteRefusesSpecialFiles(t *testing.T) {
	dir, err := os.MkdirTemp("", "af") // short: a socket's name is limited to ~100 bytes
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	sub := filepath.Join(dir, "sub")
	os.Mkdir(sub, 0o755)
	sock := filepath.Join(dir, "s")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	dangling := filepath.Join(dir, "dangling")
	os.Symlink(filepath.Join(dir, "nothing"), dangling)
	tests := []struct{ name, path, what string }{
		{"directory", sub, "a directory"},
		{"socket", sock, "a socket"},
		{"dangling symbolic link", dangling, "a symbolic link to a missing file"},
	}
	if os.Geteuid() == 0 {
		blk := filepath.Join(dir, "blk")
		if err := syscall.Mknod(blk, syscall.S_IFBLK|0o600, 7<<8|200); err == nil {
			tests = append(tests, struct{ name, path, what string }{"block device", blk, "a block device"})
		}
	}
	before := names(t, dir)
	for _, tt := range tests {
		st0, _ := os.Lstat(tt.path)
		for how, write := range map[string]func() error{
			"Write": func() error { return WriteFile(tt.path, []byte("x")) },
			"Check": func() error { return Check(tt.path) },
			"Group": func() error { var g Group; defer g.Abort(); return g.Stage(tt.path, []byte("x")) },
			"OpenAppend": func() error {
				f, err := OpenAppend(tt.path)
				if err == nil {
					f.Close()
				}
				return err
			},
		} {
			err := write()
			var te *TargetError
			if !errors.As(err, &te) || te.What != tt.what || !strings.Contains(err.Error(), tt.path) {
				t.Errorf("%s: %s: error %v, want a TargetError naming the path and %q", tt.name, how, err, tt.what)
			}
		}
		if st, err := os.Lstat(tt.path); err != nil || st.Mode() != st0.Mode() {
			t.Errorf("%s: changed to %v (%v)", tt.name, st.Mode(), err)
		}
	}
	if after := names(t, dir); !slices.Equal(after, before) {
		t.Errorf("folder holds %q, was %q", after, before)
	}
	if n := names(t, sub); len(n) != 0 {
		t.Errorf("the refused folder holds %q", n)
	}
}

func TestWriteFollowsSymbolicLink(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "models", "v3.model")
	os.Mkdir(filepath.Dir(real), 0o755)
	if err := os.WriteFile(real, []byte("v3"), 0o640); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "current.model")
	if err := os.Symlink("models/v3.model", link); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(link, []byte("v4")); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Lstat(link); err != nil || st.Mode()&fs.ModeSymlink == 0 {
		t.Errorf("the link was replaced: %v %v", st.Mode(), err)
	}
	if b, _ := os.ReadFile(real); string(b) != "v4" {
		t.Errorf("the linked file holds %q, want v4", b)
	}
	if st, _ := os.Stat(real); st.Mode().Perm() != 0o640 {
		t.Errorf("the linked file's mode is %v, want its old 0640", st.Mode())
	}
	if n := names(t, filepath.Dir(real)); !slices.Equal(n, []string{"v3.model"}) {
		t.Errorf("the link's target folder holds %q", n)
	}
}

func TestCheck(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "f")
	os.WriteFile(file, nil, 0o644)
	tests := []struct {
		name, path string
		ok         bool
	}{
		{"new name", filepath.Join(dir, "new"), true},
		{"existing file", file, true},
		{"character device", "/dev/null", true},
		{"folder", dir, false},
		{"missing folder", filepath.Join(dir, "no", "f"), false},
		{"file as folder", filepath.Join(file, "f"), false},
		{"empty name", "", false},
	}
	for _, tt := range tests {
		if err := Check(tt.path); (err == nil) != tt.ok {
			t.Errorf("%s: Check(%q) = %v, want ok %v", tt.name, tt.path, err, tt.ok)
		}
	}
	if n := names(t, dir); !slices.Equal(n, []string{"f"}) {
		t.Errorf("Check wrote %q", n)
	}
}

func TestOpenAppend(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "epochs.jsonl")
	withUmask(0o022, func() {
		for _, line := range []string{"{\"epoch\":1}\n", "{\"epoch\":2}\n"} {
			f, err := OpenAppend(path)
			if err != nil {
				t.Fatal(err)
			}
			f.WriteString(line)
			if err := f.Close(); err != nil {
				t.Fatal(err)
			}
		}
	})
	if b, _ := os.ReadFile(path); string(b) != "{\"epoch\":1}\n{\"epoch\":2}\n" {
		t.Errorf("log holds %q, want both lines", b)
	}
	if st, _ := os.Stat(path); st.Mode() != 0o644 {
		t.Errorf("new log's mode %v, want 0644", st.Mode())
	}
}

// TestCreateNew checks that CreateNew makes a new file with the usual
// permission bits and never opens one that exists.
func TestCreateNew(t *testing.T) {
	path := filepath.Join(t.TempDir(), "events.out.tfevents.1.host")
	withUmask(0o022, func() {
		f, err := CreateNew(path)
		if err != nil {
			t.Fatal(err)
		}
		f.WriteString("first")
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
	})
	if st, _ := os.Stat(path); st.Mode() != 0o644 {
		t.Errorf("new file's mode %v, want 0644", st.Mode())
	}
	if f, err := CreateNew(path); !errors.Is(err, fs.ErrExist) {
		if f != nil {
			f.Close()
		}
		t.Errorf("CreateNew of an existing file: %v, want fs.ErrExist", err)
	}
	if b, _ := os.ReadFile(path); string(b) != "first" {
		t.Errorf("the existing file holds %q after a second CreateNew", b)
	}
	if _, err := CreateNew(""); err == nil {
		t.Error("CreateNew(\"\") succeeded")
	}
}

func TestSameFile(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.csv"), filepath.Join(dir, "b.csv")
	os.WriteFile(a, []byte("x"), 0o644)
	os.WriteFile(b, []byte("x"), 0o644)
	hard, soft := filepath.Join(dir, "hard.csv"), filepath.Join(dir, "soft.csv")
	os.Link(a, hard)
	os.Symlink("a.csv", soft)
	tests := []struct {
		name, a, b string
		same, err  bool
	}{
		{"same path", a, a, true, false},
		{"other spelling", a, filepath.Join(dir, ".", "a.csv"), true, false},
		{"hard link", a, hard, true, false},
		{"symbolic link", a, soft, true, false},
		{"other file, same content", a, b, false, false},
		{"output does not exist", a, filepath.Join(dir, "new.csv"), false, false},
		{"input does not exist", filepath.Join(dir, "none"), a, false, true},
	}
	for _, tt := range tests {
		same, err := SameFile(tt.a, tt.b)
		if same != tt.same || (err != nil) != tt.err {
			t.Errorf("%s: SameFile = %v, %v; want %v, error %v", tt.name, same, err, tt.same, tt.err)
		}
	}
}
