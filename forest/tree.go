package forest

import (
	"errors"
	"fmt"
	"math"
)

// Tree is one fitted tree, nodes in breadth-first order (the root is node
// 0, children come after their parent, and a node's right child is the
// node after its left child): the k-th split in node order has its
// children at 2k+1 and 2k+2.
//
// Feature, Left and Value are kept per node; what only a split has (its
// bin, missing side and gain) is kept per split and the threshold is read
// from the binner's edges, and the row counts take 4 bytes a node when
// they fit; the methods of the same names read them. A regression tree
// takes about 29 bytes a node this way (46 as nine per-node arrays). Trees
// are made by Fit, the other learners and LoadModel, or by NewTree.
type Tree struct {
	// Feature is the split feature of each node, -1 at leaves.
	Feature []int32
	// Left is the index of the left child (the right child is Left+1), -1 at leaves.
	Left []int32
	// Value holds Outputs values per node: the mean target (regression) or the
	// class probabilities (classification) of the node's training rows.
	Value []float64
	// Category is, for each node that splits a categorical feature, the
	// index of its category set in Sets, and -1 for the other nodes; it
	// is nil when no node does. The k-th such node, in node order, has
	// set k. Such a node has Bin 0, Threshold 0 (its set decides), and MissingLeft telling
	// whether its set holds the missing code.
	Category []int32
	// Sets are the category sets of the categorical splits: the codes
	// (Binner.Code) whose rows go left.
	Sets []CategorySet

	// Per split k (the node whose Left is 2k+1):
	bin         []uint8
	missingLeft []bool
	gain        []float64
	// Per node:
	samples []int32
	weight  []uint32 // the weights while they all fit in 32 bits
	wide    []int64  // the weights once one does not (weight is then nil)
	// edges are the binner's bin edges (Binner.Edges), the thresholds of
	// the numeric splits.
	edges [][]float64
}

// NewTree returns a tree of n nodes (an odd number: each split has two
// children) with outputs values a node, every node a leaf (Feature and
// Left -1) with no rows and zero values; SetSplit, SetCounts and Value fill
// it in. edges are the bin edges of the binner whose codes the tree splits
// (Binner.Edges); a numeric split's threshold is edges[feature][bin].
func NewTree(n, outputs int, edges [][]float64) (Tree, error) {
	if n < 1 || n%2 == 0 || n > maxTreeNodes {
		return Tree{}, fmt.Errorf("forest: new tree: %d nodes, want an odd number in 1..%d", n, maxTreeNodes)
	}
	if outputs < 1 || int64(n)*int64(outputs) > maxTreeValues {
		return Tree{}, fmt.Errorf("forest: new tree: %d nodes of %d values each", n, outputs)
	}
	return newTree(n, outputs, edges), nil
}

// newTree is NewTree for sizes known to be valid.
func newTree(n, outputs int, edges [][]float64) Tree {
	s := (n - 1) / 2
	t := Tree{
		Feature: make([]int32, n), Left: make([]int32, n), Value: make([]float64, n*outputs),
		bin: make([]uint8, s), missingLeft: make([]bool, s), gain: make([]float64, s),
		samples: make([]int32, n), weight: make([]uint32, n), edges: edges,
	}
	for i := range t.Feature {
		t.Feature[i], t.Left[i] = -1, -1
	}
	return t
}

// SetSplit makes node i a split: rows whose code of feature is <= bin go
// to the left child left (the right child is left+1), rows with a missing
// value go left if missingLeft; gain is the split's weighted impurity
// decrease. In breadth-first order the k-th split's left child is 2k+1,
// which SetSplit requires.
func (t *Tree) SetSplit(i, feature int, bin uint8, missingLeft bool, left int, gain float64) error {
	n := len(t.Feature)
	switch {
	case i < 0 || i >= n:
		return fmt.Errorf("forest: set split: node %d of %d", i, n)
	case feature < 0 || feature > math.MaxInt32 || feature >= len(t.edges):
		return fmt.Errorf("forest: set split: node %d: feature %d of %d", i, feature, len(t.edges))
	case left <= i || left >= n-1 || left%2 == 0:
		return fmt.Errorf("forest: set split: node %d: left child %d of %d nodes (want an odd node after it)", i, left, n)
	}
	t.setSplit(i, int32(feature), bin, missingLeft, int32(left), gain)
	return nil
}

// setSplit is SetSplit for arguments known to be valid.
func (t *Tree) setSplit(i int, feature int32, bin uint8, missingLeft bool, left int32, gain float64) {
	k := (left - 1) >> 1
	t.Feature[i], t.Left[i] = feature, left
	t.bin[k], t.missingLeft[k], t.gain[k] = bin, missingLeft, gain
}

// SetCounts sets node i's Samples and Weight.
func (t *Tree) SetCounts(i int, samples int32, weight int64) {
	t.samples[i] = samples
	if t.weight != nil && uint64(weight) <= math.MaxUint32 {
		t.weight[i] = uint32(weight)
		return
	}
	if t.wide == nil {
		t.wide = make([]int64, len(t.weight))
		for j, w := range t.weight {
			t.wide[j] = int64(w)
		}
		t.weight = nil
	}
	t.wide[i] = weight
}

// Check returns an error unless t is a whole tree in breadth-first order
// whose arrays fit together, as a tree made by a learner or LoadModel is
// (and one made by NewTree once its splits are set): the k-th split's left
// child is 2k+1, every node but the root is some split's child, and the
// methods reading a node's split and counts may be called for every node.
// It does not check the splits against a binner (Forest.Save does).
func (t *Tree) Check() error {
	n := len(t.Feature)
	s := max(n-1, 0) / 2
	switch {
	case n == 0:
		return errors.New("no nodes")
	case len(t.Left) != n || len(t.samples) != n || len(t.weight)+len(t.wide) != n:
		return fmt.Errorf("%d nodes but %d left children, %d samples and %d weights", n, len(t.Left), len(t.samples), len(t.weight)+len(t.wide))
	case len(t.bin) != s || len(t.missingLeft) != s || len(t.gain) != s:
		return fmt.Errorf("%d nodes but %d, %d and %d split entries, want %d", n, len(t.bin), len(t.missingLeft), len(t.gain), s)
	case t.Category != nil && len(t.Category) != n:
		return fmt.Errorf("%d nodes but %d category indices", n, len(t.Category))
	}
	k := 0
	for i, l := range t.Left {
		if (l >= 0) != (t.Feature[i] >= 0) {
			return fmt.Errorf("node %d: feature %d with left child %d", i, t.Feature[i], l)
		}
		if l >= 0 {
			if int(l) != 2*k+1 || k >= s {
				return fmt.Errorf("node %d: left child %d, want %d (split %d of %d in breadth-first order)", i, l, 2*k+1, k, s)
			}
			k++
		}
	}
	if k != s {
		return fmt.Errorf("%d splits for %d nodes, want %d", k, n, s)
	}
	return nil
}

// split returns the index of node i's split among the splits (i is a split).
func (t *Tree) split(i int) int { return int(t.Left[i]-1) >> 1 }

// Bin is node i's split bin: rows whose bin code is <= Bin go left (0 at
// leaves and categorical splits).
func (t *Tree) Bin(i int) uint8 {
	if t.Left[i] < 0 {
		return 0
	}
	return t.bin[t.split(i)]
}

// MissingLeft tells whether rows with a missing value go left at node i
// (false at leaves).
func (t *Tree) MissingLeft(i int) bool {
	if t.Left[i] < 0 {
		return false
	}
	return t.missingLeft[t.split(i)]
}

// Threshold is node i's split threshold on raw values, the bin edge
// Edges[Feature][Bin]: rows with value <= Threshold go left (0 at leaves
// and categorical splits; +Inf for a bin past the feature's last edge,
// where every number goes left, and NaN for a feature without edges).
func (t *Tree) Threshold(i int) float64 {
	if t.Left[i] < 0 || (t.Category != nil && t.Category[i] >= 0) {
		return 0
	}
	f, b := t.Feature[i], t.bin[t.split(i)]
	switch {
	case int(f) >= len(t.edges):
		return math.NaN()
	case int(b) >= len(t.edges[f]):
		return math.Inf(1)
	}
	return t.edges[f][b]
}

// Gain is node i's split's weighted impurity decrease (0 at leaves), used
// for importances.
func (t *Tree) Gain(i int) float64 {
	if t.Left[i] < 0 {
		return 0
	}
	return t.gain[t.split(i)]
}

// Samples is the number of distinct training rows that reached node i.
func (t *Tree) Samples(i int) int32 { return t.samples[i] }

// Weight is the bootstrap-weighted number of rows that reached node i.
func (t *Tree) Weight(i int) int64 {
	if t.weight != nil {
		return int64(t.weight[i])
	}
	return t.wide[i]
}

// bytes returns the memory the tree's nodes take.
func (t *Tree) bytes() int64 {
	return int64(len(t.Feature))*4 + int64(len(t.Left))*4 + int64(len(t.Value))*8 + int64(len(t.Category))*4 +
		int64(len(t.Sets))*32 + int64(len(t.bin)) + int64(len(t.missingLeft)) + int64(len(t.gain))*8 +
		int64(len(t.samples))*4 + int64(len(t.weight))*4 + int64(len(t.wide))*8
}

// NumNodes returns the number of nodes.
func (t *Tree) NumNodes() int { return len(t.Feature) }

// NumLeaves returns the number of leaves.
func (t *Tree) NumLeaves() int {
	n := 0
	for _, f := range t.Feature {
		if f < 0 {
			n++
		}
	}
	return n
}

// Depth returns the depth of the deepest leaf (a lone root has depth 0).
// In breadth-first order each level is a range of nodes, which the count
// of splits so far delimits, so it allocates nothing.
func (t *Tree) Depth() int {
	depth, levelEnd, next := 0, 1, 1
	for i, f := range t.Feature {
		if i == levelEnd {
			depth, levelEnd = depth+1, next
		}
		if f >= 0 {
			next += 2
		}
	}
	return depth
}

// leafCodes returns the leaf a binned row reaches; miss[j] is feature j's missing code.
func (t *Tree) leafCodes(row []uint8, miss []uint8) int {
	i := int32(0)
	for {
		f := t.Feature[i]
		if f < 0 {
			return int(i)
		}
		if t.goesLeft(i, row[f], miss[f]) {
			i = t.Left[i]
		} else {
			i = t.Left[i] + 1
		}
	}
}
