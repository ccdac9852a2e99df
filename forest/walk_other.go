//go:build !amd64 || purego

package forest

// kernelsBuilt tells whether this build has the assembly kernels.
const kernelsBuilt = false

// useAVX512 is false where no vector kernel exists.
var useAVX512 = false

var walkPerm [32]int32

func walk16(nodes *cnode, codes *uint8, offs *[16]int32, depth int, out *[16]int32, perm *[32]int32) {
	panic("forest: walk16 without AVX-512")
}

func walk48(nodes *cnode, codes *uint8, offs *[16]int32, step int, depth int, out *[48]int32, perm *[32]int32) {
	panic("forest: walk48 without AVX-512")
}

func partitionEnts(dst, src *uint32, n int, mark *uint8, nl int) {
	panic("forest: partitionEnts without AVX-512")
}

func rankSortKeys(keys, tmp *uint64, n int) {
	panic("forest: rankSortKeys without AVX-512")
}

func featureKeys(keys, konst *uint64, p int, nk, limit uint64, cand int) int {
	panic("forest: featureKeys without AVX-512")
}

func scanPackedAsm(h *int64, cs int, codes *uint8, n int, s *packedScan) int {
	panic("forest: scanPackedAsm without AVX-512")
}
