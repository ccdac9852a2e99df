package data

import (
	"math"
	"math/bits"
	"math/rand/v2"
	"slices"
)

// splitStream is the second seed word of the PCG generator used by
// TrainTestSplit and KFold.
const splitStream = 0x5eed

// permutation returns a random permutation of 0..n-1 drawn from a PCG
// generator seeded with (seed, 0x5eed), by Fisher-Yates: for i from n-1 down
// to 1, swap element i with element j, where j is uniform in [0, i] and drawn
// by Lemire's multiply-and-reject method from the generator's 64-bit outputs.
// The procedure is spelled out here rather than left to math/rand/v2's
// helpers so that the result depends only on the seed.
func permutation(n int, seed uint64) []int {
	p := make([]int, n)
	for i := range p {
		p[i] = i
	}
	src := rand.NewPCG(seed, splitStream)
	for i := n - 1; i > 0; i-- {
		j := uint64n(src, uint64(i+1))
		p[i], p[j] = p[j], p[i]
	}
	return p
}

// uint64n returns a uniform value in [0, n) for n > 0 (Lemire 2019).
func uint64n(src *rand.PCG, n uint64) uint64 {
	hi, lo := bits.Mul64(src.Uint64(), n)
	if lo < n {
		thresh := -n % n
		for lo < thresh {
			hi, lo = bits.Mul64(src.Uint64(), n)
		}
	}
	return hi
}

// TrainTestSplit splits the indices 0..n-1 at random into a training set and
// a test set. The test set has ceil(n*testFraction) indices, as in
// scikit-learn's train_test_split, and the training set the rest; a
// testFraction of 0 or less (or NaN) gives an empty test set and one of 1 or
// more an empty training set, so callers that need both should check.
//
// The split is deterministic: the indices are permuted as described for a PCG
// generator (math/rand/v2) seeded with (seed, 0x5eed) and a Fisher-Yates
// shuffle; test is the first part of the permutation and train the rest, both
// in permutation order (not sorted). The two slices do not share memory. For
// n <= 0 both are empty.
func TrainTestSplit(n int, testFraction float64, seed uint64) (train, test []int) {
	if n <= 0 {
		return []int{}, []int{}
	}
	var nTest int
	switch {
	case !(testFraction > 0):
		nTest = 0
	case testFraction >= 1:
		nTest = n
	default:
		nTest = int(math.Ceil(testFraction * float64(n)))
	}
	p := permutation(n, seed)
	return p[nTest:], p[:nTest:nTest]
}

// KFold splits the indices 0..n-1 into k folds for cross-validation and
// returns, for each fold, {train, test} index sets: the fold's indices are
// the test set and all others the training set. Every index is in exactly one
// test set. As in scikit-learn's KFold, the first n%k folds have n/k+1
// indices and the others n/k; without shuffle the folds are consecutive
// blocks of 0..n-1; with shuffle the indices are first permuted as by
// [TrainTestSplit] with the same seed and the folds are consecutive blocks of
// the permutation. Within each fold, both sets are sorted in increasing
// order, as scikit-learn returns them.
//
// KFold returns nil if k < 2 or k > n.
func KFold(n, k int, shuffle bool, seed uint64) [][2][]int {
	if k < 2 || k > n {
		return nil
	}
	var order []int
	if shuffle {
		order = permutation(n, seed)
	} else {
		order = make([]int, n)
		for i := range order {
			order[i] = i
		}
	}
	folds := make([][2][]int, k)
	inTest := make([]bool, n)
	start := 0
	for f := range folds {
		size := n / k
		if f < n%k {
			size++
		}
		test := slices.Clone(order[start : start+size])
		slices.Sort(test)
		for _, i := range test {
			inTest[i] = true
		}
		train := make([]int, 0, n-size)
		for i := range n {
			if !inTest[i] {
				train = append(train, i)
			}
		}
		for _, i := range test {
			inTest[i] = false
		}
		folds[f] = [2][]int{train, test}
		start += size
	}
	return folds
}
