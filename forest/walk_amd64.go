//go:build amd64 && !purego

package forest

import "github.com/gotrain/gotrain/internal/cpufeat"

// kernelsBuilt tells whether this build has the assembly kernels.
const kernelsBuilt = true

// useAVX512 selects the AVX-512 kernels where the CPU and GOTRAIN_CPU
// (package internal/cpufeat) allow them: the tree walk and the learner's
// partitionEnts, featureKeys, rankSortKeys and scanPackedAsm. They need
// AVX-512 F and DQ (VEXTRACTI32X8, VPMULLQ). Tests turn it off to
// compare.
var useAVX512 = cpufeat.HasAVX512F && cpufeat.HasAVX512DQ

// useVBMI2 selects the byte kernels (compressCol, histNodeAsm,
// presentSeen): AVX-512 BW and VBMI2, and what they need besides.
var useVBMI2 = cpufeat.HasAVX512VBMI2

// walk16 walks 16 rows through a compiled tree for at most depth steps with
// AVX-512 gathers: row g's codes start at codes+offs[g]; out receives the
// final node indices. It reads 4 bytes at each code address.
//
//go:noescape
func walk16(nodes *cnode, codes *uint8, offs *[16]int32, depth int, out *[16]int32, perm *[32]int32)

// walkPerm splits 16 gathered 8-byte nodes into their two dwords.
var walkPerm = [32]int32{0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30, 1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31}

// walk48 is walk16 for 48 rows: group g of 16 rows starts g·step bytes after the first.
//
//go:noescape
func walk48(nodes *cnode, codes *uint8, offs *[16]int32, step int, depth int, out *[48]int32, perm *[32]int32)
