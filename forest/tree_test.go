package forest

import (
	"io"
	"math"
	"strings"
	"testing"
)

// TestNewTree builds a tree by hand and reads every field back, the
// threshold from the edges; a weight past 32 bits moves the weights to
// 64 bits without changing the others.
func TestNewTree(t *testing.T) {
	edges := [][]float64{{-1, 0.5, 2}, {10}}
	tr, err := NewTree(5, 2, edges)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		if tr.Feature[i] != -1 || tr.Left[i] != -1 || tr.Bin(i) != 0 || tr.MissingLeft(i) || tr.Threshold(i) != 0 || tr.Gain(i) != 0 {
			t.Fatalf("new node %d is not a bare leaf", i)
		}
	}
	if err := tr.Check(); err == nil || !strings.Contains(err.Error(), "0 splits for 5 nodes, want 2") {
		t.Errorf("Check of a tree without its splits: %v", err)
	}
	// Root on feature 0 bin 1, its right child (node 2) on feature 1 bin 0.
	if err := tr.SetSplit(0, 0, 1, true, 1, 0.75); err != nil {
		t.Fatal(err)
	}
	if err := tr.SetSplit(2, 1, 0, false, 3, 0.25); err != nil {
		t.Fatal(err)
	}
	if err := tr.Check(); err != nil {
		t.Fatal(err)
	}
	counts := []struct {
		s int32
		w int64
	}{{9, 12}, {4, 5}, {5, 7}, {2, 3}, {3, 4}}
	for i, c := range counts {
		tr.SetCounts(i, c.s, c.w)
	}
	want := []struct {
		feature, left int32
		bin           uint8
		ml            bool
		thr, gain     float64
	}{{0, 1, 1, true, 0.5, 0.75}, {-1, -1, 0, false, 0, 0}, {1, 3, 0, false, 10, 0.25}, {-1, -1, 0, false, 0, 0}, {-1, -1, 0, false, 0, 0}}
	check := func(stage string) {
		t.Helper()
		for i, w := range want {
			got := []any{tr.Feature[i], tr.Left[i], tr.Bin(i), tr.MissingLeft(i), tr.Threshold(i), tr.Gain(i), tr.Samples(i), tr.Weight(i)}
			exp := []any{w.feature, w.left, w.bin, w.ml, w.thr, w.gain, counts[i].s, counts[i].w}
			for k := range got {
				if got[k] != exp[k] {
					t.Errorf("%s: node %d field %d = %v, want %v", stage, i, k, got[k], exp[k])
				}
			}
		}
	}
	check("32-bit weights")
	if tr.wide != nil {
		t.Error("small weights were kept in 64 bits")
	}
	if tr.Depth() != 2 || tr.NumLeaves() != 3 {
		t.Errorf("depth %d, %d leaves; want 2 and 3", tr.Depth(), tr.NumLeaves())
	}
	big := int64(math.MaxUint32) + 7
	counts[3].w = big
	tr.SetCounts(3, counts[3].s, big)
	if tr.weight != nil || tr.wide == nil {
		t.Error("a weight past 32 bits did not move the weights to 64 bits")
	}
	check("64-bit weights")
	// A bin past the feature's last edge sends every number left.
	if err := tr.SetSplit(2, 1, 1, false, 3, 0.25); err != nil {
		t.Fatal(err)
	}
	if thr := tr.Threshold(2); !math.IsInf(thr, 1) {
		t.Errorf("threshold of a bin past the last edge = %v, want +Inf", thr)
	}
}

// TestNewTreeErrors: NewTree and SetSplit refuse what no tree can be.
func TestNewTreeErrors(t *testing.T) {
	edges := [][]float64{{1}}
	for _, c := range []struct {
		n, outputs int
		want       string
	}{{0, 1, "0 nodes"}, {4, 1, "4 nodes"}, {maxTreeNodes + 1, 1, "nodes"}, {3, 0, "0 values"}} {
		if _, err := NewTree(c.n, c.outputs, edges); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("NewTree(%d, %d): %v, want an error with %q", c.n, c.outputs, err, c.want)
		}
	}
	tr, err := NewTree(5, 1, edges)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		i, feature, left int
		want             string
	}{
		{5, 0, 1, "node 5 of 5"},
		{0, 1, 1, "feature 1 of 1"},
		{0, -1, 1, "feature -1"},
		{0, 0, 2, "left child 2"},
		{0, 0, 0, "left child 0"},
		{2, 0, 1, "left child 1"},
		{0, 0, 5, "left child 5"},
	} {
		if err := tr.SetSplit(c.i, c.feature, 0, false, c.left, 0); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("SetSplit(%d, %d, left %d): %v, want an error with %q", c.i, c.feature, c.left, err, c.want)
		}
	}
	// Splits out of breadth-first order: node 2 splits before node 0 has.
	if err := tr.SetSplit(2, 0, 0, false, 3, 0); err != nil {
		t.Fatal(err)
	}
	if err := tr.Check(); err == nil || !strings.Contains(err.Error(), "node 2: left child 3, want 1") {
		t.Errorf("Check of a split out of order: %v", err)
	}
}

// TestTreeBytes: a fitted regression tree takes at most 30 bytes a node
// (issue #19's memory floor rests on it), and widening and narrowing it
// (what Save and LoadModel do) gives the same tree.
func TestTreeBytes(t *testing.T) {
	f, err := Fit(synthDataset(2000, Regression), Options{Trees: 3, Seed: 1, Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	for k := range f.Trees {
		tr := &f.Trees[k]
		n := tr.NumNodes()
		if n < 500 {
			t.Fatalf("tree %d has %d nodes, want a deep tree", k, n)
		}
		if per := float64(tr.bytes()) / float64(n); per > 30 {
			t.Errorf("tree %d takes %.1f bytes a node, want at most 30", k, per)
		}
		w, err := tr.widen()
		if err != nil {
			t.Fatal(err)
		}
		if err := f.checkWide(k, w, maxTreeDepth); err != nil {
			t.Fatal(err)
		}
		back := w.narrow(f.Binner.Edges)
		for i := range n {
			if back.Bin(i) != tr.Bin(i) || back.MissingLeft(i) != tr.MissingLeft(i) || math.Float64bits(back.Gain(i)) != math.Float64bits(tr.Gain(i)) ||
				back.Samples(i) != tr.Samples(i) || back.Weight(i) != tr.Weight(i) || math.Float64bits(back.Threshold(i)) != math.Float64bits(tr.Threshold(i)) {
				t.Fatalf("tree %d node %d differs after widening and narrowing", k, i)
			}
			if tr.Feature[i] >= 0 && tr.Threshold(i) != f.Binner.Edges[tr.Feature[i]][tr.Bin(i)] {
				t.Fatalf("tree %d node %d: threshold %v is not its bin's edge", k, i, tr.Threshold(i))
			}
		}
	}
}

// TestDepth checks Depth, which counts levels without allocating, against
// depths followed down the Left links.
func TestDepth(t *testing.T) {
	for _, c := range getModelCases(t) {
		for k := range c.f.Trees {
			tr := &c.f.Trees[k]
			depth := make([]int, tr.NumNodes())
			want := 0
			for i, l := range tr.Left {
				if l >= 0 {
					depth[l], depth[l+1] = depth[i]+1, depth[i]+1
					want = max(want, depth[i]+1)
				}
			}
			if got := tr.Depth(); got != want {
				t.Fatalf("%s tree %d: Depth %d, want %d", c.name, k, got, want)
			}
		}
	}
	tr := &getModelCases(t)[0].f.Trees[0]
	if n := testing.AllocsPerRun(10, func() { _ = tr.Depth() }); n != 0 {
		t.Errorf("Depth allocates %v times", n)
	}
}

// TestHandMadeTreeRefused: a Tree written as a literal (no split or count
// arrays) is an error for prediction, SHAP and Save, not a panic.
func TestHandMadeTreeRefused(t *testing.T) {
	f := tinyForest(t, Regression)
	f.Trees[1] = Tree{Feature: []int32{0, -1, -1}, Left: []int32{1, -1, -1}, Value: []float64{1, 2, 3}}
	f.pred = nil
	x := make([]float64, f.NumFeatures)
	if _, err := f.Predict(x, 1); err == nil || !strings.Contains(err.Error(), "tree 1: 3 nodes but") {
		t.Errorf("Predict: %v", err)
	}
	if _, err := f.SHAP(x, 1); err == nil || !strings.Contains(err.Error(), "tree 1: 3 nodes but") {
		t.Errorf("SHAP: %v", err)
	}
	if err := f.Save(io.Discard); err == nil || !strings.Contains(err.Error(), "tree 1: 3 nodes but") {
		t.Errorf("Save: %v", err)
	}
}
