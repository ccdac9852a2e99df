//go:build unix

package atomicfile

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// tree describes a folder as "name=content" for files and "name/" for
// folders, depth first in name order.
func tree(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if d.IsDir() {
			out = append(out, rel+"/")
			return nil
		}
		b, _ := os.ReadFile(p)
		out = append(out, rel+"="+string(b))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// oldSet makes parent/set holding an old data set and a notes file.
func oldSet(t *testing.T, parent string) string {
	t.Helper()
	dst := filepath.Join(parent, "set")
	os.MkdirAll(filepath.Join(dst, "iq"), 0o755)
	os.MkdirAll(filepath.Join(dst, "notes"), 0o755)
	os.WriteFile(filepath.Join(dst, "features.csv"), []byte("old rows"), 0o644)
	os.WriteFile(filepath.Join(dst, "iq", "a.sigmf-data"), []byte("old iq"), 0o644)
	os.WriteFile(filepath.Join(dst, "notes", "n.txt"), []byte("mine"), 0o644)
	os.Chmod(dst, 0o750)
	return dst
}

var errBuild = errors.New("synthesis failed")

func TestReplaceDir(t *testing.T) {
	oldTree := []string{"features.csv=old rows", "iq/", "iq/a.sigmf-data=old iq", "notes/", "notes/n.txt=mine"}
	build := func(dir string) error {
		return os.WriteFile(filepath.Join(dir, "features.csv"), []byte("new rows"), 0o644)
	}
	tests := []struct {
		name  string
		old   bool
		keep  func(string) bool
		build func(string) error
		panic bool
		err   error
		want  []string
	}{
		{"new folder", false, nil, build, false, nil, []string{"features.csv=new rows"}},
		{"replaced folder", true, nil, build, false, nil, []string{"features.csv=new rows"}},
		{"replaced, notes kept", true, func(n string) bool { return n == "notes" || n == "features.csv" }, build, false, nil,
			[]string{"features.csv=new rows", "notes/", "notes/n.txt=mine"}},
		{"build fails", true, nil, func(dir string) error { build(dir); return errBuild }, false, errBuild, oldTree},
		{"build panics", true, nil, func(dir string) error { build(dir); panic("boom") }, true, nil, oldTree},
		{"build fails, no folder before", false, nil, func(dir string) error { build(dir); return errBuild }, false, errBuild, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			parent := t.TempDir()
			dst := filepath.Join(parent, "set")
			if tt.old {
				oldSet(t, parent)
			}
			var err error
			func() {
				defer func() {
					if r := recover(); (r != nil) != tt.panic {
						t.Errorf("recovered %v, want a panic: %v", r, tt.panic)
					}
				}()
				err = ReplaceDirKeeping(dst, tt.keep, tt.build)
			}()
			if err != tt.err {
				t.Errorf("error %v, want %v", err, tt.err)
			}
			if tt.want == nil {
				if _, err := os.Stat(dst); !errors.Is(err, os.ErrNotExist) {
					t.Errorf("the folder exists after a failed first build: %v", err)
				}
			} else if got := tree(t, dst); !slices.Equal(got, tt.want) {
				t.Errorf("folder holds %q, want %q", got, tt.want)
			}
			if n := names(t, parent); len(n) > 1 || len(n) == 1 && n[0] != "set" {
				t.Errorf("parent holds %q, want only set (no temporary folder)", n)
			}
			if st, err := os.Stat(dst); err == nil && tt.old && st.Mode().Perm() != 0o750 {
				t.Errorf("folder mode %v, want the old 0750", st.Mode())
			}
		})
	}
}

func TestReplaceDirKeepsLinkedFilesIntact(t *testing.T) {
	// A kept file is carried as a hard link: the old folder is never
	// changed before the swap, and after it the content is the same file.
	parent := t.TempDir()
	dst := oldSet(t, parent)
	before, _ := os.Stat(filepath.Join(dst, "notes", "n.txt"))
	err := ReplaceDirKeeping(dst, func(n string) bool { return n == "notes" }, func(dir string) error {
		if got := tree(t, dst); len(got) != 5 {
			t.Errorf("the old folder changed during build: %q", got)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	after, err := os.Stat(filepath.Join(dst, "notes", "n.txt"))
	if err != nil || !os.SameFile(before, after) {
		t.Errorf("kept file: %v, same file %v", err, err == nil && os.SameFile(before, after))
	}
}

func TestReplaceDirFallbackSwap(t *testing.T) {
	// Where the system cannot exchange two names, two renames swap them.
	parent := t.TempDir()
	dst := oldSet(t, parent)
	tmp := filepath.Join(parent, ".set.tmp-1")
	os.Mkdir(tmp, 0o755)
	os.WriteFile(filepath.Join(tmp, "features.csv"), []byte("new rows"), 0o644)
	if err := swapByRenames(tmp, dst); err != nil {
		t.Fatal(err)
	}
	if got := tree(t, dst); !slices.Equal(got, []string{"features.csv=new rows"}) {
		t.Errorf("swapped folder holds %q", got)
	}
	if got := tree(t, tmp); len(got) != 5 {
		t.Errorf("the old content is not at the temporary name: %q", got)
	}
	// A failed second rename puts the old folder back.
	if err := swapByRenames(filepath.Join(parent, "missing"), dst); err == nil {
		t.Error("swap with a missing new folder succeeded")
	}
	if got := tree(t, dst); !slices.Equal(got, []string{"features.csv=new rows"}) {
		t.Errorf("after a failed swap the folder holds %q", got)
	}
	if n := names(t, parent); !slices.Equal(n, []string{".set.tmp-1", "set"}) {
		t.Errorf("parent holds %q", n)
	}
}

func TestReplaceDirRefusesAFile(t *testing.T) {
	parent := t.TempDir()
	file := filepath.Join(parent, "set")
	os.WriteFile(file, []byte("x"), 0o644)
	built := false
	err := ReplaceDir(file, func(string) error { built = true; return nil })
	if err == nil || !strings.Contains(err.Error(), file) || built {
		t.Errorf("ReplaceDir over a file: %v (built %v), want an error naming it before any build", err, built)
	}
	if n := names(t, parent); !slices.Equal(n, []string{"set"}) {
		t.Errorf("parent holds %q", n)
	}
}

func TestReplaceDirDotPath(t *testing.T) {
	parent := t.TempDir()
	dst := oldSet(t, parent)
	t.Chdir(dst)
	if err := ReplaceDir(".", func(dir string) error {
		return os.WriteFile(filepath.Join(dir, "features.csv"), []byte("new rows"), 0o644)
	}); err != nil {
		t.Fatal(err)
	}
	if got := tree(t, dst); !slices.Equal(got, []string{"features.csv=new rows"}) {
		t.Errorf("folder holds %q", got)
	}
}

func TestExchange(t *testing.T) {
	parent := t.TempDir()
	a, b := filepath.Join(parent, "a"), filepath.Join(parent, "b")
	os.Mkdir(a, 0o755)
	os.Mkdir(b, 0o755)
	os.WriteFile(filepath.Join(a, "f"), []byte("a"), 0o644)
	os.WriteFile(filepath.Join(b, "f"), []byte("b"), 0o644)
	err := exchange(a, b)
	if errors.Is(err, errors.ErrUnsupported) {
		t.Skipf("no atomic exchange here (ReplaceDir uses two renames): %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	if read(a, "f") != "b" || read(b, "f") != "a" {
		t.Errorf("after the exchange a holds %q, b %q", read(a, "f"), read(b, "f"))
	}
}
