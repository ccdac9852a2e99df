//go:build !amd64 || purego

package forest

// kernelsBuilt tells whether this build has the assembly kernels.
const kernelsBuilt = false

// useAVX512 is false where no vector kernel exists.
var useAVX512 = false

// useVBMI2 is false where no vector kernel exists.
var useVBMI2 = false

var walkPerm [32]int32

// The AVX-512 kernels' stubs below are never called: every call is behind
// useAVX512, false here. The loops with a plain assembly version on amd64
// run their Go versions (scanRegFast, histPackedFast).

func walk16(nodes *cnode, codes *uint8, offs *[16]int32, depth int, out *[16]int32, perm *[32]int32) {
	panic("forest: walk16 without AVX-512")
}

func walk48(nodes *cnode, codes *uint8, offs *[16]int32, step int, depth int, out *[48]int32, perm *[32]int32) {
	panic("forest: walk48 without AVX-512")
}

func partitionEnts(dst, src *uint32, n int, mark *uint8, nl int) {
	panic("forest: partitionEnts without AVX-512")
}

func compressCol(dst, col *uint8, mask *uint64, words int) {
	panic("forest: compressCol without AVX-512")
}

func expandCol(dst, vals *uint8, bits *uint64, words int, base uint8) {
	panic("forest: expandCol without AVX-512")
}

func expandCompressCol(dst, vals *uint8, bits, mask *uint64, words int, base uint8) {
	panic("forest: expandCompressCol without AVX-512")
}

func sumEntries(h *int64, cs int, codes *uint8, n int, sum *[16]int64) {
	panic("forest: sumEntries without AVX-512")
}

func orRows(acc, bits *uint64, rows *int32, n, cw int) {
	panic("forest: orRows without AVX-512")
}

func copyRows(dst, bits *uint64, rows *int32, n, cw int) {
	panic("forest: copyRows without AVX-512")
}

func sparseEncode(dst *uint8, bits *uint64, col *uint8, n int, base uint8) int {
	panic("forest: sparseEncode without AVX-512")
}

func presentSeen(seen *[256]uint8, present *[4]uint64) {
	panic("forest: presentSeen without AVX-512")
}

func scanPacked8Asm(h *int64, cs int, codes *uint8, n int, s *packedScan) int {
	panic("forest: scanPacked8Asm without AVX-512")
}

func scanBatch8Asm(h *int64, cs int, codes *uint8, n int, s *packedScan) int {
	panic("forest: scanBatch8Asm without AVX-512")
}

func scanBatch16Asm(h *int64, cs int, codes *uint8, n int, s *packedScan) int {
	panic("forest: scanBatch16Asm without AVX-512")
}

func histNodeAsm(h *int64, col *uint8, rows *int32, n int, nw *int64, cs int, seen *uint8) {
	panic("forest: histNodeAsm without AVX-512")
}

func columnBits(col *uint8, n int, nz *uint64) bool {
	panic("forest: columnBits without AVX-512")
}

func histSparseAsm(h *int64, col *uint8, nodeBits, colBits *uint64, words int, rowW *int64, cs int, seen *uint8, list *uint16, wlist *uint64) int {
	panic("forest: histSparseAsm without AVX-512")
}

func listCodes(set *[4]uint64, codes *uint8) int {
	panic("forest: listCodes without AVX-512")
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

// scanRegFast is scanRegRun where no assembly exists.
func scanRegFast(ents []uint32, i, last int, lw, lwy []int64, rec []float64, ts, tw, wl, sl int64, bestScore float64) (int, int64, int64, float64) {
	return scanRegRun(ents, i, last, lw, lwy, rec, ts, tw, wl, sl, bestScore)
}

// histPackedFast is histPacked where no assembly exists.
func histPackedFast(h []int64, col []uint8, rows []int32, lv []int64, cm *[maxPacked]int, cs int) {
	histPacked(h, col, rows, lv, cm, cs)
}
