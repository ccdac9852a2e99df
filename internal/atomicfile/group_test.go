//go:build unix

package atomicfile

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
)

// pair stages a SigMF-like pair, data first and meta last.
func pair(t *testing.T, g *Group, dir, data, meta string) {
	t.Helper()
	if err := g.Stage(filepath.Join(dir, "r.sigmf-data"), []byte(data)); err != nil {
		t.Fatal(err)
	}
	if err := g.Stage(filepath.Join(dir, "r.sigmf-meta"), []byte(meta)); err != nil {
		t.Fatal(err)
	}
}

// read returns a file's content, "" for a missing one.
func read(dir, name string) string {
	b, _ := os.ReadFile(filepath.Join(dir, name))
	return string(b)
}

func TestGroupCommitsInStagingOrder(t *testing.T) {
	dir := t.TempDir()
	var order []string
	rename = func(from, to string) error {
		order = append(order, filepath.Base(to))
		return os.Rename(from, to)
	}
	defer func() { rename = os.Rename }()
	var g Group
	defer g.Abort()
	pair(t, &g, dir, "samples", "meta")
	if read(dir, "r.sigmf-data") != "" || read(dir, "r.sigmf-meta") != "" {
		t.Error("a staged file is visible before Commit")
	}
	if err := g.Commit(); err != nil {
		t.Fatal(err)
	}
	if want := []string{"r.sigmf-data", "r.sigmf-meta"}; !slices.Equal(order, want) {
		t.Errorf("renamed %q, want %q (the meta file last)", order, want)
	}
	if read(dir, "r.sigmf-data") != "samples" || read(dir, "r.sigmf-meta") != "meta" {
		t.Error("committed files hold the wrong content")
	}
	if n := names(t, dir); !slices.Equal(n, []string{"r.sigmf-data", "r.sigmf-meta"}) {
		t.Errorf("folder holds %q", n)
	}
	if err := g.Commit(); err == nil {
		t.Error("a second Commit succeeded")
	}
}

func TestGroupRollsBackOnFailure(t *testing.T) {
	tests := []struct {
		name     string
		old      bool // an old pair is there
		failMeta bool // the meta rename fails (else the data rename)
	}{
		{"new pair, meta fails", false, true},
		{"old pair, meta fails", true, true},
		{"old pair, data fails", true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			if tt.old {
				os.WriteFile(filepath.Join(dir, "r.sigmf-data"), []byte("old samples"), 0o644)
				os.WriteFile(filepath.Join(dir, "r.sigmf-meta"), []byte("old meta"), 0o644)
			}
			fail := "r.sigmf-data"
			if tt.failMeta {
				fail = "r.sigmf-meta"
			}
			rename = func(from, to string) error {
				if filepath.Base(to) == fail {
					return &os.LinkError{Op: "rename", Old: from, New: to, Err: syscall.EIO}
				}
				return os.Rename(from, to)
			}
			defer func() { rename = os.Rename }()
			var g Group
			defer g.Abort()
			pair(t, &g, dir, "new samples", "new meta")
			err := g.Commit()
			if !errors.Is(err, syscall.EIO) {
				t.Fatalf("Commit: %v, want the rename's error", err)
			}
			wantData, wantMeta := "", ""
			if tt.old {
				wantData, wantMeta = "old samples", "old meta"
			}
			if d, m := read(dir, "r.sigmf-data"), read(dir, "r.sigmf-meta"); d != wantData || m != wantMeta {
				t.Errorf("after the failed commit: data %q, meta %q; want %q, %q", d, m, wantData, wantMeta)
			}
			var want []string
			if tt.old {
				want = []string{"r.sigmf-data", "r.sigmf-meta"}
			}
			if n := names(t, dir); !slices.Equal(n, want) {
				t.Errorf("folder holds %q, want %q (no temporary file or backup)", n, want)
			}
		})
	}
}

func TestGroupAbortLeavesTargets(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "r.sigmf-meta"), []byte("old meta"), 0o644)
	var g Group
	pair(t, &g, dir, "new samples", "new meta")
	if err := g.Stage(filepath.Join(dir, "r.sigmf-data"), nil); err == nil {
		t.Error("a path staged twice was accepted")
	}
	g.Abort()
	if n := names(t, dir); !slices.Equal(n, []string{"r.sigmf-meta"}) || read(dir, "r.sigmf-meta") != "old meta" {
		t.Errorf("after Abort the folder holds %q", n)
	}
	if err := g.Stage(filepath.Join(dir, "x"), nil); err == nil {
		t.Error("Stage after Abort succeeded")
	}
}

func TestGroupWritesFIFOThroughAtCommit(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "r.sigmf-data")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("no FIFO here: %v", err)
	}
	r, err := os.OpenFile(fifo, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var g Group
	defer g.Abort()
	pair(t, &g, dir, "samples", "meta")
	if err := g.Commit(); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, len("samples"))
	if _, err := r.Read(got); err != nil || string(got) != "samples" {
		t.Errorf("the FIFO got %q (%v)", got, err)
	}
	if st, err := os.Lstat(fifo); err != nil || st.Mode()&os.ModeNamedPipe == 0 {
		t.Errorf("the FIFO was replaced: %v %v", st.Mode(), err)
	}
	if read(dir, "r.sigmf-meta") != "meta" {
		t.Error("the meta file was not written")
	}
}
