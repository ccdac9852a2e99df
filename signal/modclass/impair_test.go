package modclass

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/gotrain/gotrain/signal/impair"
)

// TestGenerateWithImpairments generates a data set with an impairment
// recipe: impairments.jsonl holds every record's drawn parameters (a
// function of the seed and the row), the files do not depend on the
// worker count, and the features differ from the unimpaired data set's.
func TestGenerateWithImpairments(t *testing.T) {
	var r impair.Recipe
	r.CFO.Probability, r.CFO.OffsetHz = 1, impair.Range{Min: -500, Max: 500}
	r.Fading.Probability, r.Fading.K, r.Fading.DopplerHz = 0.5, impair.Range{Min: 0, Max: 5}, impair.Range{Min: 1, Max: 20}
	r.Interference.Probability, r.Interference.SIRdB, r.Interference.OffsetHz = 0.5, impair.Range{Min: 10, Max: 20}, impair.Range{Min: 30e3, Max: 30e3}
	r.Quantize.Probability, r.Quantize.Bits, r.Quantize.FullScale = 1, 8, 4
	var files [][]byte
	var lines [][]byte
	for _, w := range []int{1, 3} {
		dir := filepath.Join(t.TempDir(), "ds")
		o := small(3)
		o.Workers, o.Impairments = w, &r
		if _, err := Generate(dir, o, false); err != nil {
			t.Fatalf("workers %d: %v", w, err)
		}
		files = append(files, read(t, filepath.Join(dir, FeaturesFile)))
		lines = append(lines, read(t, filepath.Join(dir, ImpairmentsFile)))
	}
	if !bytes.Equal(files[0], files[1]) || !bytes.Equal(lines[0], lines[1]) {
		t.Fatal("the impaired data set depends on the worker count")
	}
	sc := bufio.NewScanner(bytes.NewReader(lines[0]))
	n, withInterference := 0, 0
	for sc.Scan() {
		var line struct {
			Row         int           `json:"row"`
			Label       string        `json:"label"`
			Impairments impair.Params `json:"impairments"`
		}
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			t.Fatal(err)
		}
		want := r.Draw(3, uint64(n))
		if line.Row != n || line.Impairments.CFO == nil || *line.Impairments.CFO != *want.CFO || line.Impairments.Quantize == nil {
			t.Fatalf("line %d: %s, want the draw %+v", n, sc.Bytes(), want)
		}
		if line.Impairments.Interference != nil {
			withInterference++
		}
		n++
	}
	if n != 12 || withInterference == 0 || withInterference == n {
		t.Fatalf("%d lines (want 12), %d with interference", n, withInterference)
	}
	dir := filepath.Join(t.TempDir(), "plain")
	if _, err := Generate(dir, small(3), false); err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(read(t, filepath.Join(dir, FeaturesFile)), files[0]) {
		t.Fatal("the impairments changed no feature")
	}
	if _, err := os.Stat(filepath.Join(dir, ImpairmentsFile)); !os.IsNotExist(err) {
		t.Fatal("a data set without impairments has an impairments.jsonl")
	}
	bad := r
	bad.CFO.Probability = 3
	o := small(3)
	o.Impairments = &bad
	if _, err := Generate(filepath.Join(t.TempDir(), "bad"), o, false); err == nil {
		t.Fatal("a bad recipe was accepted")
	}
}
