package forest

import (
	"encoding/csv"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/gotrain/gotrain/data"
	"github.com/gotrain/gotrain/internal/atomicfile"
)

// Explanation holds per-row feature contributions to a forest's
// predictions: SHAP values by exact path-dependent TreeSHAP (Lundberg et
// al., "Consistent individualized feature attribution for tree
// ensembles", 2018, algorithm 2). For each row and output (the value, or
// each class's probability), the contributions of all features plus the
// expected value equal the forest's prediction, up to rounding.
//
// The expected value of a tree is the mean of its leaf values weighted by
// the bootstrap-weighted rows that reached each leaf (Tree.Weight, the
// trees' "cover"); a feature outside a row's conditioning set follows both
// branches of a node in the proportion of their weights. The forest's
// values are the means over its trees, as its predictions are. A row
// follows a node's branch by its binned code, as in prediction: missing
// values take the side the node learnt.
//
// Its JSON form is the report of `gotrain forest explain --json`.
type Explanation struct {
	// Forest is the forest explained.
	Forest *Forest `json:"-"`
	// Rows is the number of rows explained.
	Rows int `json:"rows"`
	// Trees is the forest's number of trees.
	Trees int `json:"trees"`
	// Seconds is the time the computation took.
	Seconds float64 `json:"explain_seconds"`
	// Values holds Rows x Outputs x NumFeatures contributions: feature
	// j's to output q of row i is Values[(i*Outputs+q)*NumFeatures+j].
	Values []float64 `json:"-"`
	// Expected holds the forest's expected value of each output.
	Expected []float64 `json:"expected_value"`
	// Out is the file the contributions were written to ("" for
	// standard output); set by the caller.
	Out string `json:"out,omitempty"`
}

// pathElem is one element of TreeSHAP's unique path: a feature on the
// way from the root, the fraction of the paths that do not condition on
// it that go this way (zero), whether the row goes this way (one), and
// the permutation weight of the subsets of the path's length.
type pathElem struct {
	feature   int
	zero, one float64
	weight    float64
}

// extendPath appends (feature, zero, one) to the unique path of depth
// elements path[:depth] and updates the permutation weights.
func extendPath(path []pathElem, depth int, zero, one float64, feature int) {
	path[depth] = pathElem{feature: feature, zero: zero, one: one}
	if depth == 0 {
		path[0].weight = 1
	}
	for i := depth - 1; i >= 0; i-- {
		path[i+1].weight += one * path[i].weight * float64(i+1) / float64(depth+1)
		path[i].weight = zero * path[i].weight * float64(depth-i) / float64(depth+1)
	}
}

// unwindPath undoes the extension of element index of path[:depth+1].
func unwindPath(path []pathElem, depth, index int) {
	one, zero := path[index].one, path[index].zero
	next := path[depth].weight
	for i := depth - 1; i >= 0; i-- {
		if one != 0 {
			tmp := path[i].weight
			path[i].weight = next * float64(depth+1) / (float64(i+1) * one)
			next = tmp - path[i].weight*zero*float64(depth-i)/float64(depth+1)
		} else {
			path[i].weight = path[i].weight * float64(depth+1) / (zero * float64(depth-i))
		}
	}
	for i := index; i < depth; i++ {
		path[i].feature, path[i].zero, path[i].one = path[i+1].feature, path[i+1].zero, path[i+1].one
	}
}

// unwoundPathSum is the total permutation weight of path[:depth+1] with
// element index unwound, without changing the path.
func unwoundPathSum(path []pathElem, depth, index int) float64 {
	one, zero := path[index].one, path[index].zero
	next := path[depth].weight
	var total float64
	if one != 0 {
		for i := depth - 1; i >= 0; i-- {
			tmp := next / (float64(i+1) * one)
			total += tmp
			next = path[i].weight - tmp*zero*float64(depth-i)
		}
	} else {
		for i := depth - 1; i >= 0; i-- {
			total += path[i].weight / (zero * float64(depth-i))
		}
	}
	return total * float64(depth+1)
}

// treeSHAP adds tree t's contributions for the binned row codes (missing
// codes miss) to phi (NumFeatures x d: feature j's to output q at
// phi[q*p+j]). buf holds at least (depth+2)(depth+3)/2 elements for the
// tree's depth.
type treeSHAP struct {
	t      *Tree
	codes  []uint8
	miss   []uint8
	d, p   int
	phi    []float64
	buf    []pathElem
	weight []float64 // the tree's node weights as float64
}

// recurse is TreeSHAP's RECURSE at node with the parent's unique path at
// buf[parent:parent+depth+1] (depth elements in use) and the fractions
// of the edge into node.
func (s *treeSHAP) recurse(node, parent, depth int, pzero, pone float64, pfeature int) {
	t := s.t
	off := parent + depth + 1
	path := s.buf[off : off+depth+2]
	copy(path, s.buf[parent:parent+depth+1])
	extendPath(path, depth, pzero, pone, pfeature)
	f := int(t.Feature[node])
	if f < 0 {
		vals := t.Value[node*s.d : (node+1)*s.d]
		for i := 1; i <= depth; i++ {
			el := path[i]
			w := unwoundPathSum(path, depth, i) * (el.one - el.zero)
			for q, v := range vals {
				s.phi[q*s.p+el.feature] += w * v
			}
		}
		return
	}
	left := int(t.Left[node])
	hot, cold := left, left+1
	if !t.goesLeft(int32(node), s.codes[f], s.miss[f]) {
		hot, cold = cold, hot
	}
	w := s.weight[node]
	izero, ione := 1.0, 1.0
	k := 0
	for ; k <= depth; k++ {
		if path[k].feature == f {
			break
		}
	}
	if k <= depth {
		izero, ione = path[k].zero, path[k].one
		unwindPath(path, depth, k)
		depth--
	}
	s.recurse(hot, off, depth+1, s.weight[hot]/w*izero, ione, f)
	s.recurse(cold, off, depth+1, s.weight[cold]/w*izero, 0, f)
}

// expected returns tree t's expected value of each of its d outputs: its
// leaf values weighted by their rows' weights.
func expected(t *Tree, d int) []float64 {
	e := make([]float64, d)
	for node, f := range t.Feature {
		if f >= 0 {
			continue
		}
		w := float64(t.Weight(node))
		for q := range e {
			e[q] += w * t.Value[node*d+q]
		}
	}
	for q := range e {
		e[q] /= float64(t.Weight(0))
	}
	return e
}

// maxSHAPDepth bounds the trees SHAP explains: its path buffer holds
// (depth+2)(depth+3)/2 elements per goroutine (about 16 MiB at 1023), and
// a model file may hold far deeper trees.
const maxSHAPDepth = 1023

// SHAP returns the contributions of each feature to the predictions of
// each row of the row-major matrix x (see Explanation). It costs, for
// each row and tree, about the tree's leaves times its depth squared;
// rows are spread over Options.Threads goroutines, and the values do not
// depend on their number.
func (f *Forest) SHAP(x []float64, rows int) (*Explanation, error) {
	if err := f.check(x, rows); err != nil {
		return nil, err
	}
	start := time.Now()
	p, d := f.NumFeatures, f.Outputs()
	nt := len(f.Trees)
	e := &Explanation{Forest: f, Rows: rows, Trees: nt, Values: make([]float64, rows*d*p), Expected: make([]float64, d)}
	if nt == 0 {
		return e, nil
	}
	weights := make([][]float64, nt)
	maxDepth := 0
	for k := range f.Trees {
		t := &f.Trees[k]
		if err := t.Check(); err != nil {
			return nil, fmt.Errorf("forest: tree %d: %w", k, err)
		}
		for q, v := range expected(t, d) {
			e.Expected[q] += v
		}
		w := make([]float64, t.NumNodes())
		for i := range w {
			w[i] = float64(t.Weight(i))
		}
		weights[k] = w
		maxDepth = max(maxDepth, t.Depth())
	}
	inv := 1 / float64(nt)
	for q := range e.Expected {
		e.Expected[q] *= inv
	}
	if maxDepth > maxSHAPDepth {
		return nil, fmt.Errorf("forest: SHAP: a tree of depth %d; TreeSHAP's path buffers grow with the depth squared and take trees of depth at most %d", maxDepth, maxSHAPDepth)
	}
	miss := make([]uint8, p)
	for j := range miss {
		miss[j] = f.Binner.MissingCode(j)
	}
	bufLen := (maxDepth + 2) * (maxDepth + 3) / 2
	parallelBlocks(rows, f.Options.Threads, 64, func(lo, hi int) {
		codes := make([]uint8, p)
		s := treeSHAP{codes: codes, miss: miss, d: d, p: p, buf: make([]pathElem, bufLen)}
		for i := lo; i < hi; i++ {
			for j, v := range x[i*p : (i+1)*p] {
				codes[j] = f.Binner.Code(j, v)
			}
			s.phi = e.Values[i*d*p : (i+1)*d*p]
			for k := range f.Trees {
				s.t, s.weight = &f.Trees[k], weights[k]
				s.recurse(0, 0, 0, 1, 1, -1)
			}
			for k := range s.phi {
				s.phi[k] *= inv
			}
		}
	})
	e.Seconds = time.Since(start).Seconds()
	return e, nil
}

// ExplainData returns the SHAP values (Forest.SHAP) of the rows of d,
// whose columns are picked by name as Forest.PredictData does.
func (f *Forest) ExplainData(d *data.Dataset) (*Explanation, error) {
	x, err := f.FeatureMatrix(d)
	if err != nil {
		return nil, err
	}
	return f.SHAP(x, d.Rows)
}

// ExplainFile loads the model file model and explains the rows of the
// data file dataFile (CSV, Parquet or Arrow: data.LoadFile, at most maxBytes; 0 means
// data's default cap): what `gotrain forest explain` does before writing.
func ExplainFile(model, dataFile string, maxBytes int64) (*Explanation, error) {
	f, err := LoadFile(model)
	if err != nil {
		return nil, err
	}
	d, err := data.LoadFile(dataFile, data.CSVOptions{NoTarget: true, MaxBytes: maxBytes})
	if err != nil {
		return nil, err
	}
	return f.ExplainData(d)
}

// columns returns the CSV header of the explanation: for a regression
// forest one column per feature (its name, or f0, f1... when the forest
// has none) and "expected_value"; for a classifier the same for each
// class in turn, each name followed by ":" and the class.
func (e *Explanation) columns() []string {
	f := e.Forest
	names := make([]string, 0, f.NumFeatures+1)
	for j := 0; j < f.NumFeatures; j++ {
		if j < len(f.Features) {
			names = append(names, f.Features[j])
		} else {
			names = append(names, "f"+strconv.Itoa(j))
		}
	}
	names = append(names, "expected_value")
	if f.Options.Task != Classification {
		return names
	}
	cols := make([]string, 0, len(names)*len(f.Classes))
	for _, c := range f.Classes {
		for _, n := range names {
			cols = append(cols, n+":"+c)
		}
	}
	return cols
}

// WriteCSV writes the contributions as CSV, one line per row under the
// header that columns describes. Numbers are written in the shortest form
// that reads back exactly.
func (e *Explanation) WriteCSV(w io.Writer) error {
	if err := e.writeCSV(w); err != nil {
		return fmt.Errorf("forest: writing SHAP values: %w", err)
	}
	return nil
}

// writeCSV is WriteCSV with unwrapped errors.
func (e *Explanation) writeCSV(w io.Writer) error {
	p, d := e.Forest.NumFeatures, e.Forest.Outputs()
	if len(e.Values) != e.Rows*d*p || len(e.Expected) != d {
		return fmt.Errorf("%w: %d values and %d expected values for %d rows of %d outputs and %d features", ErrShape, len(e.Values), len(e.Expected), e.Rows, d, p)
	}
	cw := csv.NewWriter(w)
	if err := cw.Write(e.columns()); err != nil {
		return err
	}
	rec := make([]string, 0, d*(p+1))
	for i := 0; i < e.Rows; i++ {
		rec = rec[:0]
		for q := 0; q < d; q++ {
			for _, v := range e.Values[(i*d+q)*p : (i*d+q+1)*p] {
				rec = append(rec, strconv.FormatFloat(v, 'g', -1, 64))
			}
			rec = append(rec, strconv.FormatFloat(e.Expected[q], 'g', -1, 64))
		}
		if err := cw.Write(rec); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// WriteFile writes the contributions as WriteCSV does to the named file,
// atomically (internal/atomicfile), as Predictions.WriteFile does.
func (e *Explanation) WriteFile(path string) error {
	if err := atomicfile.Write(path, e.writeCSV); err != nil {
		return fmt.Errorf("forest: writing SHAP values to %s: %w", path, err)
	}
	return nil
}
