package forest

import (
	"cmp"
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
//   - more classes: once by the share of each class present in the node,
//     keeping the best cut of all these orderings (one-vs-rest orderings;
//     the best subset is not guaranteed, as no polynomial rule finds it).
//
// Missing values (the missing code) are a category of their own when the
// node has any. Ties of the ordering go to the lower code. Cuts are scored
// like numeric boundaries (proxy of both sides, MinSamplesLeaf and
// MinWeightFractionLeaf on both sides); among equal scores the lowest
// feature wins, then the first ordering, then the shortest left side.
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
	for c := 0; c <= int(bin); c++ {
		s.add(uint8(c))
	}
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
	return c <= t.Bin[i] || (c == mc && t.MissingLeft[i])
}

// isCat reports whether feature j is categorical.
func (b *builder) isCat(j int) bool { return b.cat != nil && b.cat[j] }

// codeStats fills h (all zero; NumBins+1 entries of stride) with the
// statistics of each code of feature j over the node's rows[lo:hi], read
// where the node's rows are: the sorted lists (buf >= 0), the local block,
// or the codes.
func (b *builder) codeStats(j, lo, hi, buf int, h []int64) {
	stride := b.stride
	add := func(c uint8, w, y int64) {
		e := int(c) * stride
		h[e]++
		h[e+1] += w
		if b.cls != nil {
			h[e+2+int(y)] += w
		} else {
			h[e+2] += y
		}
	}
	switch {
	case buf >= 0:
		off := j*b.scap + lo - b.sbase
		codes := b.scode[buf][off : off+hi-lo]
		for i, e := range b.ent[buf][off : off+hi-lo] {
			add(codes[i], b.lw[e], b.lwy[e])
		}
	case b.local:
		col := b.loc[j*b.lsize : (j+1)*b.lsize]
		for _, i := range b.lrows[lo-b.lbase : hi-b.lbase] {
			w := b.locW[i]
			if b.packed { // see builder.locW
				w &= 1<<32 - 1
			}
			add(col[i], w, b.locY[i])
		}
	default:
		xb, p := b.feature(j, hi-lo)
		for _, r := range b.rows[lo:hi] {
			y := int64(0)
			if b.cls != nil {
				y = int64(b.cls[r])
			} else {
				y = b.wy[r]
			}
			add(xb[int(r)*p], b.rw[r], y)
		}
	}
}

// scanCategorical evaluates categorical feature j at the node with the
// given key over rows[lo:hi] (hist: the node's dense histogram, or nil;
// buf: its sorted lists, or -1). It returns false when the node's rows
// hold one code.
func (b *builder) scanCategorical(j, lo, hi, buf int, key uint64, hist, tot []int64, best *split) bool {
	stride, nbj := b.stride, b.nb[j]
	var h []int64
	if hist != nil {
		h = hist[b.off[j]*stride : (b.off[j]+nbj+1)*stride]
	} else {
		h = b.fh[:(nbj+1)*stride] // all zero between calls
		defer clear(h)
		b.codeStats(j, lo, hi, buf, h)
	}
	var present CategorySet
	codes := b.catCodes[:0]
	for c := 0; c <= nbj; c++ {
		if h[c*stride] > 0 {
			codes = append(codes, uint8(c))
			present.add(uint8(c))
		}
	}
	if len(codes) < 2 {
		return false
	}
	keys := b.catKeys
	order := func(q int) {
		for _, c := range codes {
			e := h[int(c)*stride:]
			if b.cls == nil {
				keys[c] = float64(e[2]) / float64(e[1])
			} else {
				keys[c] = float64(e[2+q]) / float64(e[1])
			}
		}
		slices.SortFunc(codes, func(x, y uint8) int {
			return cmp.Or(cmp.Compare(keys[x], keys[y]), cmp.Compare(x, y))
		})
	}
	if b.random {
		q := 0
		if b.cls != nil {
			for k, v := range tot[2:stride] {
				if v > tot[2+q] {
					q = k
				}
			}
		}
		order(q)
		cut := rng.Below(core.ThresholdDraw(b.seed, b.tree, key, j), len(codes)-1)
		b.scanCuts(j, 0, codes, cut, h, tot, &present, best)
		return true
	}
	switch {
	case b.cls == nil:
		order(0)
		b.scanCuts(j, 0, codes, -1, h, tot, &present, best)
	case b.d == 2:
		order(1)
		b.scanCuts(j, 0, codes, -1, h, tot, &present, best)
	default:
		for q := 0; q < b.d; q++ {
			if tot[2+q] == 0 {
				continue
			}
			order(q)
			b.scanCuts(j, q, codes, -1, h, tot, &present, best)
		}
	}
	return true
}

// scanCuts evaluates the cuts of the ordered codes (ordering number q):
// the first k codes left, for k = 1..len(codes)-1, or only k = only+1
// when only >= 0.
func (b *builder) scanCuts(j, q int, codes []uint8, only int, h, tot []int64, present *CategorySet, best *split) {
	stride := b.stride
	left, cand := b.scr.left, b.scr.cand
	clear(left)
	minLeaf := int64(b.minLeaf)
	for k, c := range codes[:len(codes)-1] {
		e := h[int(c)*stride : int(c+1)*stride]
		for i := range left {
			left[i] += e[i]
		}
		if only >= 0 && k != only {
			continue
		}
		if left[0] < minLeaf || tot[0]-left[0] < minLeaf || left[1] < b.minW || tot[1]-left[1] < b.minW {
			continue
		}
		var score float64
		if b.cls == nil {
			score = regressionScoreRec(left[2], left[1], tot[2], tot[1], b.rec)
		} else {
			for i := range cand {
				cand[i] = tot[i] - left[i]
			}
			score = b.proxy(left) + b.proxy(cand)
		}
		tie := q<<8 | k
		if !better(best, score, j, tie, false) {
			continue
		}
		best.ok, best.score, best.feature, best.bin, best.missingLeft = true, score, j, tie, false
		copy(best.left, left)
		var s CategorySet
		for _, c := range codes[:k+1] {
			s.add(c)
		}
		if 2*left[1] >= tot[1] { // the learned default: absent codes follow the heavier side
			for w := range s {
				s[w] |= ^present[w]
			}
		}
		best.set = s
	}
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
