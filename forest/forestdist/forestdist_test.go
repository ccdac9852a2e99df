package forestdist

import (
	"bytes"
	"math"
	"strings"
	"sync"
	"testing"

	"github.com/gotrain/gotrain/data"
	"github.com/gotrain/gotrain/dist"
	"github.com/gotrain/gotrain/forest"
)

// shard returns rows [lo, hi) of d.
func shard(d *data.Dataset, lo, hi int) *data.Dataset {
	idx := make([]int, hi-lo)
	for i := range idx {
		idx[i] = lo + i
	}
	s := d.Subset(idx)
	s.Classes = d.Classes
	return s
}

// cuts splits n rows into len(frac)+1 shards at the given fractions.
func cuts(d *data.Dataset, frac ...float64) []*data.Dataset {
	var out []*data.Dataset
	lo := 0
	for _, f := range frac {
		hi := int(f * float64(d.Rows))
		out = append(out, shard(d, lo, hi))
		lo = hi
	}
	return append(out, shard(d, lo, d.Rows))
}

// run calls fn on every rank of an in-process group of len(shards).
func run(shards []*data.Dataset, fn func(d *data.Dataset, c forest.Comm) (*forest.Forest, error)) ([]*forest.Forest, []error) {
	comms := dist.Local(len(shards))
	fs, errs := make([]*forest.Forest, len(shards)), make([]error, len(shards))
	var wg sync.WaitGroup
	for r := range shards {
		wg.Add(1)
		go func() {
			defer wg.Done()
			fs[r], errs[r] = fn(shards[r], comms[r])
		}()
	}
	wg.Wait()
	return fs, errs
}

func modelBytes(t *testing.T, f *forest.Forest) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := f.Save(&b); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func embedded(t *testing.T, load func() (*data.Dataset, error)) *data.Dataset {
	t.Helper()
	d, err := load()
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// withNaNs returns d with every k-th value missing.
func withNaNs(d *data.Dataset, k int) *data.Dataset {
	c := d.Clone()
	for i := 0; i < len(c.X); i += k {
		c.X[i] = math.NaN()
	}
	return c
}

// TestFitMatchesFit: data-parallel training on shards of uneven size (an
// empty one included) gives every rank forest.Fit's model file of the
// whole data, byte for byte: regression and classification, Gini and
// entropy, missing values, sample weights, the random splitter, no
// bootstrap, max samples, OOB scores and leaf samples.
func TestFitMatchesFit(t *testing.T) {
	diabetes := embedded(t, data.Diabetes)
	digits := embedded(t, data.Digits)
	weighted := data.MakeRegression(600, 6, 3)
	weighted.Weights = make([]float64, weighted.Rows)
	for i := range weighted.Weights {
		weighted.Weights[i] = float64(1 + i%3)
	}
	reg, cls := forest.Regression, forest.Classification
	cases := []struct {
		name string
		d    *data.Dataset
		opt  forest.Options
	}{
		{"diabetes/oob", diabetes, forest.Options{Task: reg, Trees: 6, Seed: 1, OOB: true}},
		{"diabetes/nans-depth6-leaf3", withNaNs(diabetes, 7), forest.Options{Task: reg, Trees: 5, Seed: 2, MaxDepth: 6, MinSamplesLeaf: 3, MaxFeatures: "0.5"}},
		{"diabetes/random-nobootstrap", diabetes, forest.Options{Task: reg, Trees: 4, Seed: 3, Splitter: forest.Random, NoBootstrap: true}},
		{"diabetes/keep-leaf-samples-bins16", diabetes, forest.Options{Task: reg, Trees: 3, Seed: 4, KeepLeafSamples: true, Bins: 16}},
		{"digits/gini-oob", digits, forest.Options{Task: cls, Trees: 5, Seed: 5, OOB: true}},
		{"digits/entropy-maxsamples", digits, forest.Options{Task: cls, Trees: 4, Seed: 6, Criterion: forest.Entropy, MaxSamples: 0.5}},
		{"digits/balanced-nans", withNaNs(digits, 11), forest.Options{Task: cls, Trees: 4, Seed: 7, ClassWeight: "balanced"}},
		{"regression600/weights", weighted, forest.Options{Task: reg, Trees: 4, Seed: 8, MinWeightFractionLeaf: 0.01}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			opt := c.opt
			opt.Threads = 2
			ref, err := forest.Fit(c.d, opt)
			if err != nil {
				t.Fatal(err)
			}
			want := modelBytes(t, ref)
			for _, sh := range []struct {
				shards  []*data.Dataset
				limit   int64
				subtree int64
			}{
				{cuts(c.d), -1, -1},
				{cuts(c.d, 0.5), 0, 0},              // every slot summed over the ranks
				{cuts(c.d, 0.5), -1, 0},             // small slots built by every rank
				{cuts(c.d, 0.2, 0.2, 0.9), 0, 0},    // rank 1's shard is empty
				{cuts(c.d, 0.3, 0.6), 1 << 14, 0},   // some slots of each kind
				{cuts(c.d, 0.5), 0, -1},             // the default subtree size
				{cuts(c.d, 0.3, 0.6), 0, 1 << 40},   // every child of a root grown whole
				{cuts(c.d, 0.2, 0.2, 0.9), -1, 100}, // some of each
			} {
				shards := sh.shards
				localLimit, subtreeRowsOverride = sh.limit, sh.subtree
				defer func() { localLimit, subtreeRowsOverride = -1, -1 }()
				fs, errs := run(shards, func(d *data.Dataset, cm forest.Comm) (*forest.Forest, error) {
					f, _, err := Fit(d, opt, cm)
					return f, err
				})
				for r := range shards {
					if errs[r] != nil {
						t.Fatalf("%d ranks: rank %d: %v", len(shards), r, errs[r])
					}
					if got := modelBytes(t, fs[r]); !bytes.Equal(got, want) {
						t.Fatalf("%d ranks: rank %d's model differs from forest.Fit's (%d vs %d bytes)", len(shards), r, len(got), len(want))
					}
				}
			}
		})
	}
}

// TestFitStats: each rank reports the mode, its rank and the bytes it
// sent (histograms: more than the data's shape alone).
func TestFitStats(t *testing.T) {
	d := data.MakeRegression(400, 5, 1)
	sts := make([]*forest.DistStats, 2)
	_, errs := run(cuts(d, 0.5), func(d *data.Dataset, c forest.Comm) (*forest.Forest, error) {
		f, st, err := Learner(c).Fit(d, forest.Options{Task: forest.Regression, Trees: 3, Seed: 1})
		sts[c.Rank()] = st.Dist
		return f, err
	})
	for r, st := range sts {
		if errs[r] != nil {
			t.Fatal(errs[r])
		}
		if st == nil || st.Mode != "data" || st.Ranks != 2 || st.Rank != r || st.BytesSent < int64(8*d.Rows) {
			t.Fatalf("rank %d: %+v", r, st)
		}
	}
}

// TestFitErrors: shards that do not fit together, categorical features and
// bad rows give every rank the same error, naming the rank or the row.
func TestFitErrors(t *testing.T) {
	d := data.MakeRegression(300, 4, 2)
	opt := forest.Options{Task: forest.Regression, Trees: 2, Seed: 1}
	narrow := shard(data.MakeRegression(300, 3, 2), 100, 300)
	badTarget := cuts(d, 0.5)
	badTarget[1] = badTarget[1].Clone()
	badTarget[1].Y[5] = math.NaN()
	cat := cuts(d, 0.5)
	cat[1] = cat[1].Clone()
	cat[1].Categories = [][]string{{"a", "b"}, nil, nil, nil}
	for i := range cat[1].Rows {
		cat[1].X[i*4] = float64(i % 2)
	}
	for _, c := range []struct {
		name   string
		shards []*data.Dataset
		want   string
	}{
		{"columns", []*data.Dataset{shard(d, 0, 100), narrow}, "rank 1's shard has 3 features"},
		{"target", badTarget, "row 155"},
		{"categorical", cat, "categorical features are refused"},
		{"nil", []*data.Dataset{shard(d, 0, 100), nil}, "rank 1: nil data set"},
	} {
		_, errs := run(c.shards, func(d *data.Dataset, cm forest.Comm) (*forest.Forest, error) {
			f, _, err := Fit(d, opt, cm)
			return f, err
		})
		for r, err := range errs {
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("%s: rank %d: error %v, want one with %q", c.name, r, err, c.want)
			}
		}
	}
	if _, _, err := Fit(d, opt, nil); err == nil {
		t.Error("nil communicator: no error")
	}
}
