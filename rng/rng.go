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
