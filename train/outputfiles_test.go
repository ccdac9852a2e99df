//go:build unix

package train

import (
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestReportsReplacedNotRewritten checks that the performance summary
// and the plots replace an old file by a rename (a reader of the old file,
// here a hard link to it, keeps the old bytes) instead of truncating it in
// place.
func TestReportsReplacedNotRewritten(t *testing.T) {
	dir := t.TempDir()
	recs := []map[string]any{{"step": 1.0, "loss": 2.0}, {"step": 2.0, "loss": 1.0}}
	for name, write := range map[string]func(string) error{
		"performance_summary.txt": func(p string) error { return Perf{Steps: 2}.WriteSummary(p) },
		"loss.png": func(p string) error {
			_, err := PlotMetrics(recs, filepath.Dir(p), []PlotSeries{{File: "loss.png", Key: "loss"}})
			return err
		},
	} {
		path, reader := filepath.Join(dir, name), filepath.Join(dir, name+".reader")
		if err := os.WriteFile(path, []byte("old"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Link(path, reader); err != nil {
			t.Fatal(err)
		}
		if err := write(path); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if b, _ := os.ReadFile(reader); string(b) != "old" {
			t.Errorf("%s: the old file was rewritten in place, not replaced", name)
		}
		if b, _ := os.ReadFile(path); len(b) == 0 || string(b) == "old" {
			t.Errorf("%s: not written", name)
		}
	}
}

// TestCheckpointFilesUsualPermissions checks that checkpoints (and the
// files beside them) get 0666 less the umask, as os.Create gives, not the
// 0600 of a temporary file.
func TestCheckpointFilesUsualPermissions(t *testing.T) {
	old := syscall.Umask(0o022)
	defer syscall.Umask(old)
	dir := t.TempDir()
	h := newHarness(t, testConfig(func(c *Config) { c.NoCheckpoint, c.CheckpointDir, c.BatchSize = false, dir, 16 }), synthData(t, 64, false))
	if _, err := h.Run(); err != nil {
		t.Fatal(err)
	}
	n := 0
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		n++
		st, err := os.Stat(p)
		if err != nil {
			return err
		}
		if st.Mode() != 0o644 {
			t.Errorf("%s: mode %v, want 0644 under umask 022", p, st.Mode())
		}
		return nil
	})
	if err != nil || n == 0 {
		t.Fatalf("walking %s: %v, %d files", dir, err, n)
	}
}

// TestMetricsLogSpecialFiles checks that a metrics log on a character
// device writes through and keeps it, and that a folder is refused.
func TestMetricsLogSpecialFiles(t *testing.T) {
	dev := filepath.Join(t.TempDir(), "null")
	if err := syscall.Mknod(dev, syscall.S_IFCHR|0o666, 1<<8|3); err != nil {
		if os.Geteuid() == 0 {
			t.Skipf("mknod: %v", err)
		}
		dev = "/dev/null"
	}
	l, err := OpenMetricsLog(dev)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Write(map[string]any{"step": 1}); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Lstat(dev); err != nil || st.Mode()&fs.ModeCharDevice == 0 {
		t.Errorf("after the log: %v %v; want a character device", st.Mode(), err)
	}
	if _, err := OpenMetricsLog(t.TempDir()); err == nil {
		t.Error("a folder as the metrics log was accepted")
	}
}
