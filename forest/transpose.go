package forest

import "encoding/binary"

// transpose8 transposes the 8x8 matrix of bytes whose row i is a[i] (byte k
// of a[i], little-endian, is column k): afterwards byte i of a[k] is the
// former byte k of a[i]. Three rounds swap the off-diagonal blocks of 1, 2
// and 4 bytes.
func transpose8(a *[8]uint64) {
	const m1, m2, m4 = 0x00FF00FF00FF00FF, 0x0000FFFF0000FFFF, 0x00000000FFFFFFFF
	a0, a1, a2, a3, a4, a5, a6, a7 := a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7]
	t := (a0>>8 ^ a1) & m1
	a1 ^= t
	a0 ^= t << 8
	t = (a2>>8 ^ a3) & m1
	a3 ^= t
	a2 ^= t << 8
	t = (a4>>8 ^ a5) & m1
	a5 ^= t
	a4 ^= t << 8
	t = (a6>>8 ^ a7) & m1
	a7 ^= t
	a6 ^= t << 8
	t = (a0>>16 ^ a2) & m2
	a2 ^= t
	a0 ^= t << 16
	t = (a1>>16 ^ a3) & m2
	a3 ^= t
	a1 ^= t << 16
	t = (a4>>16 ^ a6) & m2
	a6 ^= t
	a4 ^= t << 16
	t = (a5>>16 ^ a7) & m2
	a7 ^= t
	a5 ^= t << 16
	t = (a0>>32 ^ a4) & m4
	a4 ^= t
	a0 ^= t << 32
	t = (a1>>32 ^ a5) & m4
	a5 ^= t
	a1 ^= t << 32
	t = (a2>>32 ^ a6) & m4
	a6 ^= t
	a2 ^= t << 32
	t = (a3>>32 ^ a7) & m4
	a7 ^= t
	a3 ^= t << 32
	a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7] = a0, a1, a2, a3, a4, a5, a6, a7
}

// gatherColumns copies features 0..p-1 of the rows of xb (row-major, p
// codes a row) listed in rows into dst column-major: feature j of rows[i]
// goes to dst[j*m+i], m = len(rows). Features whose bit is set in skip
// (nil: none) may be left out. Blocks of 8 rows by 8 features go through
// transpose8, 32 rows at a time so that their codes stay in cache while
// every feature is copied. It returns an OR of some codes (the touches that
// fetch the next block's rows early), for the caller to keep.
func gatherColumns(dst, xb []uint8, rows []int32, p int, skip []uint64) (sink uint8) {
	m := len(rows)
	le := binary.LittleEndian
	var off [8]int
	var a [8]uint64
	const block = 32
	for i0 := 0; i0 < m; i0 += block {
		i1 := min(i0+block, m)
		// Touch a line of each row of the next block: the rows are
		// scattered over xb, and loads that wait on nothing fetch them
		// in parallel, ahead of the copy.
		for _, r := range rows[i1:min(i1+block, m)] {
			row := xb[int(r)*p : int(r)*p+p]
			for o := 0; o < len(row); o += 64 {
				sink |= row[o]
			}
		}
		full := i0 + (i1-i0)&^7 // rows [i0, full) in groups of 8
		j := 0
		for ; j+8 <= p; j += 8 {
			if skip != nil && uint8(skip[j>>6]>>(j&63)) == 0xFF {
				continue
			}
			for g := i0; g < full; g += 8 {
				for k := range off {
					off[k] = int(rows[g+k])*p + j
				}
				for k := range a {
					a[k] = le.Uint64(xb[off[k] : off[k]+8])
				}
				transpose8(&a)
				for k := range a {
					o := (j+k)*m + g
					le.PutUint64(dst[o:o+8], a[k])
				}
			}
			for i := full; i < i1; i++ {
				r := int(rows[i]) * p
				for k := 0; k < 8; k++ {
					dst[(j+k)*m+i] = xb[r+j+k]
				}
			}
		}
		for ; j < p; j++ {
			if skip != nil && skip[j>>6]&(1<<(j&63)) != 0 {
				continue
			}
			col := dst[j*m : (j+1)*m]
			for i := i0; i < i1; i++ {
				col[i] = xb[int(rows[i])*p+j]
			}
		}
	}
	return sink
}

// rowMask sets in mask (one bit a row, 64 rows a word) the rows below
// 64·len(mask), clearing the others, and returns how many rows lie past
// them (the last ones). ok is false when rows are not in strictly
// increasing order: compressCol would put them out of order.
func rowMask(mask []uint64, rows []int32) (tail int, ok bool) {
	clear(mask)
	top := int32(64 * len(mask))
	prev := int32(-1)
	for i, r := range rows {
		if r <= prev {
			return 0, false
		}
		prev = r
		if r >= top {
			return len(rows) - i, rowsIncreasing(rows[i:])
		}
		mask[r>>6] |= 1 << (r & 63)
	}
	return 0, true
}

// rowsIncreasing tells whether rows are in strictly increasing order.
func rowsIncreasing(rows []int32) bool {
	for i := 1; i < len(rows); i++ {
		if rows[i] <= rows[i-1] {
			return false
		}
	}
	return true
}

// gatherRows sets d[i] = col[rows[i]].
func gatherRows(d, col []uint8, rows []int32) {
	d = d[:len(rows)]
	for i, r := range rows {
		d[i] = col[r]
	}
}

// rowCodes gives blocks of rows' codes row-major, from the row-major codes
// xb or, when the learner kept only those, the column store cols (n rows,
// p features).
type rowCodes struct {
	xb   []uint8
	cols *columnCodes
	n, p int
}

// rows returns the codes of rows [lo,hi), row-major: a slice of xb, or
// buf (grown when too small) filled from cols.
func (c rowCodes) rows(lo, hi int, buf []uint8) []uint8 {
	if c.xb != nil {
		return c.xb[lo*c.p : hi*c.p]
	}
	m := hi - lo
	if cap(buf) < m*c.p {
		buf = make([]uint8, m*c.p)
	}
	buf = buf[:m*c.p]
	c.cols.rowsOf(buf, lo, hi)
	return buf
}
