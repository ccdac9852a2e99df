package forest

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"sync"
	"unicode/utf8"

	"github.com/gotrain/gotrain/data"
	"github.com/gotrain/gotrain/forest/internal/core"
)

// prepared is the host-side preparation of a training set that both
// learners share: validated options, bin codes, the fixed-point target or
// the class labels, and the feature subsampling size. Fit grows trees from
// it on the CPU; package forestgraph grows the same trees as GoMLX graphs
// (it gets it through core.Prepare).
type prepared = core.Prepared[Options, *Forest]

func init() { core.Register(prepare) }

// prepare validates the data and the options and computes the host-side
// preparation of Fit.
func prepare(d *data.Dataset, opt Options) (*prepared, error) {
	if d == nil {
		return nil, errors.New("forest: nil data set")
	}
	opt, err := opt.withDefaults()
	if err != nil {
		return nil, err
	}
	n, p := d.Rows, d.Cols
	switch {
	case n < 1 || p < 1:
		return nil, fmt.Errorf("forest: need at least one row and one feature, got %d x %d", n, p)
	case n >= 1<<31-1:
		return nil, fmt.Errorf("forest: %d rows is too many", n)
	case p >= 1<<16-1:
		return nil, fmt.Errorf("forest: %d features is too many (at most %d)", p, 1<<16-2)
	case len(d.X) != n*p && !(d.X == nil && d.Source != nil):
		return nil, fmt.Errorf("forest: X has %d values, want rows*cols = %d", len(d.X), n*p)
	case len(d.Y) != n:
		return nil, fmt.Errorf("forest: Y has %d values, want %d", len(d.Y), n)
	case d.FeatureNames != nil && len(d.FeatureNames) != p:
		return nil, fmt.Errorf("forest: %d feature names for %d features", len(d.FeatureNames), p)
	}
	pr := &prepared{Options: opt, Rows: n, Cols: p, Y: d.Y}
	if pr.K, err = opt.featuresPerNode(p); err != nil {
		return nil, err
	}
	if pr.Draws, err = opt.draws(n); err != nil {
		return nil, err
	}
	if opt.Task == Classification {
		if pr.Classes, pr.Class, err = classLabels(d.Y, d.Classes); err != nil {
			return nil, err
		}
		pr.Outputs = len(pr.Classes)
	}
	if err := rowWeights(pr, d.Weights, opt.ClassWeight); err != nil {
		return nil, err
	}
	if opt.Task != Classification {
		if pr.YQ, pr.YMean, pr.Scale, err = fixedPoint(d.Y, pr.W, pr.Copies, pr.WeightBound); err != nil {
			return nil, err
		}
		pr.Outputs = 1
	}
	var binner *Binner
	if d.X == nil {
		binner, pr.CodesByColumn, err = binColumns(d, opt.Bins, pr.W, opt.Threads)
	} else {
		binner, pr.Codes, err = binMatrix(d, opt, pr.W)
	}
	if err != nil {
		return nil, err
	}
	pr.Edges = binner.Edges
	pr.NumBins = make([]int, p)
	pr.Offsets = make([]int, p)
	pr.MissCode = make([]uint8, p)
	for j := 0; j < p; j++ {
		pr.NumBins[j] = binner.NumBins(j)
		pr.Offsets[j] = pr.Entries
		pr.Entries += pr.NumBins[j] + 1
		pr.MissCode[j] = binner.MissingCode(j)
	}
	features, target := d.FeatureNames, d.TargetName
	pr.NewForest = func(trees int) *Forest {
		return &Forest{
			Options: opt, Features: features, Target: target, NumFeatures: p,
			Classes: pr.Classes, Binner: binner, Trees: make([]Tree, trees), OOBScore: math.NaN(),
		}
	}
	pr.Finish = func(f *Forest, inbag [][]uint64) error {
		if opt.OOB {
			if len(inbag) != len(f.Trees) {
				return fmt.Errorf("forest: out-of-bag score: %d in-bag masks for %d trees", len(inbag), len(f.Trees))
			}
			cols, _ := pr.Columns.(*columnCodes)
			f.computeOOB(rowCodes{xb: pr.Codes, cols: cols, n: n, p: p}, pr.Y, inbag, pr.Class, pr.Sample)
		}
		if opt.KeepLeafSamples {
			f.keepLeafSamples(pr.Codes, pr.Y, pr.W, pr.Draws)
		}
		// The predictor is compiled on the first prediction, when the
		// training codes may be gone: a fit that predicts nothing never
		// holds it (16 bytes a node for regression).
		return nil
	}
	return pr, nil
}

// binMatrix bins the features of d, held in d.X: their edges, then the
// codes of every row.
func binMatrix(d *data.Dataset, opt Options, w []int64) (*Binner, []uint8, error) {
	cats, err := categories(d)
	if err != nil {
		return nil, nil, err
	}
	binner, err := newBinner(d.X, d.Rows, d.Cols, opt.Bins, opt.Threads, w, cats)
	if err != nil {
		return nil, nil, err
	}
	return binner, binner.transform(d.X, d.Rows, d.Cols, nil, opt.Threads), nil
}

// binColumns bins the features of d read from d.Source one column at a
// time, into the same Binner and codes as binMatrix gives for the same
// data in d.X: memory holds the codes and a column of values per thread
// (twice, for the quantiles' sort), never the whole feature matrix. The
// columns are read in order on the calling goroutine and binned on up to
// threads goroutines, each into its own column of the codes, which it
// returns column-major (Prepared.CodesByColumn: the native learner's rows
// path reads them so, and makes the row-major ones only if it needs them;
// core.Prepare makes them for the other learners). It fills
// d.Categories as it reads the categorical columns. Errors are those the
// columns give in column order.
func binColumns(d *data.Dataset, maxBins int, w []int64, threads int) (bn *Binner, byColumn []uint8, err error) {
	if maxBins < 2 || maxBins > 256 {
		return nil, nil, fmt.Errorf("forest: bins = %d, want 2..256", maxBins)
	}
	n, p := d.Rows, d.Cols
	if threads <= 0 {
		threads = runtime.NumCPU()
	}
	threads = max(1, min(threads, p))
	bn = &Binner{Edges: make([][]float64, p), keys: make([][]uint64, p)}
	byColumn = make([]uint8, n*p)
	dicts := make([][]string, p)
	errs := make([]error, p)
	type column struct {
		j      int
		vals   []float64
		bytes  []uint8       // a byte column's (data.ByteColumnSource), instead of vals
		values *[256]float64 // the value of each byte
	}
	bytesSrc, _ := d.Source.(data.ByteColumnSource)
	jobs := make(chan column)
	free := make(chan []float64, threads+1) // value buffers
	for range threads + 1 {
		free <- nil
	}
	var wg sync.WaitGroup
	for range threads {
		wg.Go(func() {
			var cb columnBinner
			for c := range jobs {
				if c.bytes != nil {
					errs[c.j] = binByteColumn(bn, &cb, c.j, c.bytes, c.values, w, maxBins, byColumn[c.j*n:(c.j+1)*n])
					continue
				}
				errs[c.j] = binColumn(d, bn, dicts[c.j], &cb, c.j, c.vals, w, maxBins, byColumn[c.j*n:(c.j+1)*n])
				free <- c.vals
			}
		})
	}
	var readErr error
	for j := 0; j < p && readErr == nil; j++ {
		if bytesSrc != nil {
			col, values, err := bytesSrc.ByteColumn(j)
			switch {
			case err != nil:
				readErr = err
			case len(col) != n:
				readErr = fmt.Errorf("forest: %s: feature column %d has %d values, want %d", d.Name, j+1, len(col), n)
			default:
				jobs <- column{j: j, bytes: col, values: values}
			}
			continue
		}
		vals, dict, err := d.Source.ReadColumn(j, <-free)
		switch {
		case err != nil:
			readErr = err
		case len(vals) != n:
			readErr = fmt.Errorf("forest: %s: feature column %d has %d values, want %d", d.Name, j+1, len(vals), n)
		default:
			dicts[j] = dict
			jobs <- column{j: j, vals: vals}
		}
	}
	close(jobs)
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, nil, err
		}
	}
	if readErr != nil {
		return nil, nil, readErr
	}
	for _, dict := range dicts {
		if dict != nil {
			bn.Categories, d.Categories = dicts, dicts
			break
		}
	}
	return bn, byColumn, nil
}

// binColumn sets feature j's edges and search keys in bn from its values
// vals (a categorical feature's when dict is not nil) and writes their
// codes to dst. It touches nothing of bn but feature j's entries.
func binColumn(d *data.Dataset, bn *Binner, dict []string, cb *columnBinner, j int, vals []float64, w []int64, maxBins int, dst []uint8) error {
	if dict != nil {
		if err := checkCategoryColumn(d, j, vals, 1, dict); err != nil {
			return err
		}
		e := categoryEdges(len(dict))
		bn.Edges[j], bn.keys[j] = e, edgeKeys(e)
		for i, v := range vals {
			if math.IsNaN(v) {
				dst[i] = uint8(len(e) + 1)
			} else {
				dst[i] = uint8(v) // checked: an index into dict
			}
		}
		return nil
	}
	e, err := cb.edges(vals, 1, len(vals), j, w, maxBins)
	if err != nil {
		return err
	}
	keys := edgeKeys(e) // Code's search keys (Binner.prepare)
	bn.Edges[j], bn.keys[j] = e, keys
	var last float64 = math.NaN()
	var code uint8
	// A column of few distinct values (most rows repeat one: images,
	// levels) looks its values' codes up in a cache instead of searching
	// the edges for every row.
	cache := cb.set.few()
	if cache && cb.codes == nil {
		cb.codes = new([1 << codeCacheBits]cachedCode)
	}
	cb.gen++
	tag := cb.gen
	for i, v := range vals {
		if v != last { // also true for NaN
			last = v
			switch {
			case math.IsNaN(v):
				code = uint8(len(e) + 1)
			case cache:
				bits := math.Float64bits(v)
				s := &cb.codes[(bits*0x9E3779B97F4A7C15)>>(64-codeCacheBits)]
				if s.tag != tag || s.bits != bits {
					s.bits, s.tag, s.code = bits, tag, numericCode(e, keys, v)
				}
				code = s.code
			default:
				code = numericCode(e, keys, v)
			}
		}
		dst[i] = code
	}
	return nil
}

// binByteColumn is binColumn for a numeric column of bytes (col, row i's
// value values[col[i]]): the bytes are counted, the distinct values and
// their counts give the edges binColumn's values would give (the same
// distinctSet, whose edges do not depend on the order values are added
// in), and each byte's code is looked up once.
func binByteColumn(bn *Binner, cb *columnBinner, j int, col []uint8, values *[256]float64, w []int64, maxBins int, dst []uint8) error {
	rows := countCodes(col) // rows holding each byte
	counts := rows          // their weight
	if w != nil {
		counts = [256]int{}
		for i, b := range col {
			if w[i] > 0 {
				counts[b] += int(w[i])
			}
		}
	}
	set := &cb.set
	set.reset()
	total := 0 // the weight of the values not missing, as binColumn counts it
	for b, k := range counts {
		switch v := values[b]; {
		case rows[b] > 0 && math.IsInf(v, 0):
			for i, c := range col { // binColumn's error: the first such row, whatever its weight
				if math.IsInf(values[c], 0) {
					return fmt.Errorf("forest: row %d, feature %d: infinite value", i, j)
				}
			}
		case k > 0 && !math.IsNaN(v):
			set.add(v, k)
			total += k
		}
	}
	e := set.edges(total, maxBins-1)
	keys := edgeKeys(e)
	bn.Edges[j], bn.keys[j] = e, keys
	var code [256]uint8
	for b, v := range values {
		if math.IsNaN(v) {
			code[b] = uint8(len(e) + 1)
		} else if !math.IsInf(v, 0) {
			code[b] = numericCode(e, keys, v)
		}
	}
	for i, b := range col {
		dst[i] = code[b]
	}
	return nil
}

// categories returns the category dictionaries of d's features for the
// Binner (nil when none is categorical), after checkCategoryColumn has
// checked each categorical column.
func categories(d *data.Dataset) ([][]string, error) {
	if !d.HasCategories() {
		return nil, nil
	}
	if len(d.Categories) != d.Cols {
		return nil, fmt.Errorf("forest: %d category dictionaries for %d features", len(d.Categories), d.Cols)
	}
	for j, dict := range d.Categories {
		if dict != nil {
			if err := checkCategoryColumn(d, j, d.X[j:], d.Cols, dict); err != nil {
				return nil, err
			}
		}
	}
	return d.Categories, nil
}

// checkCategoryColumn checks categorical feature j of a training set: its
// dictionary dict (at most MaxCategories categories, valid UTF-8, in
// increasing bytewise order) and its values, row i's at x[i*stride]: NaN
// or an index into dict (data.Unseen, a category outside the dictionary,
// cannot be trained on). Both binning paths, the matrix and the columns
// read one at a time, check with it.
func checkCategoryColumn(d *data.Dataset, j int, x []float64, stride int, dict []string) error {
	name := fmt.Sprintf("%d", j+1)
	if j < len(d.FeatureNames) {
		name = fmt.Sprintf("%q", d.FeatureNames[j])
	}
	if len(dict) > MaxCategories {
		return fmt.Errorf("forest: feature %s has %d categories, more than the %d a categorical feature may have", name, len(dict), MaxCategories)
	}
	for k, c := range dict {
		switch {
		case !utf8.ValidString(c):
			return fmt.Errorf("forest: feature %s: category %q is not valid UTF-8", name, c)
		case k > 0 && c <= dict[k-1]:
			return fmt.Errorf("forest: feature %s: categories %q and %q are not in increasing bytewise order", name, dict[k-1], c)
		}
	}
	for i := 0; i < d.Rows; i++ {
		switch v := x[i*stride]; {
		case math.IsNaN(v) || (v >= 0 && v < float64(len(dict)) && v == math.Trunc(v)):
		case v == data.Unseen:
			return fmt.Errorf("forest: row %d, feature %s: a category outside the feature's dictionary (data.Unseen) cannot be trained on", i+1, name)
		default:
			return fmt.Errorf("forest: row %d, feature %s: %v is not a category index (0..%d) or NaN", i+1, name, v, len(dict)-1)
		}
	}
	return nil
}
