package modclass

import (
	"errors"
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
