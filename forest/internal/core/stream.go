package core

import "github.com/gotrain/gotrain/rng"

// The random stream.
//
// Every random choice the learners make comes from a counter-based
// generator: a value is a pure function of (seed, tree index, purpose,
// counter), so trees can be built in any order, on any number of threads
// or on an accelerator, and make the same choices. Package forestgraph
// reproduces these functions with 64-bit integer graph operations; change
// them only together (docs/FOREST.md, "The random stream").

// The purposes of the streams of one tree.
const (
	// PurposeBootstrap draws the bootstrap sample (BootstrapCounts).
	PurposeBootstrap uint64 = 1
	// PurposeFeatures orders the features at a node (FeaturePriority).
	PurposeFeatures uint64 = 2
	// PurposePermute shuffles a column for permutation importance.
	PurposePermute uint64 = 3
	// PurposeThreshold draws the random splitter's threshold of a feature
	// at a node (ThresholdDraw).
	PurposeThreshold uint64 = 4
)

// StreamKey returns the key of the random stream for one tree and purpose
// (rng.Key(seed, tree, purpose)).
func StreamKey(seed uint64, tree int, purpose uint64) uint64 {
	return rng.Key(seed, uint64(tree), purpose)
}

// RootKey is the key of every tree's root node.
const RootKey uint64 = 1

// ChildKey returns the key of a node's left (side 0) or right (side 1) child.
// The root's key is RootKey. Keys identify nodes independently of the order in
// which a learner grows them.
func ChildKey(parent uint64, side uint64) uint64 {
	return rng.Mix(parent*2 + side + rng.Golden)
}

// BootstrapCounts fills counts with how many times each of len(counts) rows is
// drawn for tree t: draws draws, the i-th of which picks row
// rng.Below(rng.At(StreamKey(seed, t, PurposeBootstrap), i), n).
func BootstrapCounts(seed uint64, t int, draws int, counts []int32) {
	clear(counts)
	key := StreamKey(seed, t, PurposeBootstrap)
	n := len(counts)
	for i := 0; i < draws; i++ {
		counts[rng.Below(rng.At(key, uint64(i)), n)]++
	}
}

// FeaturePriority returns feature j's priority at the node with the given key
// in tree t: the node considers features in increasing (priority>>16, j) order.
func FeaturePriority(seed uint64, t int, nodeKey uint64, j int) uint64 {
	return FeaturePriorityAt(NodeFeatureKey(seed, t, nodeKey), j)
}

// ThresholdDraw returns the random value from which the random splitter
// (Options.Splitter "random") draws feature j's threshold at the node
// with the given key in tree t.
func ThresholdDraw(seed uint64, t int, nodeKey uint64, j int) uint64 {
	return rng.At(StreamKey(seed, t, PurposeThreshold)^nodeKey, uint64(j))
}

// NodeFeatureKey returns the key from which FeaturePriorityAt draws the
// priorities of the features at the node with the given key in tree t, so
// that a node hashes its seed and tree once rather than per feature.
func NodeFeatureKey(seed uint64, t int, nodeKey uint64) uint64 {
	return StreamKey(seed, t, PurposeFeatures) ^ nodeKey
}

// FeaturePriorityAt returns feature j's priority at the node whose
// NodeFeatureKey is nk: FeaturePriority(seed, t, nodeKey, j).
func FeaturePriorityAt(nk uint64, j int) uint64 {
	return rng.At(nk, uint64(j))
}

// InBagMask returns the bit mask of the rows with positive counts
// (bit i%64 of word i/64 for row i).
func InBagMask(counts []int32) []uint64 {
	mask := make([]uint64, (len(counts)+63)/64)
	for i, c := range counts {
		if c > 0 {
			mask[i/64] |= 1 << (i % 64)
		}
	}
	return mask
}
