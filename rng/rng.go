// Package rng is gotrain's counter-based random stream: every value is a pure
// function of a key and a counter, so work split across threads, processes or
// an accelerator draws the same numbers in any order. The functions use only
// 64-bit integer multiplies, adds, xors and shifts, so graph implementations
// (GoMLX uint64 ops) reproduce them exactly.
package rng

// Golden is 2^64 / φ, SplitMix64's increment.
const Golden = 0x9E3779B97F4A7C15

// Mix is SplitMix64's finalizer: a bijective avalanche of 64 bits.
func Mix(z uint64) uint64 {
	z ^= z >> 30
	z *= 0xbf58476d1ce4e5b9
	z ^= z >> 27
	z *= 0x94d049bb133111eb
	z ^= z >> 31
	return z
}

// Key returns the key of the stream for a seed, an index (a tree, a record)
// and a purpose: Mix(Mix(seed ^ Golden) + index·Golden + purpose).
func Key(seed, index, purpose uint64) uint64 {
	return Mix(Mix(seed^Golden) + index*Golden + purpose)
}

// At returns the counter-th value of the stream with the given key:
// Mix(key + (counter+1)·Golden).
func At(key, counter uint64) uint64 {
	return Mix(key + (counter+1)*Golden)
}

// Below maps a random value to [0, n) by multiply-shift on its high 32 bits
// (n must be below 2^32).
func Below(r uint64, n int) int {
	return int(((r >> 32) * uint64(n)) >> 32)
}

// Float64 maps a random value to [0, 1) with 53 random bits.
func Float64(r uint64) float64 {
	return float64(r>>11) * (1.0 / (1 << 53))
}

// Stream is a sequential reader of one stream: the i-th call of Next returns
// At(key, i).
type Stream struct {
	key, counter uint64
}

// NewStream returns the stream with the given key, at counter 0.
func NewStream(key uint64) *Stream { return &Stream{key: key} }

// Next returns the next value of the stream.
func (s *Stream) Next() uint64 {
	v := At(s.key, s.counter)
	s.counter++
	return v
}

// Counter returns how many values were read.
func (s *Stream) Counter() uint64 { return s.counter }

// PermuteRounds is the number of swap-or-not rounds of Permute.
const PermuteRounds = 32

// PurposePermutation is the purpose (see Key) of the key of an epoch's
// permutation ("perm" in ASCII).
const PurposePermutation = 0x7065726d

// PermutationKey returns the key of the permutation of one epoch of a data
// set shuffled with seed: Key(seed, epoch, PurposePermutation).
func PermutationKey(seed, epoch uint64) uint64 {
	return Key(seed, epoch, PurposePermutation)
}

// Permute returns the image of i under a keyed bijection of [0, n): for a
// fixed n and key, Permute(·, n, key) maps [0, n) onto [0, n) one to one,
// and each image is computed on its own, in O(PermuteRounds) integer
// operations, without building the permutation.
//
// It is the swap-or-not shuffle of Hoang, Morris and Rogaway (CRYPTO 2012)
// with PermuteRounds rounds and round values drawn from the stream of key.
// Round r (r = 0, 1, …, PermuteRounds-1) maps x to
//
//	K = At(key, 2r) mod n
//	p = (K - x) mod n                 (x's partner; p's partner is x)
//	x = p if Mix(max(x, p) ^ At(key, 2r+1)) >> 63 == 1, else x
//
// Each round is an involution of [0, n) (the pair {x, p} is swapped or not
// by one coin that both members compute alike), so the composition is a
// bijection for every n and key; no round needs cycle-walking, so the
// number of operations does not depend on the data, which lets graph
// implementations (rng/rnggraph) unroll it. For i >= n (and n = 0) Permute
// returns i unchanged.
func Permute(i, n, key uint64) uint64 {
	p := NewPermutation(n, key)
	return p.Index(i)
}

// Permutation is Permute(·, n, key) with its round values computed once,
// for computing many indices of one permutation.
type Permutation struct {
	n      uint64
	offset [PermuteRounds]uint64 // At(key, 2r) mod n
	coin   [PermuteRounds]uint64 // At(key, 2r+1)
}

// NewPermutation returns the permutation Permute(·, n, key).
func NewPermutation(n, key uint64) Permutation {
	p := Permutation{n: n}
	if n == 0 {
		return p
	}
	for r := range uint64(PermuteRounds) {
		p.offset[r] = At(key, 2*r) % n
		p.coin[r] = At(key, 2*r+1)
	}
	return p
}

// Index returns Permute(i, n, key).
func (p *Permutation) Index(i uint64) uint64 {
	if i >= p.n {
		return i
	}
	x := i
	for r, k := range p.offset {
		q := k - x // (k - x) mod n when x <= k
		if x > k {
			q = k + (p.n - x)
		}
		if Mix(max(x, q)^p.coin[r])>>63 == 1 {
			x = q
		}
	}
	return x
}
