//go:build unix

package moe

import (
	"os"
	"path/filepath"
	"testing"
)

// TestPlotsReplacedNotRewritten checks that WritePlots replaces old PNGs
// by a rename (a reader of an old file, here a hard link to it, keeps the
// old bytes) instead of truncating them in place.
func TestPlotsReplacedNotRewritten(t *testing.T) {
	dir := t.TempDir()
	names := []string{PlotTrainingMetrics, PlotExpertActivations, PlotDeviceDistribution}
	for _, n := range names {
		if err := os.WriteFile(filepath.Join(dir, n), []byte("old"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Link(filepath.Join(dir, n), filepath.Join(dir, n+".reader")); err != nil {
			t.Fatal(err)
		}
	}
	history := []EpochRecord{{Epoch: 1, Step: 10, TrainLoss: 2, ValLoss: 2.1, ValAccuracy: 0.3, Seconds: 1, Load: []float64{0.6, 0.4}},
		{Epoch: 2, Step: 20, TrainLoss: 1, ValLoss: 1.2, ValAccuracy: 0.6, Seconds: 1, Load: []float64{0.5, 0.5}}}
	files, err := WritePlots(dir, history, []bool{true, true}, 1)
	if err != nil || len(files) != 3 {
		t.Fatalf("WritePlots: %v, %v", files, err)
	}
	for _, n := range names {
		if b, _ := os.ReadFile(filepath.Join(dir, n+".reader")); string(b) != "old" {
			t.Errorf("%s: the old file was rewritten in place, not replaced", n)
		}
		if b, _ := os.ReadFile(filepath.Join(dir, n)); len(b) < 100 || string(b[1:4]) != "PNG" {
			t.Errorf("%s: not a PNG (%d bytes)", n, len(b))
		}
	}
}
