//go:build amd64 && !purego

package forest

// compressCol appends to dst the bytes of col's first 64·words whose bits
// are set in mask (bit b of mask[w] for col[64w+b]), in order. It needs
// AVX-512 BW and VBMI2 (useVBMI2).
//
//go:noescape
func compressCol(dst, col *uint8, mask *uint64, words int)

// presentSeen sets bit c of present for each nonzero seen[c], and clears
// seen. It needs AVX-512 BW (useVBMI2).
//
//go:noescape
func presentSeen(seen *[256]uint8, present *[4]uint64)

// histNodeAsm is the packed Gini histogram of a node's rows from their
// node weights (builder.nodeW); see scanLocalGini.
//
//go:noescape
func histNodeAsm(h *int64, col *uint8, rows *int32, n int, nw *int64, cs int, seen *uint8)

// columnBits sets bit b of nz[w] when col[64w+b] is not 0, for the n
// codes of col, and reports whether they are all equal. It needs AVX-512
// BW (useVBMI2).
//
//go:noescape
func columnBits(col *uint8, n int, nz *uint64) bool

// histSparseAsm is the packed Gini histogram of a local block's rows set
// in both bitmaps (see scanSparseGini). It needs AVX-512 VBMI2.
//
//go:noescape
func histSparseAsm(h *int64, col *uint8, nodeBits, colBits *uint64, words int, rowW *int64, cs int, seen *uint8, list *uint16, wlist *uint64) int

// listCodes writes the codes set in set to codes in increasing order and
// returns how many there are; codes has room for 64 bytes past them. It
// needs AVX-512 VBMI2 (useVBMI2).
//
//go:noescape
func listCodes(set *[4]uint64, codes *uint8) int

// expandCol writes the 64 codes of each of the words bitmap words of a
// sparse column (columnCodes: base where a bit is clear, the next of vals
// where set) to dst, 64 bytes a word; vals must be readable 64 bytes past
// its last code. It needs AVX-512 VBMI2 (useVBMI2).
//
//go:noescape
func expandCol(dst, vals *uint8, bits *uint64, words int, base uint8)

// expandCompressCol is compressCol of a sparse column (expandCol): of
// each word's 64 codes, those of the rows set in mask's word are
// appended to dst, in order. It needs AVX-512 VBMI2 (useVBMI2).
//
//go:noescape
func expandCompressCol(dst, vals *uint8, bits, mask *uint64, words int, base uint8)

// sumEntries sets sum to the sums of the class entries (h[c·cs+2:c·cs+cs],
// cs-2 <= 16) of the n codes c listed in codes. It needs AVX-512
// (useVBMI2).
//
//go:noescape
func sumEntries(h *int64, cs int, codes *uint8, n int, sum *[16]int64)

// orRows sets acc[:cw] to the OR of the bitsets bits[r*cw : r*cw+cw]
// (cw <= 16) of the n rows listed in rows (builder.markBase). It needs
// AVX-512 (useAVX512).
//
//go:noescape
func orRows(acc, bits *uint64, rows *int32, n, cw int)

// copyRows copies the bitsets bits[r*cw : r*cw+cw] (cw <= 16) of the n
// rows listed in rows to dst, one after the other (enterLocal). It needs
// AVX-512 (useAVX512).
//
//go:noescape
func copyRows(dst, bits *uint64, rows *int32, n, cw int)

// sparseEncode writes a sparse column of columnCodes from its n codes
// col: the bitmap of the codes that are not base (ceil(n/64) words) and
// those codes, in order, to dst; it returns how many
// there are. It needs AVX-512 VBMI2 (useVBMI2).
//
//go:noescape
func sparseEncode(dst *uint8, bits *uint64, col *uint8, n int, base uint8) int
