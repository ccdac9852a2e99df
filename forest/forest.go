package forest

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/gotrain/gotrain/data"
	"github.com/gotrain/gotrain/forest/internal/core"
)

// Forest is a fitted random forest.
type Forest struct {
	// Options are the settings the forest was fitted with, defaults filled in.
	Options Options
	// Features are the feature names (may be empty).
	Features []string
	// Target is the target's name.
	Target string
	// NumFeatures is the number of input features.
	NumFeatures int
	// Classes are the class names for classification; len(Classes) is the number of classes.
	Classes []string
	// Binner holds the bin edges learnt from the training data.
	Binner *Binner
	// Trees are the fitted trees.
	Trees []Tree
	// OOBScore is the out-of-bag R² (regression) or accuracy (classification); NaN when not computed.
	OOBScore float64
	// OOBRows is how many training rows had at least one out-of-bag tree.
	OOBRows int
	// LeafSamples are the training rows of every leaf, kept when
	// Options.KeepLeafSamples asks for them (else nil).
	LeafSamples *LeafSamples

	pred *compiled // the predictor, built by Load or on first use
}

// Outputs returns the number of values per node: 1 for regression, the number
// of classes for classification.
func (f *Forest) Outputs() int {
	if f.Options.Task == Classification {
		return len(f.Classes)
	}
	return 1
}

// pathOverride forces every node through one split-search path ("dense",
// "rows" or "sorted"); tests use it to check that all paths agree.
var pathOverride = ""

// localBytes is the most codes a local block holds (builder.localAt); a
// variable so that tests can make small data sets take the large-node
// layouts.
var localBytes = 8 << 20

// Fit trains a forest on d: its X and Y, its FeatureNames and TargetName
// (kept in the forest) and, for classification, its Classes (when nil, the
// classes are "0".."K-1" with K = max(Y)+1). The result depends only on the
// data and the options (Seed included), not on Options.Threads.
func Fit(d *data.Dataset, opt Options) (*Forest, error) {
	f, pr, inbag, err := fitTrees(d, opt, nil)
	if err != nil {
		return nil, err
	}
	if err := pr.Finish(f, inbag); err != nil {
		return nil, err
	}
	return f, nil
}

// fitTrees prepares d and grows the trees of Fit(d, opt) whose indices
// mine holds (every tree when mine is nil), with their in-bag masks when
// the options ask for the out-of-bag score; the other trees stay empty.
// The forest is not finished (pr.Finish).
func fitTrees(d *data.Dataset, opt Options, mine []int) (*Forest, *prepared, [][]uint64, error) {
	pr, err := prepare(d, opt)
	if err != nil {
		return nil, nil, nil, err
	}
	opt = pr.Options
	f := pr.NewForest(opt.Trees)
	b := newBuilder(pr, f.Binner)
	draws := pr.Draws
	switch {
	case b.rowsOptional && !opt.KeepLeafSamples:
		// One copy of the codes instead of two (MNIST: 47 MB), its
		// mostly-one-code columns sparse (columnCodes: MNIST's take 15
		// MB): the trees read it, and the out-of-bag score transposes
		// blocks of rows back from it (rowCodes).
		b.cols = newColumnCodes(b.xc, pr.Rows, pr.Cols, opt.Threads)
		b.rowNZ = b.cols.rowBits(opt.Threads)
		b.noMissing = make([]bool, pr.Cols)
		for j := range b.noMissing {
			b.noMissing[j] = !b.cols.holds(j, b.miss[j])
		}
		b.xb, b.xc = nil, nil
		pr.Codes, pr.CodesByColumn, pr.Columns = nil, nil, b.cols
	case b.xc == nil:
		pr.CodesByColumn = nil // binned by column but read by row
	}

	f.Trees = make([]Tree, opt.Trees)
	var inbag [][]uint64
	if opt.OOB {
		inbag = make([][]uint64, opt.Trees)
	}
	if mine == nil {
		mine = make([]int, opt.Trees)
		for t := range mine {
			mine[t] = t
		}
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := 0; w < min(opt.Threads, len(mine)); w++ {
		wb := newWorker(b)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= len(mine) {
					return
				}
				t := mine[i]
				if opt.NoBootstrap {
					for i := range wb.counts {
						wb.counts[i] = 1
					}
				} else {
					core.BootstrapCounts(opt.Seed, t, draws, wb.counts)
				}
				if inbag != nil {
					inbag[t] = core.InBagMask(wb.counts)
				}
				wb.buildTree(t, &f.Trees[t])
			}
		}()
	}
	wg.Wait()
	return f, pr, inbag, nil
}

// newBuilder sets up the learner of pr's trees (the split-search paths,
// their layouts, the reciprocals of the weights) for binner's edges; each
// goroutine grows trees with a newWorker of it.
func newBuilder(pr *prepared, binner *Binner) *builder {
	opt := pr.Options
	n, p := pr.Rows, pr.Cols
	b := &builder{n: n, p: p, seed: opt.Seed, maxDepth: opt.MaxDepth, minLeaf: opt.MinSamplesLeaf, minSplit: opt.MinSamplesSplit, minWF: opt.MinWeightFractionLeaf}
	b.k = pr.K
	b.cls, b.yq = pr.Class, pr.YQ
	b.d = pr.Outputs
	b.entropy = opt.Task == Classification && opt.Criterion == Entropy
	b.stride = 2 + b.d
	b.edges = binner.Edges
	b.cat = catFeatures(binner)
	b.prep = pr
	b.cwords = (p + 63) / 64
	b.nb, b.off, b.miss, b.entries = pr.NumBins, pr.Offsets, pr.MissCode, pr.Entries
	// Path choice (costs per node of n rows, k of p features examined, B bins):
	// dense histograms cost about p·n/2 to build and p·B to subtract, the
	// rows path k·(n + B), the sorted path k·n + p·n. Dense pays when most
	// features are examined; below small (or sortAt) rows the sorted path wins.
	b.small = max(16, 2*b.entries/p)
	b.dense = 2*b.k > p
	b.sortAt = b.small
	if !b.dense {
		b.sortAt = 0
	}
	// The rows path's layouts (builder.xc): a local block of at most
	// about 8 MiB for small subtrees, the column-major copy above.
	b.localAt = max(256, localBytes/p)
	switch pathOverride {
	case "dense":
		b.dense, b.small, b.sortAt = true, 0, 0
	case "rows": // row-major codes only
		b.dense, b.sortAt, b.localAt = false, 0, 0
	case "columns": // the column-major copy for every node
		b.dense, b.sortAt, b.localAt = false, 0, 0
		b.xc = columnsOf(pr)
	case "local": // one local block from the root
		b.dense, b.sortAt, b.localAt = false, 0, n
	case "sorted":
		b.dense, b.sortAt = false, 1<<30
	}
	// A sorted list's entry holds a local row in entRowBits bits.
	b.sortAt = min(b.sortAt, 1<<entRowBits)
	if opt.Splitter == Random {
		// The random splitter reads codes the way the rows path does and
		// keeps no histograms (scanRandom), whatever the path override.
		b.random = true
		b.dense, b.sortAt = false, 0
		if pathOverride == "dense" || pathOverride == "sorted" {
			b.localAt = max(256, localBytes/p)
		}
		pathOverride := pathOverride
		if pathOverride == "dense" || pathOverride == "sorted" {
			pathOverride = ""
		}
		if pathOverride == "" && b.xc == nil && n > b.localAt {
			b.xc = columnsOf(pr)
		}
	}
	if pathOverride == "" && !b.dense && b.sortAt < n && n > b.localAt && b.xc == nil {
		b.xc = columnsOf(pr)
	}
	if !b.random && (b.dense || pathOverride == "sorted") {
		b.localAt = 0
	}
	// Every read of the rows path can be served by the column-major copy
	// (large nodes read it, local blocks gather from it): Fit may drop the
	// row-major codes (rowsOptional).
	b.rowsOptional = pathOverride == "" && b.xc != nil && !b.dense && !b.random && b.sortAt == 0 && b.localAt > 0
	if pr.Codes == nil && !(b.rowsOptional && !opt.KeepLeafSamples) {
		// Binned by column, and read by row too.
		pr.Codes = core.RowMajor(pr.CodesByColumn, n, p, opt.Threads)
	}
	b.xb = pr.Codes
	draws := pr.Draws
	// Packed local Gini scans (scanLocalGini) need every sum of weights
	// below 2^32 and of rows below 2^31.
	b.packed = b.cls != nil && !b.entropy && !b.random && draws < 1<<32 && pr.WeightBound < 1<<32 && n < 1<<31 && b.d <= maxPacked

	// Reciprocals of every possible weight, for regressionScoreRec (of
	// the weights up to 2^20 when weighted: recip divides beyond).
	b.rec = make([]float64, draws+1)
	for w := 1; w <= draws; w++ {
		b.rec[w] = 1 / float64(w)
	}
	if pr.W != nil {
		top := int(min(pr.WeightBound, 1<<20))
		b.rec = make([]float64, top+1)
		for w := 1; w <= top; w++ {
			b.rec[w] = 1 / float64(w)
		}
	} else if opt.NoBootstrap {
		b.rec = make([]float64, n+1)
		for w := 1; w <= n; w++ {
			b.rec[w] = 1 / float64(w)
		}
	}

	return b
}

// columnsOf returns pr's codes column-major (see builder.xc): the copy
// binning by column made, else the row-major codes transposed.
func columnsOf(pr *prepared) []uint8 {
	if pr.CodesByColumn != nil {
		return pr.CodesByColumn
	}
	return columnMajor(pr.Codes, pr.Rows, pr.Cols, pr.Options.Threads)
}

// columnMajor returns the n x p row-major codes transposed, feature by
// feature (see builder.xc).
func columnMajor(xb []uint8, n, p, threads int) []uint8 {
	xc := make([]uint8, n*p)
	const block = 64 // rows at a time
	parallelRows((n+block-1)/block, threads, func(blo, bhi int) {
		for r0 := blo * block; r0 < min(bhi*block, n); r0 += block {
			r1 := min(r0+block, n)
			for j := 0; j < p; j++ {
				dst := xc[j*n+r0 : j*n+r1]
				for i := range dst {
					dst[i] = xb[(r0+i)*p+j]
				}
			}
		}
	})
	return xc
}

// classLabels checks that y holds class indices and returns the class names.
func classLabels(y []float64, names []string) ([]string, []int32, error) {
	cls := make([]int32, len(y))
	k := 0
	for i, v := range y {
		if v < 0 || v != math.Trunc(v) || v > 1<<20 {
			return nil, nil, fmt.Errorf("forest: row %d: class label %v is not a non-negative integer", i, v)
		}
		cls[i] = int32(v)
		k = max(k, int(v)+1)
	}
	if names != nil {
		if k > len(names) {
			return nil, nil, fmt.Errorf("forest: class index %d but only %d class names", k-1, len(names))
		}
		return names, cls, nil
	}
	names = make([]string, k)
	for i := range names {
		names[i] = fmt.Sprint(i)
	}
	return names, cls, nil
}

// fixedPoint converts the regression target to centred fixed point: y ≈
// ymean + yq/scale, with scale a power of two small enough that any weighted
// sum over the rows fits in an int64.
func fixedPoint(y []float64, w []int64, copies bool, bound int64) (yq []int64, ymean, scale float64, err error) {
	var sum, total float64
	for i, v := range y {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, 0, 0, fmt.Errorf("forest: row %d: target %v is not a finite number", i, v)
		}
		switch {
		case w == nil:
			sum += v
		case copies:
			// A row of integer weight k counts as k copies of it (in
			// place), so that integer weights fit as duplicated rows do.
			for range w[i] {
				sum += v
			}
		default:
			sum += float64(float64(w[i]) * v) // no FMA: see R2
		}
		if w != nil {
			total += float64(w[i])
		}
	}
	if w == nil {
		total = float64(len(y))
	}
	ymean = sum / total
	var maxAbs float64
	for i, v := range y {
		if w == nil || w[i] > 0 {
			maxAbs = max(maxAbs, math.Abs(v-ymean))
		}
	}
	scale = 1
	if maxAbs > 0 {
		// Σ w·|yq| <= bound·maxAbs·scale <= 2^61: bound is the rows
		// (unweighted: draws never exceed them) or the weight bound.
		e := math.Floor(61 - math.Log2(float64(bound)*maxAbs))
		scale = math.Ldexp(1, int(min(e, 900)))
	}
	yq = make([]int64, len(y))
	for i, v := range y {
		yq[i] = int64(math.Round((v - ymean) * scale))
	}
	return yq, ymean, scale, nil
}

// computeOOB computes the out-of-bag score: each row is predicted by the
// trees that did not draw it, summed in tree order; the score weighs
// each row by its sample weight sw[i] (sw nil: 1 each).
func (f *Forest) computeOOB(codes rowCodes, y []float64, inbag [][]uint64, cls []int32, sw []float64) {
	n, p, d := len(y), f.NumFeatures, f.Outputs()
	miss := f.missCodes()
	pred := make([]float64, n*d)
	cnt := make([]int32, n)
	// Blocks of 64 rows, so that a small data set uses every thread too;
	// each row's sum is still added in tree order.
	var bufs sync.Pool // blocks of rows transposed from column-major codes
	parallelBlocks(n, f.Options.Threads, 64, func(lo, hi int) {
		var block []uint8
		if codes.xb == nil {
			buf, _ := bufs.Get().([]uint8)
			block = codes.rows(lo, hi, buf)
			defer bufs.Put(block[:0])
		} else {
			block = codes.rows(lo, hi, nil)
		}
		for t := range f.Trees {
			tr := &f.Trees[t]
			mask := inbag[t]
			for i := lo; i < hi; i++ {
				if mask[i/64]&(1<<(i%64)) != 0 {
					continue
				}
				leaf := tr.leafCodes(block[(i-lo)*p:(i-lo+1)*p], miss)
				for q := 0; q < d; q++ {
					pred[i*d+q] += tr.Value[leaf*d+q]
				}
				cnt[i]++
			}
		}
	})
	// The score's sums in row order, each row weighing its sample
	// weight (1 without weights: the plain R² and accuracy, bit for bit).
	w := func(i int) float64 {
		if sw == nil {
			return 1
		}
		return sw[i]
	}
	var m int
	var tw, sy float64
	for i := range y {
		if cnt[i] > 0 && w(i) > 0 {
			tw += w(i)
			sy += float64(w(i) * y[i]) // no FMA: see R2
			m++
		}
	}
	if m == 0 {
		return
	}
	if f.Options.Task == Regression {
		mean := sy / tw
		var sse, sst float64
		for i := range y {
			if cnt[i] > 0 && w(i) > 0 {
				e := pred[i]/float64(cnt[i]) - y[i]
				sse += float64(w(i) * float64(e*e))
				sst += float64(w(i) * float64((y[i]-mean)*(y[i]-mean)))
			}
		}
		f.OOBScore, f.OOBRows = 1-sse/sst, m
		return
	}
	var correct float64
	for i := range y {
		if cnt[i] > 0 && w(i) > 0 && argmax(pred[i*d:(i+1)*d]) == int(cls[i]) {
			correct += w(i)
		}
	}
	f.OOBScore, f.OOBRows = correct/tw, m
}

func (f *Forest) missCodes() []uint8 {
	miss := make([]uint8, f.NumFeatures)
	for j := range miss {
		miss[j] = f.Binner.MissingCode(j)
	}
	return miss
}

// argmax returns the index of the first largest value.
func argmax(v []float64) int {
	best := 0
	for i, x := range v {
		if x > v[best] {
			best = i
		}
	}
	return best
}

// parallelRows runs fn over [0,n) in contiguous blocks on up to threads goroutines.
func parallelRows(n, threads int, fn func(lo, hi int)) {
	parallelBlocks(n, threads, 1024, fn)
}

// parallelBlocks is parallelRows with a given block size.
func parallelBlocks(n, threads, block int, fn func(lo, hi int)) {
	if threads <= 0 {
		threads = runtime.NumCPU()
	}
	nb := (n + block - 1) / block
	if threads == 1 || nb <= 1 {
		fn(0, n)
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := 0; w < min(threads, nb); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				b := int(next.Add(1) - 1)
				if b >= nb {
					return
				}
				fn(b*block, min(n, (b+1)*block))
			}
		}()
	}
	wg.Wait()
}

// ErrShape is wrapped by prediction errors about input dimensions.
var ErrShape = errors.New("wrong input shape")
