package forest

// Tree is one fitted tree in flat arrays, nodes in breadth-first order (the
// root is node 0, children come after their parent, and a node's right child
// is the node after its left child).
type Tree struct {
	// Feature is the split feature of each node, -1 at leaves.
	Feature []int32
	// Bin is the split bin: rows whose bin code is <= Bin go left.
	Bin []uint8
	// Threshold is the split threshold on raw values (Edges[Feature][Bin]):
	// rows with value <= Threshold go left.
	Threshold []float64
	// MissingLeft tells whether rows with a missing value go left.
	MissingLeft []bool
	// Left is the index of the left child (the right child is Left+1), -1 at leaves.
	Left []int32
	// Value holds Outputs values per node: the mean target (regression) or the
	// class probabilities (classification) of the node's training rows.
	Value []float64
	// Samples is the number of distinct training rows that reached each node.
	Samples []int32
	// Weight is the bootstrap-weighted number of rows that reached each node.
	Weight []int64
	// Gain is the split's weighted impurity decrease (0 at leaves), used for importances.
	Gain []float64
	// Category is, for each node that splits a categorical feature, the
	// index of its category set in Sets, and -1 for the other nodes; it
	// is nil when no node does. The k-th such node, in node order, has
	// set k. Such a node has Bin 0, Threshold 0 (its set decides), and MissingLeft telling
	// whether its set holds the missing code.
	Category []int32
	// Sets are the category sets of the categorical splits: the codes
	// (Binner.Code) whose rows go left.
	Sets []CategorySet
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
func (t *Tree) Depth() int {
	depth := make([]int, len(t.Feature))
	d := 0
	for i, f := range t.Feature {
		if f >= 0 {
			l := t.Left[i]
			depth[l], depth[l+1] = depth[i]+1, depth[i]+1
			d = max(d, depth[i]+1)
		}
	}
	return d
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
