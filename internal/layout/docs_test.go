package layout

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestReliabilityNamesExistingTests checks that every test and fuzz
// target docs/RELIABILITY.md names as the proof of a guarantee exists, so
// that the document cannot go on citing a test that was renamed or
// removed.
func TestReliabilityNamesExistingTests(t *testing.T) {
	root := filepath.Join("..", "..")
	doc, err := os.ReadFile(filepath.Join(root, "docs", "RELIABILITY.md"))
	if err != nil {
		t.Fatal(err)
	}
	defined := map[string]bool{}
	funcRE := regexp.MustCompile(`(?m)^func ((?:Test|Fuzz)[A-Za-z0-9_]+)\(`)
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "cpubackend") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(p, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for _, m := range funcRE.FindAllSubmatch(b, -1) {
			defined[string(m[1])] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	named := regexp.MustCompile("`((?:Test|Fuzz)[A-Za-z0-9_]+)`").FindAllSubmatch(doc, -1)
	if len(named) < 20 {
		t.Fatalf("docs/RELIABILITY.md names %d tests; the pattern must be broken", len(named))
	}
	for _, m := range named {
		if name := string(m[1]); !defined[name] {
			t.Errorf("docs/RELIABILITY.md names %s, which no test file defines", name)
		}
	}
}
