package forest

// The random stream.
//
// Every random choice the learner makes comes from a counter-based generator:
// a value is a pure function of (seed, tree index, purpose, counter), so trees
// can be built in any order, on any number of threads or on an accelerator,
// and make the same choices. The accelerator learner reproduces these
// functions with 64-bit integer graph operations; change them only together.

const (
	golden                  = 0x9E3779B97F4A7C15
	purposeBootstrap uint64 = 1
	purposeFeatures  uint64 = 2
	purposePermute   uint64 = 3
)

// Mix is SplitMix64's finalizer: a bijective avalanche of 64 bits.
func Mix(z uint64) uint64 {
	z ^= z >> 30
	z *= 0xbf58476d1ce4e5b9
	z ^= z >> 27
	z *= 0x94d049bb133111eb
	z ^= z >> 31
	return z
}

// StreamKey returns the key of the random stream for one tree and purpose.
func StreamKey(seed uint64, tree int, purpose uint64) uint64 {
	return Mix(Mix(seed^golden) + uint64(tree)*golden + purpose)
}

// At returns the counter-th value of the stream with the given key.
func At(key, counter uint64) uint64 {
	return Mix(key + (counter+1)*golden)
}

// Below maps a random 64-bit value to [0, n) by multiply-shift on its high
// 32 bits (n must be below 2^32).
func Below(r uint64, n int) int {
	return int(((r >> 32) * uint64(n)) >> 32)
}

// ChildKey returns the key of a node's left (side 0) or right (side 1) child.
// The root's key is RootKey. Keys identify nodes independently of the order in
// which a learner grows them.
func ChildKey(parent uint64, side uint64) uint64 {
	return Mix(parent*2 + side + golden)
}

// RootKey is the key of every tree's root node.
const RootKey uint64 = 1

// BootstrapCounts fills counts with how many times each of len(counts) rows is
// drawn for tree t: draws draws, the i-th of which picks row
// Below(At(StreamKey(seed, t, purposeBootstrap), i), n).
func BootstrapCounts(seed uint64, t int, draws int, counts []int32) {
	clear(counts)
	key := StreamKey(seed, t, purposeBootstrap)
	n := len(counts)
	for i := 0; i < draws; i++ {
		counts[Below(At(key, uint64(i)), n)]++
	}
}

// FeaturePriority returns feature j's priority at the node with the given key
// in tree t: the node considers features in increasing (priority>>16, j) order.
func FeaturePriority(seed uint64, t int, nodeKey uint64, j int) uint64 {
	return At(StreamKey(seed, t, purposeFeatures)^nodeKey, uint64(j))
}
