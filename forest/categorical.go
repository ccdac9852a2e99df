package forest

import (
	"cmp"
	"math"
	"math/bits"
	"slices"

	"github.com/gotrain/gotrain/forest/internal/core"
	"github.com/gotrain/gotrain/rng"
)

// Categorical splits.
//
// A categorical feature (Binner.Categories) splits by a set of categories:
// the rows whose code is in the set go left. At a node, the learner orders
// the categories present among the node's rows and tries every cut of that
// order, as a numeric split tries every boundary of its bins:
//
//   - regression: by the mean target of each category (Fisher's ordering,
//     which holds the best split of squared error);
//   - binary classification: by the share of the second class (Breiman's
//     ordering, which holds the best split of Gini and entropy);
//   - more classes: once by the share of each of the node's maxOrderings
//     heaviest classes, keeping the best cut of these one-vs-rest
//     orderings (the best subset is not guaranteed, as no polynomial rule
//     finds it); a node of two classes needs one ordering.
//
// Missing values (the missing code) are a category of their own when the
// node has any. Ties of the ordering go to the lower code. Cuts are scored
// like numeric boundaries (proxy of both sides, MinSamplesLeaf and
// MinWeightFractionLeaf on both sides); among equal scores the lowest
// feature wins, then the ordering of the lower class, then the shortest
// left side.
// The categories that the node's rows do not hold (and UnseenCode, a
// category absent from the training data) go to the side with more weight,
// left on a tie: the learned default.
//
// The random splitter (Options.Splitter "random") uses one ordering — the
// mean target, or the share of the node's heaviest class (lowest index on
// a tie) — and draws the cut uniformly from core.ThresholdDraw.

// CategorySet is a set of bin codes, bit c%64 of word c/64 for code c: the
// codes that go left at a categorical split.
type CategorySet [4]uint64

// Has reports whether code c is in the set.
func (s *CategorySet) Has(c uint8) bool { return s[c>>6]>>(c&63)&1 != 0 }

// add puts code c in the set.
func (s *CategorySet) add(c uint8) { s[c>>6] |= 1 << (c & 63) }

// numericSet is the set of the codes that a numeric split at bin goes
// left with: codes 0..bin, and the missing code mc when ml.
func numericSet(bin uint8, ml bool, mc uint8) CategorySet {
	var s CategorySet
	// Whole words below bin's, then bin's word up to bin.
	w := int(bin >> 6)
	for k := range w {
		s[k] = ^uint64(0)
	}
	s[w] = ^uint64(0) >> (63 - bin&63)
	if ml {
		s.add(mc)
	}
	return s
}

// goesLeft reports whether a row with code c at node i's split feature
// goes left; mc is that feature's missing code.
func (t *Tree) goesLeft(i int32, c, mc uint8) bool {
	if t.Category != nil {
		if k := t.Category[i]; k >= 0 {
			return t.Sets[k].Has(c)
		}
	}
	k := (t.Left[i] - 1) >> 1
	return c <= t.bin[k] || (c == mc && t.missingLeft[k])
}

// isCat reports whether feature j is categorical.
func (b *builder) isCat(j int) bool { return b.cat != nil && b.cat[j] }

// codeStats fills h (all zero; NumBins+1 entries of stride) with the
// statistics of each code of feature j over the node's rows[lo:hi], read
// from the local block or the codes (not the sorted lists), and returns
// the bitmap of the codes present.
func (b *builder) codeStats(j, lo, hi int, h []int64) CategorySet {
	stride := b.stride
	cls := b.cls != nil
	if b.local {
		col := b.loc[j*b.lsize : (j+1)*b.lsize]
		mask := int64(-1)
		if b.packed { // see builder.locW
			mask = 1<<32 - 1
		}
		for _, i := range b.lrows[lo-b.lbase : hi-b.lbase] {
			c := col[i]
			e := h[int(c)*stride : int(c+1)*stride]
			w := b.locW[i] & mask
			e[0]++
			e[1] += w
			if cls {
				e[2+b.locY[i]] += w
			} else {
				e[2] += b.locY[i]
			}
		}
		return presentInHist(h, b.nb[j], stride)
	}
	xb, p := b.feature(j, hi-lo)
	for _, r := range b.rows[lo:hi] {
		c := xb[int(r)*p]
		e := h[int(c)*stride : int(c+1)*stride]
		w := b.rw[r]
		e[0]++
		e[1] += w
		if cls {
			e[2+b.cls[r]] += w
		} else {
			e[2] += b.wy[r]
		}
	}
	return presentInHist(h, b.nb[j], stride)
}

// gatherCats sets b.catCodes to the codes of categorical feature j present
// among the node's rows[lo:hi], in increasing order, and b.catStats to
// their statistics (stride each, in the same order); it returns the
// bitmap of those codes. It reads the node's dense histogram (hist), its
// sorted lists (buf >= 0), whose runs of one code give each code's
// statistics, or else its rows through b.fh.
func (b *builder) gatherCats(j, lo, hi, buf int, hist []int64) (present CategorySet) {
	stride, nbj := b.stride, b.nb[j]
	codes, st := b.catCodes[:0], b.catStats[:0]
	b.catKeyed = false
	if buf < 0 && hist == nil && b.oneCode(j, lo, hi) {
		b.catCodes = codes // constant in the node: no statistics needed
		return present
	}
	switch {
	case buf >= 0:
		off := j*b.scap + lo - b.sbase
		ents := b.sent[buf][off : off+hi-lo]
		first, lastCode := entCode(ents[0]), entCode(ents[len(ents)-1])
		if first == lastCode { // sorted by code: one code
			b.catCodes = codes
			return present
		}
		// Runs of one code, summed in registers and stored at the run's
		// end (regression), or counted into the run's entry (classes).
		lw, lwy := b.lw, b.lwy
		prev := first
		if b.cls == nil && stride == 3 {
			// A histogram of the codes, without a branch on them (they
			// change about every row in small nodes), then its present
			// codes in increasing order.
			h := b.fh[:(nbj+1)*3] // all zero between calls
			for _, v := range ents {
				c, e := int(entCode(v)), entRow(v)
				t := h[c*3 : c*3+3 : c*3+3]
				t[0]++
				t[1] += lw[e]
				t[2] += lwy[e]
			}
			// The ordering's keys too (catOrder's, for regression).
			num, den, keys := b.catNum, b.catDen, b.catKeys
			fast := true
			for c := int(first); c <= int(lastCode); c++ {
				t := h[c*3 : c*3+3 : c*3+3]
				if t[0] != 0 {
					i := len(codes)
					codes = append(codes, uint8(c))
					present.add(uint8(c))
					st = append(st, t[0], t[1], t[2])
					num[i], den[i] = t[2], t[1]
					keys[i] = float64(t[2]) / float64(t[1])
					fast = fast && t[2] > -1<<53 && t[2] < 1<<53 && t[1] < 1<<53
					t[0], t[1], t[2] = 0, 0, 0
				}
			}
			b.catCodes, b.catStats, b.catKeyed, b.catFast = codes, st, true, fast
			return present
		} else {
			at := 0
			st = append(st, make([]int64, stride)...)
			codes = append(codes, prev)
			for _, v := range ents {
				if c := entCode(v); c != prev {
					codes = append(codes, c)
					at = len(st)
					st = append(st, make([]int64, stride)...)
					prev = c
				}
				e := entRow(v)
				w := lw[e]
				st[at]++
				st[at+1] += w
				st[at+2+int(lwy[e])] += w
			}
		}
		for _, c := range codes {
			present.add(c)
		}
	case b.cstride > 0:
		// A Gini node on the rows path with its classes compacted
		// (compactClasses): one packed update a row, as scanLocalGini.
		cs := b.cstride
		h := b.fh[:(nbj+1)*cs] // all zero between calls
		cm := &b.cmap
		if b.local {
			col := b.loc[j*b.lsize : (j+1)*b.lsize]
			lv := b.locW
			for _, i := range b.lrows[lo-b.lbase : hi-b.lbase] {
				v := lv[i]
				e := int(col[i]) * cs
				h[e] = 1
				h[e+cm[v>>56&(maxPacked-1)]] += v & (1<<56 - 1)
			}
		} else {
			xb, p := b.feature(j, hi-lo)
			for _, r := range b.rows[lo:hi] {
				e := int(xb[int(r)*p]) * cs
				h[e] = 1
				h[e+cm[b.cls[r]]] += 1<<32 | b.rw[r]
			}
		}
		present = presentInHist(h, nbj, cs)
		for w, word := range present {
			for word != 0 {
				c := w<<6 | bits.TrailingZeros64(word)
				word &= word - 1
				codes = append(codes, uint8(c))
				at := len(st)
				st = append(st, make([]int64, stride)...)
				e := h[c*cs : (c+1)*cs]
				for k := 2; k < cs; k++ {
					v := e[k]
					cnt, wt := v>>32, v&(1<<32-1)
					st[at] += cnt
					st[at+1] += wt
					st[at+2+b.cclass[k-2]] = wt
				}
				clear(e)
			}
		}
	default:
		h := b.fh[:(nbj+1)*stride] // all zero between calls
		if hist != nil {
			h = hist[b.off[j]*stride : (b.off[j]+nbj+1)*stride]
			present = presentInHist(h, nbj, stride)
		} else {
			present = b.codeStats(j, lo, hi, h)
		}
		for w, word := range present {
			for word != 0 {
				c := w<<6 | bits.TrailingZeros64(word)
				word &= word - 1
				codes = append(codes, uint8(c))
				e := h[c*stride : (c+1)*stride]
				st = append(st, e...)
				if hist == nil {
					clear(e)
				}
			}
		}
	}
	b.catCodes, b.catStats = codes, st
	return present
}

// oneCode reports whether the node's rows[lo:hi] (on the rows path) all
// hold one code of feature j: found by comparing codes, before any
// histogram is made, as scanLocalGini does.
func (b *builder) oneCode(j, lo, hi int) bool {
	if b.local {
		col := b.loc[j*b.lsize : (j+1)*b.lsize]
		rows := b.lrows[lo-b.lbase : hi-b.lbase]
		c0 := col[rows[0]]
		for _, i := range rows[1:] {
			if col[i] != c0 {
				return false
			}
		}
		return true
	}
	xb, p := b.feature(j, hi-lo)
	rows := b.rows[lo:hi]
	c0 := xb[int(rows[0])*p]
	for _, r := range rows[1:] {
		if xb[int(r)*p] != c0 {
			return false
		}
	}
	return true
}

// catOrder sorts b.catPerm (indices into b.catCodes) by increasing key
// (the mean target, or the share of class q: a sum over the weight),
// compared exactly as fractions, ties by code. The float64 quotients
// order them wherever they differ, when every sum and weight is below
// 2^53 (then converted exactly, and rounding keeps the order of the
// exact quotients); equal quotients, and larger sums, are compared
// exactly (cmpFractions).
func (b *builder) catOrder(q int) {
	stride := b.stride
	m := len(b.catCodes)
	num, den, keys, st := b.catNum[:m], b.catDen[:m], b.catKeys[:m], b.catStats
	x := 2 + q
	if b.cls == nil {
		x = 2
	}
	fast := true
	for i := range m {
		e := st[i*stride:]
		num[i], den[i] = e[x], e[1]
		keys[i] = float64(num[i]) / float64(den[i])
		fast = fast && num[i] > -1<<53 && num[i] < 1<<53 && den[i] < 1<<53
	}
	b.sortCats(fast)
}

// sortCats sets b.catPerm to the indices of b.catCodes in increasing order
// of their keys (catOrder): by b.catKeys where they differ and fast (every
// sum below 2^53), else exactly by b.catNum/b.catDen; ties by index, which
// are ties by code (the codes increase with the index).
func (b *builder) sortCats(fast bool) {
	m := len(b.catCodes)
	num, den, keys, perm := b.catNum[:m], b.catDen[:m], b.catKeys[:m], b.catPerm[:m]
	for i := range perm {
		perm[i] = uint8(i)
	}
	if m > 48 {
		slices.SortFunc(perm, func(v, u uint8) int {
			if fast && keys[v] != keys[u] {
				return cmp.Compare(keys[v], keys[u])
			}
			return cmp.Or(cmpFractions(num[v], den[v], num[u], den[u]), cmp.Compare(v, u))
		})
		return
	}
	// Insertion sort (few categories are present in most nodes), the
	// float64 keys compared inline.
	for i := 1; i < m; i++ {
		v := perm[i]
		kv := keys[v]
		k := i
		for ; k > 0; k-- {
			u := perm[k-1]
			if ku := keys[u]; fast && kv != ku {
				if kv > ku {
					break
				}
			} else if cmp.Or(cmpFractions(num[v], den[v], num[u], den[u]), cmp.Compare(v, u)) >= 0 {
				break
			}
			perm[k] = u
		}
		perm[k] = v
	}
}

// cmpFractions compares a/b with c/d exactly, for b, d > 0: a·d with c·b
// in 128 bits (the sums of a node can pass 2^53, where float64 quotients
// would round).
func cmpFractions(a, b, c, d int64) int {
	if (a < 0) != (c < 0) {
		if a < 0 {
			return -1
		}
		return 1
	}
	ua, uc := uint64(a), uint64(c)
	if a < 0 {
		ua, uc = -ua, -uc
	}
	h1, l1 := bits.Mul64(ua, uint64(d))
	h2, l2 := bits.Mul64(uc, uint64(b))
	r := cmp.Or(cmp.Compare(h1, h2), cmp.Compare(l1, l2))
	if a < 0 {
		r = -r
	}
	return r
}

// scanCategorical evaluates categorical feature j at the node with the
// given key over rows[lo:hi] (hist: the node's dense histogram, or nil;
// buf: its sorted lists, or -1). It returns false when the node's rows
// hold one code.
func (b *builder) scanCategorical(j, lo, hi, buf int, key uint64, hist, tot []int64, best *split) bool {
	if hi-lo <= tinyRows && !b.random {
		switch {
		case buf >= 0 && b.cls == nil && b.stride == 3:
			return b.scanTinyRegression(j, lo, hi, buf, tot, best)
		case buf < 0 && hist == nil && b.cls != nil && !b.entropy:
			return b.scanTinyGini(j, lo, hi, tot, best)
		}
	}
	present := b.gatherCats(j, lo, hi, buf, hist)
	m := len(b.catCodes)
	if m < 2 {
		return false
	}
	if b.cls != nil && !b.catNode { // the node's classes, once a node
		cq := b.catClasses[:0]
		for q := 0; q < b.d; q++ {
			if tot[2+q] != 0 {
				cq = append(cq, 2+q)
			}
		}
		b.catClasses = cq
		if !b.random && b.d > 2 {
			b.catOrderings(tot)
		}
		b.catNode = true
	}
	if cutsBounded && !b.random && best.ok && b.cutsBound(tot) < best.score {
		return true // no cut of this feature can reach the best so far
	}
	if b.random {
		q := 0
		if b.cls != nil {
			for k, v := range tot[2:b.stride] {
				if v > tot[2+q] {
					q = k
				}
			}
		}
		b.catOrder(q)
		cut := rng.Below(core.ThresholdDraw(b.seed, b.tree, key, j), m-1)
		b.scanCuts(j, 0, cut, tot, &present, best)
		return true
	}
	switch {
	case b.cls == nil:
		if b.catKeyed {
			b.sortCats(b.catFast)
		} else {
			b.catOrder(0)
		}
		b.scanCuts(j, 0, -1, tot, &present, best)
	case b.d == 2:
		b.catOrder(1)
		b.scanCuts(j, 0, -1, tot, &present, best)
	default:
		// The orderings of the node's heaviest classes (catOrderings).
		orderings := b.catOrder3
		if m == 2 && len(orderings) == 2 {
			// One cut, the same two sides in every ordering, so the same
			// score: the ordering of the lower class wins the tie
			// (better), and only it need be scanned.
			orderings = orderings[:1]
			if b.catOrder3[1] < b.catOrder3[0] {
				orderings = b.catOrder3[1:]
			}
		}
		for _, x := range orderings {
			b.catOrder(x - 2)
			b.scanCuts(j, x-2, -1, tot, &present, best)
		}
	}
	return true
}

// maxOrderings bounds the orderings of a multiclass categorical split.
const maxOrderings = 2

// catOrderings sets b.catOrder3 to the classes (entries 2+q) whose shares
// order the categories of a node of more than two classes: its
// maxOrderings heaviest classes (ties to the lower class), in that order;
// for a node of two classes the first, as the second ordering is the first
// reversed, whose cuts tie at best (and lose the tie).
func (b *builder) catOrderings(tot []int64) {
	cq := b.catClasses
	if len(cq) <= 2 {
		b.catOrder3 = append(b.catOrder3[:0], cq[:1]...)
		return
	}
	o := append(b.catOrder3[:0], cq...)
	slices.SortStableFunc(o, func(x, y int) int { return cmp.Compare(tot[y], tot[x]) })
	b.catOrder3 = o[:min(len(o), maxOrderings)]
}

// scanCuts evaluates the cuts of the present codes in the order of
// b.catPerm (ordering number q): the first k+1 codes left, for k = 0..m-2,
// or only k = only when only >= 0.
func (b *builder) scanCuts(j, q, only int, tot []int64, present *CategorySet, best *split) {
	stride := b.stride
	if b.cls == nil && stride == 3 && only < 0 {
		b.scanCutsRegression(j, tot, present, best)
		return
	}
	perm, st := b.catPerm[:len(b.catCodes)], b.catStats
	left, cand := b.scr.left, b.scr.cand
	clear(left)
	minLeaf := int64(b.minLeaf)
	bestK := -1
	// Gini keeps Σ L² and Σ R² exact as categories move left (as
	// scanPresentGini does): the same integers, so the same scores, as
	// proxy computes from scratch.
	gini := b.cls != nil && !b.entropy
	var sqL, sqR int64
	cq := b.catClasses // the node's classes (entries 2+q)
	if gini {
		copy(cand, tot) // the right side
		for _, x := range cq {
			sqR += tot[x] * tot[x]
		}
	}
	for k, i := range perm[:len(perm)-1] {
		e := st[int(i)*stride : int(i+1)*stride]
		if gini {
			for _, x := range cq {
				v := e[x]
				sqL += v * (2*left[x] + v)
				sqR += v * (v - 2*cand[x])
				left[x] += v
				cand[x] -= v
			}
			left[0], left[1] = left[0]+e[0], left[1]+e[1]
			cand[0], cand[1] = cand[0]-e[0], cand[1]-e[1]
		} else {
			for x := range left {
				left[x] += e[x]
			}
		}
		if only >= 0 && k != only {
			continue
		}
		if left[0] < minLeaf || tot[0]-left[0] < minLeaf || left[1] < b.minW || tot[1]-left[1] < b.minW {
			continue
		}
		var score float64
		switch {
		case b.cls == nil:
			score = regressionScoreRec(left[2], left[1], tot[2], tot[1], b.rec)
		case gini:
			score = float64(sqL)/float64(left[1]) + float64(sqR)/float64(cand[1])
		default:
			for x := range cand {
				cand[x] = tot[x] - left[x]
			}
			score = b.proxy(left) + b.proxy(cand)
		}
		if best.ok && score < best.score {
			continue
		}
		tie := q<<8 | k
		if better(best, score, j, tie, false) {
			best.ok, best.score, best.feature, best.bin, best.missingLeft = true, score, j, tie, false
			copy(best.left, left)
			bestK = k
		}
	}
	b.setCut(bestK, tot, present, best)
}

// scanCutsRegression is scanCuts for a regression node, every cut
// evaluated (the best splitter): the left side's sums in registers.
func (b *builder) scanCutsRegression(j int, tot []int64, present *CategorySet, best *split) {
	perm, st := b.catPerm[:len(b.catCodes)], b.catStats
	tn, tw, ts := tot[0], tot[1], tot[2]
	minLeaf, minW, rec := int64(b.minLeaf), b.minW, b.rec
	bestK := -1
	var nl, wl, sl int64
	for k, i := range perm[:len(perm)-1] {
		e := st[int(i)*3 : int(i)*3+3]
		nl, wl, sl = nl+e[0], wl+e[1], sl+e[2]
		if nl < minLeaf || tn-nl < minLeaf || wl < minW || tw-wl < minW {
			continue
		}
		score := regressionScoreRec(sl, wl, ts, tw, rec)
		if best.ok && score < best.score {
			continue
		}
		if better(best, score, j, k, false) {
			best.ok, best.score, best.feature, best.bin, best.missingLeft = true, score, j, k, false
			best.left[0], best.left[1], best.left[2] = nl, wl, sl
			bestK = k
		}
	}
	b.setCut(bestK, tot, present, best)
}

// setCut sets best.set to the first bestK+1 codes of b.catPerm's order
// when the scan found its best cut there (bestK >= 0), with the codes the
// node does not hold when the left side is the heavier.
func (b *builder) setCut(bestK int, tot []int64, present *CategorySet, best *split) {
	if bestK < 0 {
		return
	}
	best.set = cutSet(b.catCodes, b.catPerm[:bestK+1], 2*best.left[1] >= tot[1])
}

// cutSet is the category set of a cut: the codes codes[i] of the indices
// i in left, and when heavier (the left side has at least half the
// node's weight) every code the node does not hold (codes lists those it
// holds): the learned default, absent and unseen codes following the
// heavier side.
func cutSet(codes []uint8, left []uint8, heavier bool) CategorySet {
	var set CategorySet
	for _, i := range left {
		set.add(codes[i])
	}
	if heavier {
		var present CategorySet
		for _, c := range codes {
			present.add(c)
		}
		for w := range set {
			set[w] |= ^present[w]
		}
	}
	return set
}

// catFeatures returns which features the binner has categorical, nil when
// none is.
func catFeatures(bn *Binner) []bool {
	if !bn.HasCategorical() {
		return nil
	}
	cat := make([]bool, len(bn.Edges))
	for j := range cat {
		cat[j] = bn.IsCategorical(j)
	}
	return cat
}

// tinyNode is the most rows of a node that scanTinyRegression takes: most
// nodes of deep trees are this small, where the general path's calls and
// buffers cost more than the rows.
const tinyNode = 16

// tinyRows is the most rows scanCategorical sends to scanTinyRegression
// (tinyNode; tests set 0 to compare with the general path).
var tinyRows = tinyNode

// scanTinyRegression is scanCategorical for a regression node of at most
// tinyNode rows on the sorted path (best splitter), in arrays on the
// stack: the same orderings, cuts, scores, ties and learned default.
func (b *builder) scanTinyRegression(j, lo, hi, buf int, tot []int64, best *split) bool {
	off := j*b.scap + lo - b.sbase
	ents := b.sent[buf][off : off+hi-lo]
	if entCode(ents[0]) == entCode(ents[len(ents)-1]) { // sorted by code: one code
		return false
	}
	var cn, cw, cs [tinyNode]int64
	var cc [tinyNode]uint8
	lw, lwy := b.lw, b.lwy
	m, prev := 0, entCode(ents[0])
	cc[0] = prev
	for _, v := range ents {
		if c := entCode(v); c != prev {
			m++
			cc[m], prev = c, c
		}
		e := entRow(v)
		cn[m]++
		cw[m] += lw[e]
		cs[m] += lwy[e]
	}
	m++
	// The order of the mean targets (as sortCats: float64 quotients where
	// they differ and every sum is below 2^53, else exactly), ties by code.
	var keys [tinyNode]float64
	fast := true
	var ub float64 // cutsBound's bound: Σ s²/w over the codes
	for i := range m {
		keys[i] = float64(cs[i]) / float64(cw[i])
		fast = fast && cs[i] > -1<<53 && cs[i] < 1<<53 && cw[i] < 1<<53
		ub += float64(cs[i]) * keys[i]
	}
	if cutsBounded && best.ok && ub*boundSlack < best.score {
		return true
	}
	var perm [tinyNode]uint8
	for i := 1; i < m; i++ {
		k := i
		for ; k > 0; k-- {
			u := perm[k-1]
			if fast && keys[i] != keys[u] {
				if keys[i] > keys[u] {
					break
				}
			} else if cmpFractions(cs[i], cw[i], cs[u], cw[u]) >= 0 {
				break
			}
			perm[k] = u
		}
		perm[k] = uint8(i)
	}
	tn, tw, ts := tot[0], tot[1], tot[2]
	minLeaf, minW, rec := int64(b.minLeaf), b.minW, b.rec
	bestK := -1
	var nl, wl, sl int64
	for k, i := range perm[:m-1] {
		nl, wl, sl = nl+cn[i], wl+cw[i], sl+cs[i]
		if nl < minLeaf || tn-nl < minLeaf || wl < minW || tw-wl < minW {
			continue
		}
		score := regressionScoreRec(sl, wl, ts, tw, rec)
		if best.ok && score < best.score {
			continue
		}
		if better(best, score, j, k, false) {
			best.ok, best.score, best.feature, best.bin, best.missingLeft = true, score, j, k, false
			best.left[0], best.left[1], best.left[2] = nl, wl, sl
			bestK = k
		}
	}
	if bestK >= 0 {
		best.set = cutSet(cc[:m], perm[:bestK+1], 2*best.left[1] >= tot[1])
	}
	return true
}

// scanTinyGini is scanCategorical for a Gini node of at most tinyNode rows
// on the rows path (best splitter), in arrays on the stack, with the
// node's classes compacted: the same orderings (catOrderings), cuts,
// scores, ties and learned default as the general path.
func (b *builder) scanTinyGini(j, lo, hi int, tot []int64, best *split) bool {
	var code [tinyNode]uint8
	var wt [tinyNode]int64
	var cl [tinyNode]int
	n := hi - lo
	if b.local {
		col := b.loc[j*b.lsize : (j+1)*b.lsize]
		mask := int64(-1)
		if b.packed { // see builder.locW
			mask = 1<<32 - 1
		}
		for k, i := range b.lrows[lo-b.lbase : hi-b.lbase] {
			code[k], wt[k], cl[k] = col[i], b.locW[i]&mask, int(b.locY[i])
		}
	} else {
		xb, p := b.feature(j, n)
		for k, r := range b.rows[lo:hi] {
			code[k], wt[k], cl[k] = xb[int(r)*p], b.rw[r], int(b.cls[r])
		}
	}
	// The node's classes (entries 2+q, increasing), once a node.
	if !b.catNode {
		cq := b.catClasses[:0]
		for q := 0; q < b.d; q++ {
			if tot[2+q] != 0 {
				cq = append(cq, 2+q)
			}
		}
		b.catClasses = cq
		if b.d > 2 {
			b.catOrderings(tot)
		}
		b.catNode = true
	}
	cq := b.catClasses
	K := len(cq) // at most n <= tinyNode: the classes of the node's rows
	// Group the rows by code: codes in the order first seen, then ranked
	// in increasing order (as gatherCats lists them).
	var seen [tinyNode]uint8
	var idx [tinyNode]uint8
	m := 0
	for k := range n {
		c := code[k]
		at := 0
		for at < m && seen[at] != c {
			at++
		}
		if at == m {
			seen[m] = c
			m++
		}
		idx[k] = uint8(at)
	}
	if m < 2 {
		return false
	}
	var rank [tinyNode]uint8
	var cc [tinyNode]uint8
	for a := range m {
		r := 0
		for b2 := range m {
			if seen[b2] < seen[a] {
				r++
			}
		}
		rank[a], cc[r] = uint8(r), seen[a]
	}
	var cn, cw [tinyNode]int64
	cs := b.catStats[:m*K]
	clear(cs)
	for k := range n {
		r := int(rank[idx[k]])
		x := 0
		for cq[x] != 2+cl[k] {
			x++
		}
		cn[r]++
		cw[r] += wt[k]
		cs[r*K+x] += wt[k]
	}
	if cutsBounded && best.ok { // cutsBound's bound: Σ_code Σ_c s_c²/w
		var ub float64
		for r := range m {
			var sq int64
			for _, v := range cs[r*K : (r+1)*K] {
				sq += v * v
			}
			ub += float64(sq) / float64(cw[r])
		}
		if ub*boundSlack < best.score {
			return true
		}
	}
	// The orderings: the share of the second class (two classes), else of
	// the node's heaviest classes (catOrder3), the lower class alone when
	// two codes give one cut (scanCategorical).
	var orderings []int
	switch {
	case b.d == 2:
		orderings = []int{3}
	default:
		orderings = b.catOrder3
		if m == 2 && len(orderings) == 2 {
			orderings = orderings[:1]
			if b.catOrder3[1] < b.catOrder3[0] {
				orderings = b.catOrder3[1:]
			}
		}
	}
	minLeaf, minW := int64(b.minLeaf), b.minW
	var sqTot int64
	for _, x := range cq {
		sqTot += tot[x] * tot[x]
	}
	for _, xo := range orderings {
		q := xo - 2
		xc := 0 // the ordering class's compact index (-1: not in the node)
		for xc < K && cq[xc] != xo {
			xc++
		}
		key := func(i uint8) int64 {
			if xc == K {
				return 0
			}
			return cs[int(i)*K+xc]
		}
		var perm [tinyNode]uint8
		for i := 1; i < m; i++ {
			k := i
			for ; k > 0; k-- {
				u := perm[k-1]
				if cmpFractions(key(uint8(i)), cw[i], key(u), cw[u]) >= 0 {
					break
				}
				perm[k] = u
			}
			perm[k] = uint8(i)
		}
		var left, right [tinyNode]int64
		for x := range K {
			right[x] = tot[cq[x]]
		}
		var nl, wl, sqL int64
		sqR := sqTot
		bestK := -1
		for k, i := range perm[:m-1] {
			for x := range K {
				v := cs[int(i)*K+x]
				sqL += v * (2*left[x] + v)
				sqR += v * (v - 2*right[x])
				left[x] += v
				right[x] -= v
			}
			nl += cn[i]
			wl += cw[i]
			if nl < minLeaf || tot[0]-nl < minLeaf || wl < minW || tot[1]-wl < minW {
				continue
			}
			score := float64(sqL)/float64(wl) + float64(sqR)/float64(tot[1]-wl)
			if best.ok && score < best.score {
				continue
			}
			tie := q<<8 | k
			if better(best, score, j, tie, false) {
				best.ok, best.score, best.feature, best.bin, best.missingLeft = true, score, j, tie, false
				clear(best.left)
				best.left[0], best.left[1] = nl, wl
				for x := range K {
					best.left[cq[x]] = left[x]
				}
				bestK = k
			}
		}
		if bestK >= 0 {
			best.set = cutSet(cc[:m], perm[:bestK+1], 2*best.left[1] >= tot[1])
		}
	}
	return true
}

// cutsBounded turns on the skip of categorical features whose cutsBound
// is below the best score so far (tests turn it off to check that the
// trees are the same without it).
var cutsBounded = true

// boundSlack widens cutsBound past the rounding of its float64 sum and of
// the cut scores it bounds (a few ulps each, far below 1e-9 relative).
const boundSlack = 1 + 1e-9

// cutsBound returns a number that no cut score of the gathered codes
// (b.catCodes, b.catStats) can exceed, for squared error and Gini
// (+Inf for entropy, which it does not bound): the score of sending every
// code to a part of its own. A cut's score is Σ_parts Σ_c s_c²/w over its
// two parts (the classes' weights, or the weighted target sum, s_c, and
// the part's weight w), and merging two parts never raises it:
// (a+b)²/(x+y) ≤ a²/x + b²/y for x, y > 0 (Titu's lemma), so the finest
// partition bounds every cut. Skipping a feature whose bound is below the
// best score so far gives the same split as scanning it: a cut is taken
// only at a score of at least the best.
func (b *builder) cutsBound(tot []int64) float64 {
	stride, st := b.stride, b.catStats
	var ub float64
	switch {
	case b.cls == nil && stride == 3:
		for i := range b.catCodes {
			e := st[i*3 : i*3+3 : i*3+3]
			s := float64(e[2])
			ub += s * s / float64(e[1])
		}
	case b.cls != nil && !b.entropy:
		cq := b.catClasses
		for i := range b.catCodes {
			e := st[i*stride : (i+1)*stride]
			var sq int64
			for _, x := range cq {
				sq += e[x] * e[x]
			}
			ub += float64(sq) / float64(e[1])
		}
	default:
		return math.Inf(1)
	}
	return ub * boundSlack
}
