package forest

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/gotrain/gotrain/data"
)

var updateHashes = flag.Bool("update-hashes", false, "rewrite testdata/model-hashes.txt from the current learner")

// hashCase is one fit whose model file's SHA-256 is pinned in
// testdata/model-hashes.txt.
type hashCase struct {
	name string
	data func(t *testing.T) *data.Dataset
	opt  Options
}

var mnistTrees = flag.Int("mnist-trees", 10, "trees of BenchmarkFitMNIST")

// mnistTrain returns MNIST's training set from ../shared/data, skipping
// when that folder is absent.
func mnistTrain(t testing.TB) *data.Dataset {
	t.Helper()
	dir := filepath.Join("..", "..", "shared", "data", "mnist")
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("MNIST not at %s (../shared/data): %v", dir, err)
	}
	train, _, err := data.LoadMNIST(dir)
	if err != nil {
		t.Fatal(err)
	}
	return train
}

// mnistHead returns the first n MNIST training rows (see mnistTrain).
func mnistHead(t *testing.T, n int) *data.Dataset {
	t.Helper()
	return mnistTrain(t).Subset(all(n))
}

// sparseWide returns n rows of p features that are zero except on a band
// of rows each (small integers there, like an image's pixels), with
// classes classes (0: a regression target) and, with nans, a missing
// value in one row of 23. Integer arithmetic only: the same on every
// architecture.
func sparseWide(n, p, classes int, nans bool) *data.Dataset {
	r := rand.New(rand.NewPCG(uint64(n), uint64(p)))
	d := &data.Dataset{X: make([]float64, n*p), Y: make([]float64, n), Rows: n, Cols: p}
	for j := 0; j < p; j++ {
		lo := r.IntN(n)
		hi := min(n, lo+1+r.IntN(n/3))
		for i := lo; i < hi; i++ {
			if r.IntN(3) > 0 {
				d.X[i*p+j] = float64(1 + r.IntN(20))
			}
		}
	}
	for i := 0; i < n; i++ {
		var s int
		for j := 0; j < p; j += 37 {
			s += int(d.X[i*p+j])
		}
		if classes > 0 {
			d.Y[i] = float64((s + r.IntN(2)) % classes)
		} else {
			d.Y[i] = float64(s*3 + r.IntN(5))
		}
		if nans && i%23 == 0 {
			d.X[i*p+r.IntN(p)] = math.NaN()
		}
	}
	return d
}

func hashCases() []hashCase {
	emb := func(name string) func(*testing.T) *data.Dataset {
		return func(t *testing.T) *data.Dataset { return loadEmbedded(t, name) }
	}
	reg, cls := Regression, Classification
	return []hashCase{
		{"diabetes/default", emb("diabetes"), Options{Task: reg, Trees: 20}},
		{"diabetes/depth6-leaf3-half", emb("diabetes"), Options{Task: reg, Trees: 20, Seed: 7, MaxDepth: 6, MinSamplesLeaf: 3, MaxFeatures: "0.5"}},
		{"diabetes/nobootstrap-sqrt", emb("diabetes"), Options{Task: reg, Trees: 10, Seed: 3, NoBootstrap: true, MaxFeatures: "sqrt"}},
		{"diabetes/nans-bins16-oob", func(t *testing.T) *data.Dataset { return withNaNs(loadEmbedded(t, "diabetes"), 17) }, Options{Task: reg, Trees: 10, Seed: 11, Bins: 16, OOB: true}},
		{"regression2000x20/depth16", func(*testing.T) *data.Dataset { return data.MakeRegression(2000, 20, 1) }, Options{Task: reg, Trees: 10, Seed: 1, MaxDepth: 16}},
		{"regression2000x20/maxsamples-bins32", func(*testing.T) *data.Dataset { return data.MakeRegression(2000, 20, 2) }, Options{Task: reg, Trees: 10, Seed: 2, MaxSamples: 0.5, Bins: 32, MinSamplesSplit: 5}},
		{"digits/gini", emb("digits"), Options{Task: cls, Trees: 20}},
		{"digits/entropy", emb("digits"), Options{Task: cls, Trees: 10, Seed: 5, Criterion: Entropy}}, // amd64 only: see TestModelHashes
		{"digits/gini-all-oob", emb("digits"), Options{Task: cls, Trees: 5, Seed: 9, MaxFeatures: "all", OOB: true}},
		{"digits/bins16-depth8-split5", emb("digits"), Options{Task: cls, Trees: 10, Seed: 4, Bins: 16, MaxDepth: 8, MinSamplesSplit: 5}},
		{"digits/nans-log2", func(t *testing.T) *data.Dataset { return withNaNs(loadEmbedded(t, "digits"), 13) }, Options{Task: cls, Trees: 10, Seed: 6, MaxFeatures: "log2"}},
		{"mnist6000/gini", func(t *testing.T) *data.Dataset { return mnistHead(t, 6000) }, Options{Task: cls, Trees: 4, Seed: 1}},
		// Wide and sparse like images: most features are constant in most
		// nodes (the known-constant skips, every rows-path layout).
		{"sparse3000x400/gini-sqrt-nans", func(*testing.T) *data.Dataset { return sparseWide(3000, 400, 6, true) }, Options{Task: cls, Trees: 6, Seed: 3}},
		{"sparse3000x400/regression-0.1-leaf2", func(*testing.T) *data.Dataset { return sparseWide(3000, 400, 0, false) }, Options{Task: reg, Trees: 6, Seed: 4, MaxFeatures: "0.1", MinSamplesLeaf: 2}},
		// The random splitter (extremely randomized trees), recorded when it
		// was added (format version 2).
		{"diabetes/random-nobootstrap", emb("diabetes"), Options{Task: reg, Trees: 20, Seed: 2, Splitter: Random, NoBootstrap: true}},
		{"diabetes/random-nans-leaf2", func(t *testing.T) *data.Dataset { return withNaNs(loadEmbedded(t, "diabetes"), 17) }, Options{Task: reg, Trees: 10, Seed: 3, Splitter: Random, MinSamplesLeaf: 2}},
		{"digits/random-sqrt", emb("digits"), Options{Task: cls, Trees: 10, Seed: 8, Splitter: Random}},
		{"diabetes/keep-leaf-samples", emb("diabetes"), Options{Task: reg, Trees: 5, Seed: 4, KeepLeafSamples: true}},
		{"sparse3000x400/random-gini-nans", func(*testing.T) *data.Dataset { return sparseWide(3000, 400, 6, true) }, Options{Task: cls, Trees: 4, Seed: 5, Splitter: Random}},
		// Categorical features, recorded when they were added (format
		// version 2).
		{"categorical/regression-nans", func(*testing.T) *data.Dataset { return catData(2000, 21, 0, true) }, Options{Task: reg, Trees: 10, Seed: 1, OOB: true}},
		{"categorical/gini3-nans", func(*testing.T) *data.Dataset { return catData(2000, 22, 3, true) }, Options{Task: cls, Trees: 10, Seed: 2}},
		{"categorical/random-leaf3", func(*testing.T) *data.Dataset { return catData(2000, 23, 0, true) }, Options{Task: reg, Trees: 10, Seed: 3, Splitter: Random, MinSamplesLeaf: 3}},
		{"digits/categorical16-gini", func(t *testing.T) *data.Dataset { return categoricalPixels(loadEmbedded(t, "digits"), 16) }, Options{Task: cls, Trees: 10, Seed: 4}},
	}
}

// TestModelHashes pins the model files of the learner: the same data and
// options give byte-identical files, whatever the thread count, and a
// change of the learner that alters any tree shows here. A deliberate
// rule change rewrites the file with -update-hashes and says so in
// docs/FOREST.md.
func TestModelHashes(t *testing.T) {
	path := filepath.Join("testdata", "model-hashes.txt")
	want := map[string]string{}
	if !*updateHashes {
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			line := strings.TrimSpace(sc.Text())
			if line == "" || strings.HasPrefix(line, "#") {
				continue
			}
			name, sum, ok := strings.Cut(line, " ")
			if !ok {
				t.Fatalf("%s: bad line %q", path, line)
			}
			want[name] = strings.TrimSpace(sum)
		}
		f.Close()
	}
	var out strings.Builder
	out.WriteString("# SHA-256 of the model file of each case of TestModelHashes (forest/hashes_test.go).\n")
	out.WriteString("# Regenerate only for a deliberate rule change: go test ./forest -run TestModelHashes -update-hashes\n")
	for _, c := range hashCases() {
		ok := t.Run(c.name, func(t *testing.T) {
			if c.opt.Criterion == Entropy && runtime.GOARCH != "amd64" {
				// The entropy score takes math.Log, whose last bit
				// differs between amd64 (assembly) and architectures
				// where the pure-Go version fuses products into FMAs.
				t.Skip("entropy models differ in the last bits of math.Log off amd64; hashes pinned on amd64")
			}
			d := c.data(t)
			var first string
			for _, threads := range []int{1, 2, 3} {
				opt := c.opt
				opt.Threads = threads
				f, err := Fit(d, opt)
				if err != nil {
					t.Fatal(err)
				}
				// The header records the thread count asked for; all
				// else must be the same bytes.
				f.Options.Threads = 0
				var buf bytes.Buffer
				if err := f.Save(&buf); err != nil {
					t.Fatal(err)
				}
				s := sha256.Sum256(buf.Bytes())
				got := hex.EncodeToString(s[:])
				if first == "" {
					first = got
					fmt.Fprintf(&out, "%s %s\n", c.name, got)
				} else if got != first {
					t.Errorf("threads %d: model %s, threads 1 gave %s", threads, got, first)
				}
				if !*updateHashes && got != want[c.name] {
					t.Errorf("threads %d: model hash %s, want %s (testdata/model-hashes.txt)", threads, got, want[c.name])
				}
			}
		})
		if !ok && *updateHashes {
			t.Fatalf("%s failed: not rewriting %s", c.name, path)
		}
	}
	if *updateHashes {
		if err := os.WriteFile(path, []byte(out.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// categoricalPixels makes the first cols pixels of digits categorical,
// their intensities 0..16 the categories.
func categoricalPixels(d *data.Dataset, cols int) *data.Dataset {
	d.Categories = make([][]string, d.Cols)
	for j := range cols {
		d.Categories[j] = make([]string, 17)
		for q := range 17 {
			d.Categories[j][q] = fmt.Sprintf("%02d", q)
		}
	}
	return d
}
