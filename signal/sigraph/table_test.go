package sigraph

import (
	"flag"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gotrain/gotrain/signal"
)

var parityTable = flag.Bool("parity-table", false, "print the graph-vs-CPU parity table of docs/SIGNAL.md (1-s records; slow)")

// TestParityTable prints, for 1-s records of several modulations and SNRs,
// the largest error of every feature of the graph path (simplego, default
// options and each precision option) against the CPU path, as a Markdown table:
//
//	go test -run ParityTable -parity-table -v ./signal/sigraph/
func TestParityTable(t *testing.T) {
	if !*parityTable {
		t.Skip("use -parity-table")
	}
	cfg := signal.Config{SampleRate: testRate}
	type run struct {
		mod string
		snr float64
	}
	runs := []run{{"qpsk", 10}, {"qpsk", -5}, {"16qam", 20}, {"fm", 15}, {"tone", 0}, {"tone", 30}, {"noise", 0}}
	variants := []Options{{}, {MFCCFloat64: true}, {SpectrogramFloat32: true}}
	worst := make([]map[string]FeatureError, len(variants))
	var order []string
	for vi, o := range variants {
		worst[vi] = map[string]FeatureError{}
		e, err := NewWithOptions(graphBackend(t), cfg, 1, o)
		if err != nil {
			t.Fatal(err)
		}
		for i, r := range runs {
			x := record(t, r.mod, r.snr, testRate, uint64(i+1))
			var f signal.Features
			if err := e.Extract(x, &f); err != nil {
				t.Fatal(err)
			}
			for _, d := range Compare(&f, cpuFeatures(t, cfg, x)) {
				if vi == 0 && i == 0 {
					order = append(order, d.Name)
				}
				if w, ok := worst[vi][d.Name]; !ok || d.Err > w.Err {
					worst[vi][d.Name] = d
				}
			}
		}
		e.Close()
	}
	var b strings.Builder
	fmt.Fprintf(&b, "| feature | metric (floor) | default | MFCCFloat64 | SpectrogramFloat32 |\n|---|---|---:|---:|---:|\n")
	for _, n := range order {
		d := worst[0][n]
		fmt.Fprintf(&b, "| %s | %s (%.3g) | %.2e | %.2e | %.2e |\n", n, d.Metric, d.Floor, d.Err, worst[1][n].Err, worst[2][n].Err)
	}
	t.Logf("runs: %v\n%s", runs, b.String())
}

var abRounds = flag.Int("ab-rounds", 0, "rounds of the interleaved FFT-design timing (0: skip)")

// TestDesignAB times the 1-s record on the CPU path and on simplego with
// the plain and the folded four-step FFT, taking turns in each round so
// that all see the same machine load, and logs the medians and the median
// per-round ratios:
//
//	go test ./signal/sigraph/ -run DesignAB -v -args -ab-rounds 10
func TestDesignAB(t *testing.T) {
	if *abRounds < 1 {
		t.Skip("use -ab-rounds N")
	}
	x := record(t, "qpsk", 10, testRate, 1)
	cfg := signal.Config{SampleRate: testRate}
	var exs [2]*Extractor
	for i := range exs {
		e, err := NewWithOptions(graphBackend(t), cfg, 1, Options{SeparateTwiddles: i == 0})
		if err != nil {
			t.Fatal(err)
		}
		defer e.Close()
		exs[i] = e
	}
	cpu, err := signal.NewExtractor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	all := []signal.FeatureExtractor{cpu, exs[0], exs[1]}
	var f signal.Features
	var ms [3][]float64
	var ratio, slow []float64
	for r := -1; r < *abRounds; r++ { // r = -1 warms up
		var d [3]float64
		for i, e := range all {
			t0 := time.Now()
			if err := e.Extract(x, &f); err != nil {
				t.Fatal(err)
			}
			d[i] = float64(time.Since(t0).Microseconds()) / 1e3
		}
		if r >= 0 {
			for i := range d {
				ms[i] = append(ms[i], d[i])
			}
			ratio = append(ratio, d[2]/d[1])
			slow = append(slow, d[1]/d[0])
		}
	}
	t.Logf("over %d rounds: cpu median %.1f ms; simplego plain median %.0f ms, folded %.0f ms; median per-round ratios folded/plain %.3f, plain/cpu %.0f",
		*abRounds, median(ms[0]), median(ms[1]), median(ms[2]), median(ratio), median(slow))
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
