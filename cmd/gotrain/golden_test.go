package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
)

var updateGolden = flag.Bool("update-golden", false, "rewrite testdata/json_keys.golden from the commands' output")

// jsonKeys returns every key path of a JSON document: objects add
// ".key", arrays add "[]" (their elements' keys merged). Maps whose keys
// are data (feature names, expert slots) are listed under "{}" so that
// only the schema is pinned.
func jsonKeys(v any, prefix string, out map[string]bool) {
	switch x := v.(type) {
	case map[string]any:
		if dataKeyed[prefix] {
			for _, e := range x {
				jsonKeys(e, prefix+"{}", out)
			}
			out[prefix+"{}"] = true
			return
		}
		for k, e := range x {
			p := prefix + "." + k
			out[p] = true
			jsonKeys(e, p, out)
		}
	case []any:
		for _, e := range x {
			jsonKeys(e, prefix+"[]", out)
		}
	}
}

// dataKeyed are the objects whose keys are values, not field names.
var dataKeyed = map[string]bool{
	".impurity_importance":        true,
	".permutation_importance":     true,
	".permutation_importance_std": true,
	".expert_load":                true,
	".inventory.env":              true,
	".dataset.counts":             true,
	".eval.per_snr[].per_class":   true,
}

// TestJSONKeysGolden pins the keys of every command's --json report: a key
// that disappears, or a new key not yet recorded, fails the test (run
// `go test ./cmd/gotrain -run JSONKeysGolden -update-golden` after adding
// fields on purpose; removing or renaming keys breaks users' scripts).
func TestJSONKeysGolden(t *testing.T) {
	if testing.Short() {
		t.Skip("runs every command once")
	}
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	lmData := lmCorpus(t)
	corpus, inst := transformerFiles(t)
	csvPath := p("x.csv")
	writeForestInput(t, csvPath, "diabetes", 20)
	cases := []struct {
		name string
		args []string
	}{
		{"version", []string{"version"}},
		{"devices", []string{"devices", "--verify", "--repeats", "1"}},
		{"doctor", []string{"--device", "go", "doctor", "--burst", "0"}},
		{"bench", []string{"--device", "go", "bench", "--repeats", "1"}},
		{"forest train regression", []string{"forest", "train", "--dataset", "diabetes", "--trees", "3", "--importance",
			"--permutation-importance", "1", "--repeats", "2", "--save", p("m.gtf")}},
		{"forest train classification", []string{"forest", "train", "--dataset", "digits", "--trees", "3", "--save", p("c.gtf")}},
		{"forest train graph", []string{"--device", "go", "forest", "train", "--dataset", "diabetes", "--trees", "2", "--max-depth", "3"}},
		{"forest predict", []string{"forest", "predict", "--model", p("m.gtf"), "--data", csvPath, "--out", p("pred.csv")}},
		{"forest explain", []string{"forest", "explain", "--model", p("m.gtf"), "--data", csvPath, "--out", p("shap.csv")}},
		{"forest train leaf samples", []string{"forest", "train", "--dataset", "diabetes", "--trees", "3", "--keep-leaf-samples", "--save", p("q.gtf")}},
		{"forest predict quantiles", []string{"forest", "predict", "--model", p("q.gtf"), "--data", csvPath, "--quantiles", "0.1,0.9", "--out", p("q.csv")}},
		{"forest predict graph", []string{"--device", "go", "forest", "predict", "--model", p("m.gtf"), "--data", csvPath, "--out", p("pred2.csv")}},
		{"signal synth", []string{"signal", "synth", "--mod", "qpsk", "--seconds", "0.02", "--out", p("rec")}},
		{"signal features", []string{"signal", "features", "--in", p("rec") + ".sigmf-meta"}},
		{"signal features annotations", []string{"signal", "features", "--in", p("rec") + ".sigmf-meta", "--annotations"}},
		{"signal features graph", []string{"--device", "go", "signal", "features", "--in", p("rec") + ".sigmf-meta"}},
		{"signal bench", []string{"signal", "bench", "--runs", "1", "--records", "2", "--seconds", "0.02"}},
		{"signal dataset", []string{"signal", "dataset", "--per-class", "4", "--samples", "2048", "--snr", "10:20:10",
			"--mods", "bpsk,qpsk", "--seed", "1", "--out", p("sd")}},
		{"signal classify train", []string{"signal", "classify", "train", "--data", p("sd"), "--test-fraction", "0.5",
			"--out", p("sc.gtf"), "--trees", "5"}},
		{"signal classify eval", []string{"signal", "classify", "eval", "--model", p("sc.gtf"), "--data", p("sd")}},
		{"lm lstm train", append([]string{"--device", "go", "lm", "lstm", "train", "--data", lmData, "--checkpoint-dir", p("lstm"),
			"--max-steps", "2", "--progress", "off"}, lmTiny...)},
		{"lm lstm sample", []string{"--device", "go", "lm", "lstm", "sample", "--model", p("lstm"), "--prompt", "ab", "--length", "5"}},
		{"lm transformer train", append([]string{"--device", "go", "lm", "transformer", "train", "--pretrain-data", corpus,
			"--instruction-data", inst, "--checkpoint-dir", p("tf"), "--max-steps", "2"}, transformerTiny...)},
		{"lm transformer sample", []string{"--device", "go", "lm", "transformer", "sample", "--model", p("tf"), "--prompt", "a ", "--length", "5"}},
		{"moe train", []string{"--device", "go", "moe", "train", "--dataset", "digits", "--experts", "2", "--hidden", "8",
			"--epochs", "1", "--batch-size", "64", "--progress", "off", "--out", p("moe")}},
		{"moe train find-lr", []string{"--device", "go", "moe", "train", "--dataset", "digits", "--experts", "2", "--hidden", "8",
			"--find-lr", "--find-lr-steps", "5", "--progress", "off", "--out", p("moelr")}},
		{"export", []string{"export", "--model", filepath.Join(p("moe"), "checkpoints"), "--out", p("moe.safetensors")}},
	}
	var got strings.Builder
	for _, c := range cases {
		out, errOut, err := run(t, append([]string{"--json"}, c.args...)...)
		if err != nil {
			t.Fatalf("%s: %v\n%s\n%s", c.name, err, out, errOut)
		}
		var v any
		if err := json.Unmarshal([]byte(out), &v); err != nil {
			t.Fatalf("%s: not JSON: %v\n%s", c.name, err, out)
		}
		keys := map[string]bool{}
		jsonKeys(v, "", keys)
		list := make([]string, 0, len(keys))
		for k := range keys {
			list = append(list, k)
		}
		sort.Strings(list)
		fmt.Fprintf(&got, "## %s\n%s\n", c.name, strings.Join(list, "\n"))
	}
	golden := filepath.Join("testdata", "json_keys.golden")
	if *updateGolden {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(golden, []byte(got.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (create it with -update-golden)", err)
	}
	if missing, extra := diffKeys(string(want), got.String()); len(missing)+len(extra) > 0 {
		t.Errorf("--json keys changed.\nmissing (removed or renamed: breaks users' scripts):\n  %s\nnew (record them with -update-golden if intended):\n  %s",
			strings.Join(missing, "\n  "), strings.Join(extra, "\n  "))
	}
}

// machineKeys are keys that depend on the machine or the build rather than
// on gotrain's schema (fields left out when empty: no NVIDIA driver, a
// noxla build, plugins found, nothing to fix): diffKeys ignores them, and
// every key below them.
var machineKeys = []string{
	".inventory.nvidia.", ".inventory.no_xla_reason", ".inventory.plugins[]",
	".devices[].reason", ".devices[].description", ".findings[].fix",
	".selected.attempts[].reason", ".selected.warning", ".results[].reason",
}

func machineDependent(key string) bool {
	for _, p := range machineKeys {
		if strings.HasPrefix(key, p) {
			return true
		}
	}
	return false
}

// diffKeys returns the "section: key" lines of want missing from got and
// those of got not in want, machine-dependent keys aside.
func diffKeys(want, got string) (missing, extra []string) {
	set := func(s string) []string {
		var out []string
		section := ""
		for _, l := range strings.Split(s, "\n") {
			switch {
			case strings.HasPrefix(l, "## "):
				section = strings.TrimPrefix(l, "## ")
			case l != "" && !machineDependent(l):
				out = append(out, section+": "+l)
			}
		}
		return out
	}
	w, g := set(want), set(got)
	for _, k := range w {
		if !slices.Contains(g, k) {
			missing = append(missing, k)
		}
	}
	for _, k := range g {
		if !slices.Contains(w, k) {
			extra = append(extra, k)
		}
	}
	return missing, extra
}

func TestDiffKeys(t *testing.T) {
	want := "## a\n.x\n.y\n.inventory.nvidia.error\n## b\n.z\n"
	got := "## a\n.x\n.w\n.inventory.no_xla_reason\n## b\n.z\n"
	missing, extra := diffKeys(want, got)
	if strings.Join(missing, "|") != "a: .y" || strings.Join(extra, "|") != "a: .w" {
		t.Errorf("diffKeys: missing %q, extra %q; want [a: .y] and [a: .w] (machine keys ignored)", missing, extra)
	}
}
