//go:build unix

package modclass

import (
	"bytes"
	stdcontext "context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// snapshot reads every file under dir as "relative path" → content.
func snapshot(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		out[rel], err = os.ReadFile(p)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// cancelAfter returns options whose Progress cancels the context after k
// records, as Ctrl-C would part way through.
func cancelAfter(o DatasetOptions, k int) (stdcontext.Context, DatasetOptions) {
	ctx, cancel := stdcontext.WithCancel(stdcontext.Background())
	o.Workers = 1
	o.Progress = func(done, total int) {
		if done >= k {
			cancel()
		}
	}
	return ctx, o
}

// TestGenerateInterruptedReplaceKeepsOldSet checks that a data set
// replaced with force and interrupted part way leaves the old data set
// (and the user's other files) exactly as they were, and no temporary
// folder.
func TestGenerateInterruptedReplaceKeepsOldSet(t *testing.T) {
	parent := t.TempDir()
	dir := filepath.Join(parent, "set")
	o := small(1)
	o.IQ = true
	if _, err := Generate(dir, o, false); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	before := snapshot(t, dir)
	ctx, o2 := cancelAfter(small(2), 3)
	_, err := GenerateContext(ctx, dir, o2, true)
	if !errors.Is(err, stdcontext.Canceled) {
		t.Errorf("interrupted run: %v, want an error wrapping the cancellation", err)
	}
	after := snapshot(t, dir)
	if len(after) != len(before) {
		t.Errorf("the folder holds %d files after the interrupted replace, %d before", len(after), len(before))
	}
	for name, b := range before {
		if !bytes.Equal(after[name], b) {
			t.Errorf("%s changed or vanished", name)
		}
	}
	if d, err := Load(dir); err != nil || d.Info.Options.Seed != 1 {
		t.Errorf("the old data set does not load: %v", err)
	}
	if n, _ := os.ReadDir(parent); len(n) != 1 {
		t.Errorf("the parent holds %d entries, want only the data set (no temporary folder)", len(n))
	}
	// Uninterrupted, the same replace keeps notes.txt and takes the new set.
	if _, err := Generate(dir, small(2), true); err != nil {
		t.Fatal(err)
	}
	if d, err := Load(dir); err != nil || d.Info.Options.Seed != 2 {
		t.Errorf("after the replace: %v", err)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "notes.txt")); err != nil || string(b) != "keep" {
		t.Errorf("notes.txt after the replace: %q %v", b, err)
	}
}

// TestGenerateInterruptedFirstRunLeavesNothing checks that an interrupted
// first run leaves no folder, so the next run is not refused as "not
// empty".
func TestGenerateInterruptedFirstRunLeavesNothing(t *testing.T) {
	parent := t.TempDir()
	dir := filepath.Join(parent, "set")
	ctx, o := cancelAfter(small(1), 2)
	if _, err := GenerateContext(ctx, dir, o, false); !errors.Is(err, stdcontext.Canceled) {
		t.Errorf("interrupted run: %v", err)
	}
	if n, _ := os.ReadDir(parent); len(n) != 0 {
		t.Errorf("the parent holds %v after an interrupted first run", n)
	}
	if _, err := Generate(dir, small(1), false); err != nil {
		t.Errorf("the next run: %v", err)
	}
}

// TestPlotsWriteThroughCharDevice checks that --png-confusion and
// --png-snr to a character device write through it and keep it.
func TestPlotsWriteThroughCharDevice(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x")
	if err := syscall.Mknod(path, syscall.S_IFCHR|0o666, 1<<8|3); err != nil {
		if os.Geteuid() == 0 {
			t.Skipf("mknod: %v", err)
		}
		path = "/dev/null" // only root could replace it
	}
	e := &Eval{Classes: []string{"bpsk", "qpsk"}, Rows: 4, Correct: 3, Accuracy: 0.75, Confusion: [][]int{{2, 0}, {1, 1}},
		PerSNR: []SNRBin{{SNRdB: 0, Rows: 2, Accuracy: 0.5, PerClass: []float64{1, 0}}, {SNRdB: 10, Rows: 2, Accuracy: 1, PerClass: []float64{1, 1}}}}
	for name, write := range map[string]func(string, *Eval, string) error{"confusion": WriteConfusionPNG, "snr": WriteSNRPNG} {
		if err := write(path, e, "test"); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if st, err := os.Lstat(path); err != nil || st.Mode()&fs.ModeCharDevice == 0 {
			t.Fatalf("%s: after the write %v, %v; want a character device", name, st.Mode(), err)
		}
	}
	// A folder is refused, and left empty.
	dir := t.TempDir()
	if err := WriteConfusionPNG(dir, e, "test"); err == nil {
		t.Error("a folder as the PNG path was accepted")
	}
	if n, _ := os.ReadDir(dir); len(n) != 0 {
		t.Errorf("the folder holds %v", n)
	}
}
