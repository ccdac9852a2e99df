//go:build unix

package bench

import (
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestReportFilesReplacedNotRewritten checks that the Markdown and PNG
// reports replace an old file by a rename (a reader of the old file, here
// a hard link to it, keeps the old bytes) instead of truncating it in
// place, and that a character device is written through and kept.
func TestReportFilesReplacedNotRewritten(t *testing.T) {
	res := []Result{{Workload: "matmul", Device: "cpu", Available: true, MedianMS: 1, SpeedUp: 1, Parity: "reference"},
		{Workload: "matmul", Device: "go", Available: true, MedianMS: 2, SpeedUp: 0.5, Parity: "identical"}}
	dev := filepath.Join(t.TempDir(), "null")
	if err := syscall.Mknod(dev, syscall.S_IFCHR|0o666, 1<<8|3); err != nil {
		if os.Geteuid() == 0 {
			t.Skipf("mknod: %v", err)
		}
		dev = "/dev/null" // only root could replace it
	}
	for name, write := range map[string]func(string) error{
		"md":  func(p string) error { return WriteMarkdownFile(p, res, "header") },
		"png": func(p string) error { return WritePNG(p, res) },
	} {
		dir := t.TempDir()
		path, reader := filepath.Join(dir, "report."+name), filepath.Join(dir, "reader")
		if err := os.WriteFile(path, []byte("old report"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Link(path, reader); err != nil {
			t.Fatal(err)
		}
		if err := write(path); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if b, _ := os.ReadFile(reader); string(b) != "old report" {
			t.Errorf("%s: the old file was rewritten in place (%d bytes), not replaced", name, len(b))
		}
		if b, _ := os.ReadFile(path); len(b) == 0 || string(b) == "old report" {
			t.Errorf("%s: the report was not written", name)
		}
		if n, _ := os.ReadDir(dir); len(n) != 2 {
			t.Errorf("%s: the folder holds %d entries, want 2 (no temporary file)", name, len(n))
		}
		if err := write(dev); err != nil {
			t.Fatalf("%s to a device: %v", name, err)
		}
		if st, err := os.Lstat(dev); err != nil || st.Mode()&fs.ModeCharDevice == 0 {
			t.Fatalf("%s: after the write %v, %v; want a character device", name, st.Mode(), err)
		}
	}
}
