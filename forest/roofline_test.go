package forest

import (
	"flag"
	"math/rand/v2"
	"runtime"
	"testing"
	"time"

	"github.com/gotrain/gotrain/data"
)

var rooflineTrees = flag.Int("roofline-trees", 10, "trees of BenchmarkRoofline100k")

// searchedReads returns the row-feature reads an exact learner of this
// split rule cannot avoid on tree t: every node that was searched (not a
// leaf by depth, size or purity) reads the p codes of each of its rows
// once (p features examined: max_features all).
func searchedReads(t *Tree, p, maxDepth, minSplit int) int64 {
	var reads int64
	var walk func(node, depth int)
	walk = func(node, depth int) {
		if int(t.Samples(node)) >= minSplit && (maxDepth == 0 || depth < maxDepth) {
			reads += int64(t.Samples(node)) * int64(p)
		}
		if l := t.Left[node]; l >= 0 {
			walk(int(l), depth+1)
			walk(int(l)+1, depth+1)
		}
	}
	walk(0, 0)
	return reads
}

// peakUpdateNs is the time of one regression histogram update (count,
// weight, weighted target of a code) in the best case: codes read in
// order, the histogram in L1, one core.
func peakUpdateNs() float64 {
	const n = 1 << 16
	r := rand.New(rand.NewPCG(1, 2))
	codes := make([]uint8, n)
	w := make([]int64, n)
	wy := make([]int64, n)
	for i := range codes {
		codes[i], w[i], wy[i] = uint8(r.IntN(256)), int64(1+r.IntN(3)), r.Int64N(1<<20)
	}
	h := make([]int64, 256*3)
	best := 1e9
	for rep := 0; rep < 20; rep++ {
		t0 := time.Now()
		for i, c := range codes {
			e := int(c) * 3
			hh := h[e : e+3 : e+3]
			hh[0]++
			hh[1] += w[i]
			hh[2] += wy[i]
		}
		best = min(best, float64(time.Since(t0).Nanoseconds())/n)
	}
	return best
}

// peakVisitNs is the time of one tree-node visit in the best case: the
// walk kernel on codes binned beforehand, through a tree that fits in L1,
// one core.
func peakVisitNs(b *testing.B, small *Forest, ds *data.Dataset) float64 {
	c, err := small.compiledTrees()
	if err != nil {
		b.Fatal(err)
	}
	n, p, stride := predictBlock, ds.Cols, c.stride
	codes := make([]uint8, n*stride+3)
	for i := 0; i < n; i++ {
		for j := 0; j < p; j++ {
			codes[i*stride+j] = small.Binner.Code(j, ds.X[i*p+j])
		}
		codes[i*stride+p] = 255
	}
	leaf := make([]int32, n)
	best := 1e9
	for rep := 0; rep < 20; rep++ {
		t0 := time.Now()
		leaves(&c.trees[0], codes, stride, n, leaf)
		best = min(best, float64(time.Since(t0).Nanoseconds())/float64(n*c.trees[0].depth))
	}
	return best
}

// BenchmarkRoofline100k puts the 100k x 20 regression fit (depth 16) and
// its prediction of the 100,000 rows beside their limits on this machine
// (docs/FOREST.md, Roofline): the reads the split rule needs (reads/tree)
// at the best-case update rate (peak_ns/read) on every core, against the
// measured fit (fit_ns/read: fit time x cores / reads); and the tree-node
// visits of prediction (every row takes each tree's depth in steps) at the
// rate of a tree that fits in L1 (peak_ns/visit), against the measured
// prediction (predict_ns/visit).
func BenchmarkRoofline100k(b *testing.B) {
	ds := data.MakeRegression(100000, 20, 0)
	opt := Options{Trees: *rooflineTrees, MaxDepth: 16}
	cores := float64(runtime.NumCPU())
	peak := peakUpdateNs()
	// A one-tree forest of depth 8 on the same rows: its 511 compiled
	// nodes stay in L1, which gives the visit rate's best case.
	small, err := Fit(ds, Options{Trees: 1, MaxDepth: 8})
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		f, err := Fit(ds, opt)
		if err != nil {
			b.Fatal(err)
		}
		fit := time.Since(t0)
		var reads, visits int64
		for t := range f.Trees {
			reads += searchedReads(&f.Trees[t], ds.Cols, opt.MaxDepth, 2)
			visits += int64(ds.Rows) * int64(f.Trees[t].Depth())
		}
		t0 = time.Now()
		if _, err := f.Predict(ds.X, ds.Rows); err != nil {
			b.Fatal(err)
		}
		pred := time.Since(t0)
		peakVisit := peakVisitNs(b, small, ds)
		b.ReportMetric(float64(reads)/float64(len(f.Trees)), "reads/tree")
		b.ReportMetric(peak, "peak_ns/read")
		b.ReportMetric(float64(fit.Nanoseconds())*cores/float64(reads), "fit_ns/read")
		b.ReportMetric(float64(visits)/float64(len(f.Trees)*ds.Rows), "depth/tree")
		b.ReportMetric(peakVisit, "peak_ns/visit")
		b.ReportMetric(float64(pred.Nanoseconds())*cores/float64(visits), "predict_ns/visit")
	}
}
