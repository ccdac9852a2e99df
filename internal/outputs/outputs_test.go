package outputs

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCheck(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.csv")
	if err := os.WriteFile(in, []byte("a\n1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.csv")
	if err := os.Symlink(in, link); err != nil {
		t.Fatal(err)
	}
	inputs := map[string]string{"--data": in, "--missing": filepath.Join(dir, "none.csv"), "--dev": os.DevNull}
	tests := []struct {
		name, out string
		want      string // a part of the error; "" for none
	}{
		{"new file", filepath.Join(dir, "out.csv"), ""},
		{"the input", in, "is the input --data: refusing to overwrite it"},
		{"the input through a link", link, "is the input --data"},
		{"the input by another path", dir + "/./in.csv", "is the input --data"},
		{"a directory", dir, "is a directory"},
		{"a missing folder", filepath.Join(dir, "no", "out.csv"), "folder"},
		{"a device named as an input too", os.DevNull, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Check(tt.out, inputs)
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("Check(%s) = %v, want nil", tt.out, err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Fatalf("Check(%s) = %v, want an error containing %q", tt.out, err, tt.want)
			}
		})
	}
	if b, _ := os.ReadFile(in); string(b) != "a\n1\n" {
		t.Fatalf("the input changed: %q", b)
	}
}

// errWriter fails every write, as a full disk behind standard output.
type errWriter struct{}

func (errWriter) Write([]byte) (int, error) { return 0, errors.New("no space left on device") }

func TestPipe(t *testing.T) {
	var got bytes.Buffer
	p, err := NewPipe(&got)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(p.Path(), os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Repeat("prediction\n0.5\n", 10000) // more than a pipe buffer
	if _, err := io.WriteString(f, want); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if err := p.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := p.Close(); err != nil { // a second Close neither blocks nor fails
		t.Fatalf("second Close: %v", err)
	}
	if got.String() != want {
		t.Fatalf("copied %d bytes, want %d", got.Len(), len(want))
	}

	p, err = NewPipe(errWriter{})
	if err != nil {
		t.Fatal(err)
	}
	f, err = os.OpenFile(p.Path(), os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.WriteString(f, "x") // the reader fails and stops reading
	_ = f.Close()
	if err := p.Close(); err == nil || !strings.Contains(err.Error(), "no space") {
		t.Fatalf("Close = %v, want the copy's error", err)
	}
}
