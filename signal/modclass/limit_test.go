package modclass

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/gotrain/gotrain/internal/readlimit"
)

// TestLoadRefusesFeatureFileBeyondCap checks that a feature file larger
// than the cap (the 2 GiB default, as a sparse file, or a given one) is
// refused by its size with an error naming it, not read or cut at the cap.
func TestLoadRefusesFeatureFileBeyondCap(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, FeaturesFile)
	rows := "label,snr_db_true,x\n" + strings.Repeat("qpsk,10,1.5\n", 10)
	if err := os.WriteFile(p, []byte(rows), 0o644); err != nil {
		t.Fatal(err)
	}
	if d, err := LoadMax(dir, int64(len(rows))); err != nil || d.Rows != 10 {
		t.Fatalf("at the cap: %v", err)
	}
	if _, err := LoadMax(dir, int64(len(rows))-1); !errors.Is(err, readlimit.ErrTooLarge) || !strings.Contains(err.Error(), p+" is larger than the") {
		t.Errorf("one byte over the cap: %v", err)
	}
	if err := os.Truncate(p, DefaultMaxCSVBytes+1); err != nil {
		t.Skipf("no sparse file: %v", err)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := Load(dir)
	runtime.ReadMemStats(&after)
	if !errors.Is(err, readlimit.ErrTooLarge) || !strings.Contains(err.Error(), "larger than the 2 GiB limit") {
		t.Errorf("2 GiB + 1 byte: %v", err)
	}
	if n := after.TotalAlloc - before.TotalAlloc; n > 1<<20 {
		t.Errorf("%d bytes allocated to refuse it", n)
	}
}

// TestLoadRefusesTooManyClasses checks that a data set of more classes
// than MaxClasses (whose confusion matrix would hold their square) is
// refused, by its dataset.json or by its rows.
func TestLoadRefusesTooManyClasses(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	b.WriteString("label,snr_db_true,x\n")
	for i := range MaxClasses + 1 {
		fmt.Fprintf(&b, "c%d,10,1\n", i)
	}
	if err := os.WriteFile(filepath.Join(dir, FeaturesFile), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(dir); err == nil || !strings.Contains(err.Error(), "MaxClasses") {
		t.Errorf("rows of %d classes: %v; want a refusal", MaxClasses+1, err)
	}
	classes := make([]string, MaxClasses+1)
	for i := range classes {
		classes[i] = fmt.Sprintf("c%d", i)
	}
	info, _ := json.Marshal(Info{Format: infoFormat, Classes: classes})
	if err := os.WriteFile(filepath.Join(dir, FeaturesFile), []byte("label,snr_db_true,x\nc0,10,1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, InfoFile), info, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(dir); err == nil || !strings.Contains(err.Error(), "MaxClasses") {
		t.Errorf("dataset.json of %d classes: %v; want a refusal", MaxClasses+1, err)
	}
}
