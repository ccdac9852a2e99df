package train

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/pkg/ml/train/losses"
)

// Fuzz targets for the small files a run reads back: the run folder's
// manifest (run.json, read by --resume) and the JSON-lines metrics log
// (read back to plot a resumed run's whole history).

// realRunFiles trains a small model for three steps with checkpoints and
// a metrics log, as `--checkpoint-dir` and `--metrics-log` do, and returns
// the run folder's run.json and the metrics log.
func realRunFiles(tb testing.TB, be backends.Backend) (manifest, metrics []byte) {
	tb.Helper()
	parent := tb.TempDir()
	logPath := filepath.Join(parent, "metrics.jsonl")
	cfg := testConfig(func(c *Config) {
		c.BatchSize, c.Steps, c.NoCheckpoint, c.CheckpointDir, c.CheckpointEvery = 16, 3, false, filepath.Join(parent, "ckpt"), 1
		c.MetricsLog = logPath
		c.Run = RunInfo{Kind: "mlp", Arch: ArchJSON(map[string]int{"hidden": 8}), Data: Fingerprint([]byte("fuzz"))}
	})
	h, err := New(be, cfg, noisyMLP, losses.MeanSquaredError, synthDataN(64))
	if err != nil {
		tb.Fatal(err)
	}
	h.SetLogger(nil)
	h.SetProgressWriter(nil)
	if _, err := h.Run(); err != nil {
		tb.Fatal(err)
	}
	manifest, err = os.ReadFile(filepath.Join(h.RunDir(), ManifestName))
	if err != nil {
		tb.Fatal(err)
	}
	metrics, err = os.ReadFile(logPath)
	if err != nil {
		tb.Fatal(err)
	}
	return manifest, metrics
}

// FuzzReadManifest writes a fuzzed run.json into a run folder and reads it
// as ReadManifest and --resume (ResumeCandidates, on the run folder and
// on its parent) do: nothing may panic; an error names the manifest; an
// accepted manifest has a format this gotrain reads, writes back
// (writeManifest) and reads back the same; and ResumeCandidates agrees
// with ReadManifest and compatible about whether the run can be resumed.
func FuzzReadManifest(f *testing.F) {
	good, _ := realRunFiles(f, fuzzBackend(f))
	f.Add(good, "mlp", `{"hidden":8}`)
	f.Add(good, "charlstm", `{"hidden":8}`)
	f.Add(good, "", "")
	f.Add(good[:len(good)/2], "mlp", "")
	f.Add(bytes.Replace(good, []byte(`"format": 1`), []byte(`"format": 2`), 1), "mlp", "")
	f.Add(bytes.Replace(good, []byte(`"format": 1`), []byte(`"format": -9223372036854775808`), 1), "", "")
	f.Add(bytes.Replace(good, []byte(`"created": "`), []byte(`"created": "x`), 1), "", "")
	f.Add([]byte(`{"format":1,"created":"0000-01-01T00:00:00+23:59"}`), "", "")
	f.Add([]byte(`{"format":1,"kind":"\xff\xfe","arch":null}`), "\xff", "")
	f.Add([]byte(`null`), "", "")
	f.Add([]byte(`[]`), "", "")
	f.Add([]byte{}, "", "")
	f.Fuzz(func(t *testing.T, b []byte, kind, arch string) {
		parent := t.TempDir()
		dir := filepath.Join(parent, "run-1")
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, ManifestName)
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		want := RunInfo{Kind: kind, Arch: arch}
		m, err := ReadManifest(dir)
		cands, cerr := ResumeCandidates(dir, want, nil)
		var warned []string
		pcands, perr := ResumeCandidates(parent, want, func(msg string) { warned = append(warned, msg) })
		if err != nil {
			if m != nil {
				t.Fatal("a manifest with an error")
			}
			if !strings.Contains(err.Error(), path) {
				t.Fatalf("error does not name %s: %v", path, err)
			}
			if cerr == nil || !strings.Contains(cerr.Error(), path) {
				t.Fatalf("ResumeCandidates on the run folder: %v, %v; want an error naming %s", cands, cerr, path)
			}
			if perr == nil || !errors.Is(perr, ErrNoCheckpoint) || !strings.Contains(perr.Error(), dir) || len(warned) != 1 {
				t.Fatalf("ResumeCandidates on the parent: %v, %v (warnings %q); want no run, naming %s", pcands, perr, warned, dir)
			}
			return
		}
		if m.Format < 1 || m.Format > manifestFormat {
			t.Fatalf("accepted format %d", m.Format)
		}
		if why := m.compatible(want); why != "" {
			if cerr == nil || !strings.Contains(cerr.Error(), why) {
				t.Fatalf("incompatible run (%s) offered for resuming: %v, %v", why, cands, cerr)
			}
			if perr == nil || len(warned) != 1 {
				t.Fatalf("incompatible run (%s) under the parent: %v, %v (warnings %q)", why, pcands, perr, warned)
			}
		} else {
			if cerr != nil || len(cands) != 1 || cands[0] != dir {
				t.Fatalf("compatible run: ResumeCandidates %v, %v; want [%s]", cands, cerr, dir)
			}
			if perr != nil || len(pcands) != 1 || pcands[0] != dir {
				t.Fatalf("compatible run under the parent: ResumeCandidates %v, %v; want [%s]", pcands, perr, dir)
			}
		}
		// What was read writes back and reads back the same.
		again := filepath.Join(t.TempDir(), "again")
		if err := writeManifest(again, m); err != nil {
			t.Fatalf("an accepted manifest does not write back: %v (%+v)", err, m)
		}
		m2, err := ReadManifest(again)
		if err != nil {
			t.Fatalf("a re-written manifest does not read back: %v", err)
		}
		if d := manifestDiff(m, m2); d != "" {
			t.Fatalf("re-written manifest differs: %s", d)
		}
	})
}

// manifestDiff describes how a and b differ ("" if they do not); times
// are compared as instants.
func manifestDiff(a, b *Manifest) string {
	if !a.Created.Equal(b.Created) {
		return fmt.Sprintf("created %v, then %v", a.Created, b.Created)
	}
	x, y := *a, *b
	x.Created, y.Created = time.Time{}, time.Time{}
	if x != y {
		return fmt.Sprintf("%+v, then %+v", x, y)
	}
	return ""
}

// FuzzReadMetricsLog writes a fuzzed metrics log and reads it back as a
// resumed run does before plotting: nothing may panic; an error names the
// file; an accepted log gives one record per non-blank line, each the
// JSON object of its line.
func FuzzReadMetricsLog(f *testing.F) {
	_, good := realRunFiles(f, fuzzBackend(f))
	f.Add(good)
	f.Add(good[:len(good)/2])
	f.Add(append(append([]byte(nil), good...), "\n\n{\"event\":\"skipped\",\"step\":2}\r\n"...))
	f.Add([]byte("{\"step\":1,\"loss\":1e308}\n{\"step\":2,\"loss\":-1e308}\n"))
	f.Add([]byte("{}\nnull\n"))
	f.Add([]byte("[1]\n"))
	f.Add([]byte("\xff\n"))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		path := filepath.Join(t.TempDir(), "metrics.jsonl")
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		recs, err := ReadMetricsLog(path)
		if err != nil {
			if !strings.Contains(err.Error(), path) {
				t.Fatalf("error does not name %s: %v", path, err)
			}
			return
		}
		// bufio.Scanner's lines: split at \n, a final \r dropped.
		var lines [][]byte
		for l := range bytes.Lines(b) {
			l = bytes.TrimSuffix(bytes.TrimSuffix(l, []byte("\n")), []byte("\r"))
			if len(l) > 0 {
				lines = append(lines, l)
			}
		}
		if len(recs) != len(lines) {
			t.Fatalf("%d records from %d non-blank lines", len(recs), len(lines))
		}
		for i, rec := range recs {
			var want map[string]any
			if err := json.Unmarshal(lines[i], &want); err != nil {
				t.Fatalf("record %d accepted from a line that is not JSON: %v", i+1, err)
			}
			got, _ := json.Marshal(rec)
			exp, _ := json.Marshal(want)
			if !bytes.Equal(got, exp) {
				t.Fatalf("record %d is %s, its line %s", i+1, got, exp)
			}
		}
	})
}

// plotDeadline bounds one PlotMetrics call of the fuzz target; the plots
// of a short log take milliseconds.
const plotDeadline = 20 * time.Second

// FuzzMetricsLogPlots reads a fuzzed metrics log and plots it, as a
// resumed run does at its end (Harness.writePlots): nothing may panic or
// hang (PlotMetrics must return within plotDeadline), and every file
// PlotMetrics says it wrote is a PNG.
func FuzzMetricsLogPlots(f *testing.F) {
	_, good := realRunFiles(f, fuzzBackend(f))
	f.Add(good)
	f.Add([]byte("{\"step\":1,\"loss\":1e300,\"lr\":0.1}\n{\"step\":2,\"loss\":-1e300,\"lr\":1e-300}\n"))
	f.Add([]byte("{\"step\":1e300,\"loss\":1}\n{\"step\":-1e300,\"loss\":2}\n"))
	f.Add([]byte("{\"step\":1,\"accuracy\":5e-324}\n{\"step\":1,\"accuracy\":0}\n"))
	f.Add([]byte("{\"step\":1,\"samples_per_s\":1}\n{\"step\":1,\"event\":\"skip\",\"samples_per_s\":2}\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		dir := t.TempDir()
		path := filepath.Join(dir, "metrics.jsonl")
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		recs, err := ReadMetricsLog(path)
		if err != nil || len(recs) > 1000 {
			return
		}
		type result struct {
			files []string
			err   error
		}
		done := make(chan result, 1)
		plots := filepath.Join(dir, "plots")
		go func() {
			files, err := PlotMetrics(recs, plots, nil)
			done <- result{files, err}
		}()
		var r result
		select {
		case r = <-done:
		case <-time.After(plotDeadline):
			t.Fatalf("PlotMetrics of %d records did not return in %v", len(recs), plotDeadline)
		}
		if r.err != nil {
			return
		}
		for _, p := range r.files {
			png, err := os.ReadFile(p)
			if err != nil || !bytes.HasPrefix(png, []byte("\x89PNG")) {
				t.Fatalf("%s: not a PNG (%v)", p, err)
			}
		}
	})
}
