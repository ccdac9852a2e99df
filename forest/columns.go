package forest

import (
	"bytes"
	"math/bits"
)

// columnCodes holds the bin codes column-major for the rows path when the
// learner keeps no row-major copy (builder.cols). A column whose most
// common code, its base, holds at least half of the rows is kept sparse:
// a bitmap of the rows whose code is another (words words, bit r&63 of
// word r>>6 for row r) and those codes in row order; the others are kept
// dense, n bytes. MNIST's 60,000 x 784 codes, 81 % of them 0, take 17.5
// MB instead of 47 (644 columns sparse): the local blocks' copies
// (gather), which read every column, read a third of the bytes.
type columnCodes struct {
	n, p  int
	words int     // bitmap words a column: ceil(n/64)
	base  []uint8 // each column's base code (sparse columns)
	off   []int   // where each column's codes start in data
	// sparse numbers the sparse columns (-1: dense): sparse column s has
	// its bitmap at bits[s*words:] and its ranks at rank[s*groups:].
	sparse []int32
	groups int      // rank entries a sparse column: ceil(words/rankWords)
	data   []uint8  // the columns' codes (64 bytes of padding at the end)
	bits   []uint64 // the sparse columns' bitmaps
	// rank holds, for each group of rankWords bitmap words of a sparse
	// column, how many of its codes come before the group (rowsOf).
	rank []uint32
}

// rankWords is the bitmap words a rank entry of columnCodes covers.
const rankWords = 8

// newColumnCodes returns the n x p column-major codes xc as columnCodes,
// its columns examined and copied on up to threads goroutines.
func newColumnCodes(xc []uint8, n, p, threads int) *columnCodes {
	words := (n + 63) / 64
	c := &columnCodes{n: n, p: p, words: words, base: make([]uint8, p), off: make([]int, p+1),
		sparse: make([]int32, p), groups: (words + rankWords - 1) / rankWords}
	others := make([]int, p) // each column's codes other than its most common
	parallelBlocks(p, threads, 1, func(lo, hi int) {
		for j := lo; j < hi; j++ {
			cnt := countCodes(xc[j*n : (j+1)*n])
			b := 0
			for v, k := range cnt {
				if k > cnt[b] {
					b = v
				}
			}
			c.base[j], others[j] = uint8(b), n-cnt[b]
		}
	})
	ns := 0
	for j := 0; j < p; j++ {
		size := n
		c.sparse[j] = -1
		if 2*others[j] <= n {
			c.sparse[j], size = int32(ns), others[j]
			ns++
		} else {
			c.base[j] = 0
		}
		c.off[j+1] = c.off[j] + size
	}
	c.data = make([]uint8, c.off[p]+64)
	c.bits = make([]uint64, ns*words)
	c.rank = make([]uint32, ns*c.groups)
	parallelBlocks(p, threads, 1, func(lo, hi int) {
		for j := lo; j < hi; j++ {
			col, out := xc[j*n:(j+1)*n], c.data[c.off[j]:c.off[j+1]]
			s := int(c.sparse[j])
			if s < 0 {
				copy(out, col)
				continue
			}
			bm, rank, b := c.bits[s*words:(s+1)*words], c.rank[s*c.groups:(s+1)*c.groups], c.base[j]
			if useVBMI2 {
				sparseEncode(&c.data[c.off[j]], &bm[0], &col[0], n, b)
			} else {
				k := 0
				for w := range bm {
					var word uint64
					for i, v := range col[w*64 : min(n, w*64+64)] {
						if v != b {
							word |= 1 << i
							out[k] = v
							k++
						}
					}
					bm[w] = word
				}
			}
			k := 0
			for w, word := range bm {
				if w%rankWords == 0 {
					rank[w/rankWords] = uint32(k)
				}
				k += bits.OnesCount64(word)
			}
		}
	})
	return c
}

// countCodes returns how many times each code occurs in col, counted in
// four tables so that a run of one code does not wait on one counter.
func countCodes(col []uint8) (cnt [256]int) {
	var t [4][256]int32
	i := 0
	for ; i+4 <= len(col); i += 4 {
		t[0][col[i]]++
		t[1][col[i+1]]++
		t[2][col[i+2]]++
		t[3][col[i+3]]++
	}
	for ; i < len(col); i++ {
		t[0][col[i]]++
	}
	for v := range cnt {
		cnt[v] = int(t[0][v]) + int(t[1][v]) + int(t[2][v]) + int(t[3][v])
	}
	return cnt
}

// holds tells whether code v occurs in column j.
func (c *columnCodes) holds(j int, v uint8) bool {
	if c.sparse[j] >= 0 && c.base[j] == v {
		return true // the base: in at least half of the rows
	}
	return bytes.IndexByte(c.data[c.off[j]:c.off[j+1]], v) >= 0
}

// sparseIndex returns column j's number among the sparse columns (its
// bitmap at bits[s*words:]), or -1 when it is dense or c is nil.
func (c *columnCodes) sparseIndex(j int) int {
	if c == nil {
		return -1
	}
	return int(c.sparse[j])
}

// column returns column j's n codes: the dense column itself, or the
// sparse one expanded into buf (at least 64·words bytes).
func (c *columnCodes) column(j int, buf []uint8) []uint8 {
	s := int(c.sparse[j])
	if s < 0 {
		return c.data[c.off[j]:c.off[j+1]]
	}
	buf = buf[:64*c.words]
	bm := c.bits[s*c.words : (s+1)*c.words]
	if useVBMI2 {
		expandCol(&buf[0], &c.data[c.off[j]], &bm[0], c.words, c.base[j])
	} else {
		expandColGo(buf, c.data[c.off[j]:], bm, c.base[j])
	}
	return buf[:c.n]
}

// expandColGo is expandCol in Go: for each word of bm, its 64 rows' codes
// into dst, base where the bit is clear and the next of vals where set.
func expandColGo(dst, vals []uint8, bm []uint64, base uint8) {
	k := 0
	for w, word := range bm {
		d := dst[w*64 : w*64+64]
		for i := range d {
			d[i] = base
		}
		for word != 0 {
			i := bits.TrailingZeros64(word)
			word &= word - 1
			d[i] = vals[k]
			k++
		}
	}
}

// gather copies a local block's codes from c (enterLocal): the codes of rows (each below n) of
// the columns not set in skip (nil: none) into dst, column-major (m =
// len(rows) bytes a column). With rows in increasing order and AVX-512
// VBMI2, each 64 rows of a column are compressed by the bitmap of the
// rows taken (mask, scratch of words words), a sparse column's expanded
// first (expandCompressCol); else a sparse column is expanded into buf
// (64·words bytes) and copied row by row.
func (c *columnCodes) gather(dst []uint8, rows []int32, skip, mask []uint64, buf []uint8) {
	m, n := len(rows), c.n
	if m == 0 {
		return
	}
	fast := false
	tail := 0 // rows past the dense columns' whole words
	if useVBMI2 && len(mask) >= c.words {
		mask = mask[:c.words]
		_, fast = rowMask(mask, rows)
		if fast && n%64 != 0 {
			tail = bits.OnesCount64(mask[n/64])
		}
	}
	for j := 0; j < c.p; j++ {
		if skip != nil && skip[j>>6]&(1<<(j&63)) != 0 {
			continue
		}
		d := dst[j*m : (j+1)*m]
		s := int(c.sparse[j])
		switch {
		case fast && s >= 0:
			expandCompressCol(&d[0], &c.data[c.off[j]], &c.bits[s*c.words], &mask[0], c.words, c.base[j])
		case fast:
			col := c.data[c.off[j]:c.off[j+1]]
			if n >= 64 {
				compressCol(&d[0], &col[0], &mask[0], n/64)
			}
			gatherRows(d[m-tail:], col, rows[m-tail:])
		default:
			gatherRows(d, c.column(j, buf), rows)
		}
	}
}

// rowsOf writes the codes of rows [lo,hi) into dst row-major (p codes a
// row), as core.RowsOf does from column-major codes.
func (c *columnCodes) rowsOf(dst []uint8, lo, hi int) {
	p := c.p
	if lo >= hi {
		return
	}
	for j := 0; j < p; j++ {
		s := int(c.sparse[j])
		if s < 0 {
			for i, v := range c.data[c.off[j]+lo : c.off[j]+hi] {
				dst[i*p+j] = v
			}
			continue
		}
		bm, vals, b := c.bits[s*c.words:(s+1)*c.words], c.data[c.off[j]:c.off[j+1]], c.base[j]
		// The codes before row lo: its group's rank and the words of
		// the group before its own, then the bits of its word below it.
		w := lo / 64
		k := int(c.rank[s*c.groups+w/rankWords])
		for g := w &^ (rankWords - 1); g < w; g++ {
			k += bits.OnesCount64(bm[g])
		}
		k += bits.OnesCount64(bm[w] & (1<<(lo&63) - 1))
		for r := lo; r < hi; r++ {
			v := b
			if bm[r>>6]&(1<<(r&63)) != 0 {
				v = vals[k]
				k++
			}
			dst[(r-lo)*p+j] = v
		}
	}
}

// rowBits returns, for each row r, a bitset of the features whose code in
// row r is not their column's base (c.base; 0 for a dense column): words
// words of row r at [r*words:], words = ceil(p/64). A feature whose bit is
// clear in every row of a node holds one code there (builder.markBase).
// Each 64 rows by 64 features are the transpose of the columns' bitmaps
// (a dense column's made first), on up to threads goroutines.
func (c *columnCodes) rowBits(threads int) []uint64 {
	n, p, cw := c.n, c.p, (c.p+63)/64
	rb := make([]uint64, n*cw)
	bm := make([][]uint64, p) // each column's bitmap of codes off its base
	var dense []uint64
	for _, s := range c.sparse {
		if s < 0 {
			dense = append(dense, make([]uint64, c.words)...)
		}
	}
	d := 0
	for j, s := range c.sparse {
		if s >= 0 {
			bm[j] = c.bits[int(s)*c.words : int(s+1)*c.words]
		} else {
			bm[j], d = dense[d:d+c.words], d+c.words
		}
	}
	parallelBlocks(p, threads, 1, func(lo, hi int) {
		for j := lo; j < hi; j++ {
			if c.sparse[j] >= 0 {
				continue
			}
			b, out, col := c.base[j], bm[j], c.data[c.off[j]:c.off[j+1]]
			if useVBMI2 && b == 0 && n > 0 {
				columnBits(&col[0], n, &out[0]) // the codes not 0
				continue
			}
			for r, v := range col {
				if v != b {
					out[r>>6] |= 1 << (r & 63)
				}
			}
		}
	})
	parallelBlocks(c.words, threads, 16, func(lo, hi int) {
		var t [64]uint64
		for w := lo; w < hi; w++ {
			rows := min(64, n-64*w)
			for fw := 0; fw < cw; fw++ {
				for k := range t {
					t[k] = 0
					if j := 64*fw + k; j < p {
						t[k] = bm[j][w]
					}
				}
				transpose64(&t)
				for r, v := range t[:rows] {
					rb[(64*w+r)*cw+fw] = v
				}
			}
		}
	})
	return rb
}

// transpose64 transposes the 64x64 bit matrix whose row i is a[i] (bit k
// of a[i], least significant first, is column k): afterwards bit k of
// a[i] is the former bit i of a[k]. Six rounds swap the off-diagonal
// blocks of 32, 16, ..., 1 bits.
func transpose64(a *[64]uint64) {
	masks := [6]uint64{0x00000000FFFFFFFF, 0x0000FFFF0000FFFF, 0x00FF00FF00FF00FF, 0x0F0F0F0F0F0F0F0F, 0x3333333333333333, 0x5555555555555555}
	for round, m := range masks {
		j := 32 >> round
		for k := 0; k < 64; k++ {
			if k&j != 0 {
				continue
			}
			t := (a[k]>>j ^ a[k+j]) & m
			a[k+j] ^= t
			a[k] ^= t << j
		}
	}
}
