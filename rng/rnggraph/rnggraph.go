// Package rnggraph builds GoMLX graphs that compute package rng's functions
// on a device, bit for bit: the same 64-bit integer multiplies, adds and
// xors, with shifts written as unsigned divisions by powers of two (GoMLX
// v0.26's pure-Go backend has no shift ops).
//
// It is separate from package rng so that rng stays free of GoMLX.
package rnggraph

import (
	"fmt"

	"github.com/gomlx/gomlx/pkg/core/dtypes"
	"github.com/gomlx/gomlx/pkg/core/graph"

	"github.com/gotrain/gotrain/rng"
)

// Node is a GoMLX graph node.
type Node = graph.Node

// u64 returns the uint64 constant v in g.
func u64(g *graph.Graph, v uint64) *Node { return graph.Const(g, v) }

// shr is z >> s for uint64 z (0 < s < 64).
func shr(z *Node, s uint) *Node { return graph.Div(z, u64(z.Graph(), 1<<s)) }

// mix is rng.Mix.
func mix(z *Node) *Node {
	g := z.Graph()
	z = graph.BitwiseXor(z, shr(z, 30))
	z = graph.Mul(z, u64(g, 0xbf58476d1ce4e5b9))
	z = graph.BitwiseXor(z, shr(z, 27))
	z = graph.Mul(z, u64(g, 0x94d049bb133111eb))
	return graph.BitwiseXor(z, shr(z, 31))
}

// Mix is rng.Mix of every element of z, which must be uint64.
func Mix(z *Node) (*Node, error) {
	if z.DType() != dtypes.Uint64 {
		return nil, fmt.Errorf("rnggraph: Mix of %s: want uint64", z.DType())
	}
	return mix(z), nil
}

// at is rng.At(key, counter).
func at(key *Node, counter uint64) *Node {
	return mix(graph.Add(key, u64(key.Graph(), (counter+1)*rng.Golden)))
}

// toUint64 converts an integer node to uint64.
func toUint64(x *Node, what string) (*Node, error) {
	if !x.DType().IsInt() {
		return nil, fmt.Errorf("rnggraph: %s has dtype %s: want an integer", what, x.DType())
	}
	return graph.ConvertDType(x, dtypes.Uint64), nil
}

// PermutationKey is rng.PermutationKey(seed, epoch) of every element of
// epoch (an integer node; negative values are taken modulo 2^64). The
// result is uint64.
func PermutationKey(seed uint64, epoch *Node) (*Node, error) {
	e, err := toUint64(epoch, "the epoch")
	if err != nil {
		return nil, err
	}
	g := e.Graph()
	// Key(seed, epoch, purpose) = Mix(Mix(seed^Golden) + epoch·Golden + purpose).
	z := graph.Add(graph.Mul(e, u64(g, rng.Golden)), u64(g, rng.Mix(seed^rng.Golden)+rng.PurposePermutation))
	return mix(z), nil
}

// Permute is rng.Permute(i, n, key) of every element of i, for a scalar
// key: i and key are integer nodes (converted to uint64; negative values
// are taken modulo 2^64), n a constant of the graph. The result is uint64
// with i's shape. The rng.PermuteRounds rounds are unrolled: a fixed
// number of element-wise operations, with no data-dependent loop.
func Permute(i *Node, n uint64, key *Node) (*Node, error) {
	x, err := toUint64(i, "the index")
	if err != nil {
		return nil, err
	}
	k, err := toUint64(key, "the key")
	if err != nil {
		return nil, err
	}
	if !k.Shape().IsScalar() {
		return nil, fmt.Errorf("rnggraph: Permute: the key has shape %s: want a scalar", k.Shape())
	}
	g := x.Graph()
	if n == 0 {
		return x, nil
	}
	nc := u64(g, n)
	inRange := graph.LessThan(x, nc)
	orig := x
	top := u64(g, 1<<63)
	for r := range uint64(rng.PermuteRounds) {
		off := graph.Rem(at(k, 2*r), nc) // scalar, in [0, n)
		coin := at(k, 2*r+1)             // scalar
		// (off - x) mod n; for out-of-range x the value is discarded below.
		q := graph.Where(graph.LessOrEqual(x, off), graph.Sub(off, x), graph.Sub(graph.Add(off, nc), x))
		c := mix(graph.BitwiseXor(graph.Max(x, q), coin))
		x = graph.Where(graph.GreaterOrEqual(c, top), q, x)
	}
	return graph.Where(inRange, x, orig), nil
}
