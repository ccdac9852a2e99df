package forest

import (
	"bytes"
	"math"
	"math/bits"
	"slices"

	"github.com/gotrain/gotrain/forest/internal/core"
	"github.com/gotrain/gotrain/rng"
)

// Split rules, shared with the accelerator learner.
//
// A node's rows carry integer statistics: n (distinct rows), w (bootstrap
// weight) and D sums — for regression the weighted fixed-point target
// Σ w·round((y-ȳ)·2^s), for classification the weighted class counts. All
// sums are exact integers, so they do not depend on the order rows are added
// in. For each feature, a candidate split at bin b sends codes <= b left and
// missing values to one side; it is valid when both sides keep at least
// MinSamplesLeaf rows. Its score is proxy(left) + proxy(right) computed in
// float64 by splitScore. The best candidate has the highest score; ties go to
// the lowest feature index, then the lowest bin, then missing-right before
// missing-left. A node splits only when the best score exceeds the node's own
// proxy by more than a relative 1e-12. When the node saw no missing value of
// the chosen feature, missing values go to the side with more weight (left on
// a tie). Only bins where a row of the node falls are candidate boundaries, so
// a learner that walks the node's rows sorted by code (the sorted path, used
// for small nodes) and one that scans every bin of a histogram (the dense
// path) choose the same split.
//
// Scores are computed from the integer statistics only, by the same float64
// expressions in every path: squared error float64(s*s)/w with s converted to
// float64 first; Gini float64(Σ c²)/w with Σ c² summed exactly in int64;
// entropy Σ c·ln c − w·ln w summed in class order; the squared-error score of
// a split is regressionScore.

// gainTolerance is the relative improvement a split must bring.
const gainTolerance = 1e-12

// builder grows trees; one per worker, reused across trees.
type builder struct {
	// Shared, read-only.
	xb []uint8 // binned rows, row-major n x p
	// The rows path reads the codes of one feature of a node's rows. In
	// the row-major xb each such read misses the cache once a node's rows
	// outgrow it, so nodes above localAt rows read xc, the same codes
	// column-major (feature j of row r at j*n+r), with their rows kept in
	// increasing order so that a feature's scan reads its column forwards;
	// a node of at most localAt rows copies its rows' codes into a small
	// column-major block of its own (enterLocal) that its whole subtree
	// reads. xc is nil when the rows path is not used.
	xc      []uint8
	localAt int
	// cols replaces xc when the learner keeps no row-major codes (xb nil:
	// Fit); a worker reads its sparse columns whole through colBuf.
	cols   *columnCodes
	colBuf []uint8
	// rowNZ holds with cols each row's features off their column's base
	// (columnCodes.rowBits, cwords words a row); a local block copies its
	// rows' into locBits, from which baseBits finds the features of one
	// code in a node (baseBuf, skipBuf: cwords words of scratch).
	rowNZ, locBits, baseBuf, skipBuf []uint64
	// noMissing tells, with cols, the features missing in no row.
	noMissing []bool
	// rowsOptional tells that the trees read no row-major code (xb) when
	// xb is nil: the column-major copy serves every read.
	rowsOptional bool
	cwords       int // uint64 words of a feature bitset
	n, p         int
	nb           []int   // real bins per feature
	off          []int   // histogram offset (in entries) of each feature
	entries      int     // total histogram entries (real + missing bins)
	miss         []uint8 // missing code per feature
	yq           []int64 // regression: fixed-point centred target per row
	cls          []int32 // classification: class per row
	d            int     // sums per entry (1 or number of classes)
	stride       int     // int64s per histogram entry: n, w, sums
	entropy      bool
	k            int  // features considered per node
	small        int  // nodes with at most this many rows leave the dense path
	dense        bool // large nodes keep histograms of every feature (most features are examined)
	sortAt       int  // nodes with at most this many rows (and no histogram) use the sorted path
	seed         uint64
	edges        [][]float64
	queue        []int32   // emit's breadth-first queue, kept between trees
	prep         *prepared // node values (LeafValue), shared with the graph learner
	maxDepth     int
	minLeaf      int
	minWF        float64 // Options.MinWeightFractionLeaf
	minSplit     int

	// Per worker, reused across trees.
	tree   int
	counts []int32 // the tree's bootstrap counts
	// rw is each row's weight in the tree: its bootstrap count times its
	// fixed-point sample weight (prepared.W; 1 when unweighted). Rows of
	// weight 0 are not in the tree.
	rw []int64
	// minW is the least weight each side of a split keeps in the tree
	// being grown: ceil(MinWeightFractionLeaf × the root's weight).
	minW int64
	wy   []int64 // regression: rw[r]*yq[r]
	rows []int32
	// The sorted path works on one subtree at a time: the node that entered
	// it covers rows[sbase:sbase+scap'] and feature j's entries of position
	// pos, sorted by code within each node, are at j*scap + pos-sbase.
	// Rows of the subtree are renumbered 0..m-1 (local indices) so that its
	// lists hold 4-byte indices and its weights fit in the CPU's cache.
	sbase  int
	scap   int
	sent   [2][]uint32 // each feature's list of entries (entRow, entCode), in two buffers that partitions alternate between
	lw     []int64     // weight of each local row
	lwy    []int64     // weighted fixed-point target (regression) or class of each local row
	mark   []uint8     // per local row: 1 when it goes left in the current partition
	rec    []float64   // rec[w] = 1/w
	bucket []int32
	nodes  []bnode
	values []float64
	pool   [][]int64
	prio   []uint64
	scr    scratch
	rtmp   []int32    // the right side of a stable partition
	sink   uint8      // what gatherColumns returns, kept so that its early loads stay
	gmask  []uint64   // columnCodes.gather's row bitmap
	seen   [256]uint8 // scanLocalGini's marks of the codes present, zero between uses
	// nodeW holds, for the node being searched by the packed Gini scans
	// (nodeOK), each of its rows' (1<<32 | weight)<<8 | its class's entry
	// (cmap), in the order of the node's rows: what histNodeAsm adds
	// and where, read in order (nil where that kernel does not run).
	nodeW  []int64
	nodeOK bool
	// The sparse scans of large nodes in a local block (scanSparseGini):
	// locNZ holds, for each feature copied into the block, a bitmap of
	// its rows whose code is not 0 (lwords words a feature; lnz when the
	// block's are set); for the node being searched (sparseOK), nodeBits
	// is the bitmap of its rows, rowW each of its rows' nodeW entry by
	// row of the block, ptot its rows' packed sums by class entry (what
	// code 0 holds once the other codes' are taken away), list and wlist the
	// kernel's scratch.
	locNZ    []uint64
	lwords   int
	lnz      bool
	nodeBits []uint64
	rowW     []int64
	ptot     []int64
	list     []uint16
	wlist    []uint64
	sparseOK bool
	// The same for the nodes outside local blocks, by row of the data
	// (with cols, fewer than 2^16 rows: histSparseAsm's row indices):
	// gBits the node's rows, gRowW their nodeW entries, gList and gWlist
	// the kernel's scratch; gsparseOK while searching such a node.
	gBits, gWlist []uint64
	gRowW         []int64
	gList         []uint16
	gsparseOK     bool
	// The local block of the subtree being grown (enterLocal), when local:
	// rows[lbase:lbase+lsize] entered it as local rows 0..lsize-1; feature
	// j of local row i is at loc[j*lsize+i]; lrows[pos-lbase] is the local
	// row at position pos; locW and locY are each local row's weight and
	// class (classification) or weighted target (regression); when packed,
	// locW holds class<<56 | 1<<32 | weight, what scanLocalGini adds.
	local        bool
	lbase, lsize int
	loc          []uint8
	lrows        []int32
	locW, locY   []int64
	lkonst       []uint64   // blockConstants of the local block
	codeBuf      []uint8    // scanPackedVector's codes (listCodes)
	pscan        packedScan // scanPackedVector's state
	fh           []int64    // one feature's histogram (rows path), zero between uses
	// Gini scans of local blocks (scanLocalGini) count a node's present
	// classes only: packed says they may (classification by Gini, every
	// class weight below 2^32); for the node being searched, cstride is
	// 2 plus its number of classes (0 outside such a search), cmap[q] the
	// entry of class q, cclass the class of each entry, ctot its totals.
	packed  bool
	random  bool // the random splitter (scanRandom)
	cstride int
	cmap    [maxPacked]int
	cclass  []int
	ctot    []int64
	arena   []int64 // statistics of the nodes on the current path
	// konst holds, for each node on the current path, the bitset of
	// features known to be constant in it (found so by its ancestors'
	// split searches or its own): constant in a node means constant in
	// every descendant, so they are skipped without a scan.
	konst []uint64
	// cat tells which features are categorical (nil: none); the split
	// search of a categorical feature (scanCategorical) orders its codes
	// in catCodes by the keys catNum/catDen, and the tree's category sets
	// collect in sets.
	cat        []bool
	catCodes   []uint8 // the codes present, increasing
	catStats   []int64 // their statistics, stride each
	catPerm    []uint8 // indices into catCodes, in the order of the keys
	catNum     []int64 // each present code's key, catNum/catDen
	catDen     []int64
	catKeys    []float64 // catNum/catDen in float64 (catOrder)
	catClasses []int     // the node's classes, as entries 2+q
	catOrder3  []int     // the classes whose orderings a multiclass node tries
	catNode    bool      // catClasses and catOrder3 hold the node's (findSplit resets it)
	catKeyed   bool      // gatherCats set catNum, catDen, catKeys (regression keys)
	catFast    bool      // and every one of them below 2^53 (sortCats)
	sets       []CategorySet
}

// scratch holds per-node buffers of stride int64s.
type scratch struct {
	left, miss, cand, best []int64
	sides                  []int64 // scanRandom's left, right and missing statistics
}

// bnode is a node while growing (depth-first order).
type bnode struct {
	feature     int32
	bin         uint8
	missingLeft bool
	set         int32 // index in builder.sets of a categorical split, else -1
	left, right int32
	n           int32
	w           int64
	gain        float64
}

// split is a candidate split.
type split struct {
	ok          bool
	feature     int
	bin         int
	missingLeft bool
	score       float64
	gain        float64     // score minus the node's own proxy
	left        []int64     // stride statistics of the left side
	set         CategorySet // the codes that go left, when feature is categorical
}

// floor is the score a candidate must reach to be considered against the
// best so far: its score, or -Inf when there is none yet.
func (s *split) floor() float64 {
	if s.ok {
		return s.score
	}
	return math.Inf(-1)
}

func newWorker(b *builder) *builder {
	w := *b
	w.counts = make([]int32, b.n)
	w.rw = make([]int64, b.n)
	if b.cls == nil {
		w.wy = make([]int64, b.n)
	}
	w.rows = make([]int32, 0, b.n)
	w.rtmp = make([]int32, b.n)
	if m := min(b.localAt, b.n); m > 0 {
		w.loc = make([]uint8, m*b.p)
		w.lrows = make([]int32, m)
		w.locW = make([]int64, m)
		w.locY = make([]int64, m)
		w.lkonst = make([]uint64, b.cwords)
		if (b.xc != nil || b.cols != nil) && useVBMI2 {
			w.gmask = make([]uint64, (b.n+63)/64)
		}
		if useVBMI2 && b.packed {
			nw := m // nodeW: a block's node, or a node read from the columns
			if b.xc != nil || b.cols != nil {
				nw = max(m, b.n)
			}
			w.nodeW, w.ptot = make([]int64, nw), make([]int64, b.stride)
			if b.cols != nil && b.n < 1<<16 {
				words := b.cols.words
				w.gBits, w.gWlist = make([]uint64, words), make([]uint64, words+8)
				w.gRowW, w.gList = make([]int64, b.n), make([]uint16, b.n+32)
			}
			if m <= 1<<16 && m >= sparseAt {
				lw := (m + 63) / 64
				w.locNZ = make([]uint64, lw*b.p)
				w.nodeBits = make([]uint64, lw)
				w.rowW = make([]int64, m)
				w.list = make([]uint16, m+32)
				w.wlist = make([]uint64, lw+8)
			}
		}
	}
	if b.cols != nil {
		w.colBuf = make([]uint8, 64*b.cols.words)
	}
	if b.rowNZ != nil && b.localAt > 0 {
		w.locBits = make([]uint64, min(b.localAt, b.n)*b.cwords)
		w.baseBuf, w.skipBuf = make([]uint64, b.cwords), make([]uint64, b.cwords)
	}
	w.scap = min(b.n, max(b.sortAt, 1))
	for k := range w.sent {
		w.sent[k] = make([]uint32, w.scap*b.p)
	}
	w.lw = make([]int64, w.scap)
	w.lwy = make([]int64, w.scap)
	w.mark = make([]uint8, w.scap+3) // partitionEnts reads 3 bytes past a row's mark
	w.bucket = make([]int32, 257)
	w.prio = make([]uint64, b.p)
	w.pool, w.nodes, w.values = nil, nil, nil
	w.fh = make([]int64, 256*b.stride)
	if b.packed {
		w.cclass, w.ctot = make([]int, b.d), make([]int64, b.stride)
	}
	w.konst = make([]uint64, 0, 64*b.cwords)
	w.codeBuf = make([]uint8, 0, 256+64) // listCodes writes 64 bytes past the codes
	if b.cat != nil {
		w.catCodes, w.catStats = make([]uint8, 0, 256), make([]int64, 0, 256*b.stride)
		w.catPerm, w.catNum, w.catDen, w.sets = make([]uint8, 256), make([]int64, 256), make([]int64, 256), nil
		w.catKeys = make([]float64, 256)
		w.catClasses, w.catOrder3 = make([]int, 0, b.d), make([]int, 0, b.d)
	}
	w.arena = make([]int64, 0, 128*b.stride)
	w.scr = scratch{make([]int64, b.stride), make([]int64, b.stride), make([]int64, b.stride), make([]int64, b.stride), make([]int64, 3*b.stride)}
	return &w
}

func (b *builder) getHist() []int64 {
	if n := len(b.pool); n > 0 {
		h := b.pool[n-1]
		b.pool = b.pool[:n-1]
		clear(h)
		return h
	}
	return make([]int64, b.entries*b.stride)
}

func (b *builder) putHist(h []int64) {
	if h != nil {
		b.pool = append(b.pool, h)
	}
}

// proxy is the impurity proxy of a side with statistics st (n, w, sums):
// core.Proxy.
func (b *builder) proxy(st []int64) float64 {
	return core.Proxy(st[:b.stride], b.cls != nil, b.entropy)
}

// better reports whether candidate (score, j, bin, ml) beats the best so
// far: core.Better's tie rule.
func better(cur *split, score float64, j, bin int, ml bool) bool {
	return core.Better(cur.ok, cur.score, cur.feature, cur.bin, cur.missingLeft, score, j, bin, ml)
}

// buildTree grows tree t over the rows with positive counts.
func (b *builder) buildTree(t int, tr *Tree) {
	b.tree = t
	b.nodes = b.nodes[:0]
	b.values = b.values[:0]
	b.rows = b.rows[:0]
	b.sets = b.sets[:0]
	tot := make([]int64, b.stride)
	if w := b.prep.W; w == nil {
		for i, c := range b.counts {
			b.rw[i] = int64(c)
		}
	} else {
		for i, c := range b.counts {
			b.rw[i] = int64(c) * w[i]
		}
	}
	for i, w := range b.rw {
		if w > 0 {
			r := int32(i)
			b.rows = append(b.rows, r)
			if b.wy != nil {
				b.wy[i] = w * b.yq[i]
			}
			b.addRow(tot, r)
		}
	}
	b.minW = 0
	if b.minWF > 0 {
		b.minW = int64(math.Ceil(b.minWF * float64(tot[1])))
	}
	var hist []int64
	if b.dense && len(b.rows) > b.small {
		hist = b.getHist()
		b.accumulate(hist, b.rows)
	}
	b.grow(0, len(b.rows), 0, core.RootKey, hist, -1, tot)
	b.emit(tr)
}

// addRow adds row r's statistics to st.
func (b *builder) addRow(st []int64, r int32) {
	w := b.rw[r]
	st[0]++
	st[1] += w
	if b.cls != nil {
		st[2+b.cls[r]] += w
	} else {
		st[2] += w * b.yq[r]
	}
}

// accumulate adds the rows' statistics into the dense histogram h.
func (b *builder) accumulate(h []int64, rows []int32) {
	p, off, stride := b.p, b.off, b.stride
	if b.cls == nil {
		for _, r := range rows {
			w := b.rw[r]
			wy := b.wy[r]
			xr := b.xb[int(r)*p : int(r)*p+p]
			for j, c := range xr {
				e := (off[j] + int(c)) * 3
				hh := h[e : e+3 : e+3]
				hh[0]++
				hh[1] += w
				hh[2] += wy
			}
		}
		return
	}
	for _, r := range rows {
		w := b.rw[r]
		cl := 2 + int(b.cls[r])
		xr := b.xb[int(r)*p : int(r)*p+p]
		for j, c := range xr {
			e := (off[j] + int(c)) * stride
			h[e]++
			h[e+1] += w
			h[e+cl] += w
		}
	}
}

// featureOrder returns the features the node may examine, in the order
// it examines them: by increasing (priority >> 16, feature index), with the
// priority from FeaturePriority, packed into one uint64 key per feature.
// Features known to be constant (konst) are left out: the node would skip
// them. Only a prefix is put in order: the keys below limit, a threshold
// that should catch about twice the features needed; the caller puts the
// next keys in order with nextBand when it runs past sorted.
func (b *builder) featureOrder(key uint64, konst []uint64) (order []uint64, sorted int, limit uint64) {
	keys := b.prio[:0]
	if b.k == b.p {
		for j := 0; j < b.p; j++ {
			if konst[j>>6]&(1<<(j&63)) == 0 {
				keys = append(keys, uint64(j))
			}
		}
		return keys, len(keys), ^uint64(0)
	}
	cand := b.p
	for _, w := range konst {
		cand -= bits.OnesCount64(w)
	}
	limit = ^uint64(0)
	if want := 2*b.k + 4; want < cand {
		limit = ^uint64(0) / uint64(cand) * uint64(want)
	}
	keys = keys[:cand]
	lo, hi := 0, cand
	nk := core.NodeFeatureKey(b.seed, b.tree, key)
	if useAVX512 && cand > 0 {
		lo = featureKeys(&keys[0], &konst[0], b.p, nk, limit, cand)
		sortKeys(keys[:lo])
		return keys, lo, limit
	}
	for w, word := range konst {
		free := ^word
		if rest := b.p - w<<6; rest < 64 {
			free &= 1<<rest - 1
		}
		for free != 0 {
			j := w<<6 | bits.TrailingZeros64(free)
			free &= free - 1
			k := core.FeaturePriorityAt(nk, j)>>16<<16 | uint64(j)
			// Without a branch (whether a random key is below limit
			// is not predictable): k goes to both ends of the
			// unfilled range keys[lo:hi] (the same slot when one is
			// left) and the end it belongs to moves.
			keys[lo], keys[hi-1] = k, k
			below := 0
			if k < limit {
				below = 1
			}
			lo += below
			hi += below - 1
		}
	}
	sortKeys(keys[:lo])
	return keys, lo, limit
}

// rankSortMax is the most keys sortKeys ranks; it sorts longer runs with
// slices.Sort.
const rankSortMax = 48

// rankSortVec is the most keys sortKeys ranks with AVX-512: a node's first
// band holds about 2k+4 keys (60 for MNIST), past 64 in about a third of
// the nodes, and slices.Sort of 65-128 keys took 3 % of the MNIST fit.
const rankSortVec = 128

// sortKeys sorts distinct keys in increasing order. A node's band of about
// twenty candidate keys is random, so a comparison sort mispredicts a branch
// at about every other comparison (the sort was 10 % of a digits fit): up to
// rankSortMax keys each go straight to their rank, the number of smaller
// keys, counted without a branch (with AVX-512, up to rankSortVec keys,
// eight comparisons an instruction: rankSortKeys).
func sortKeys(keys []uint64) {
	n := len(keys)
	if useAVX512 && n > 0 && n <= rankSortVec {
		var tmp [rankSortVec]uint64
		copy(tmp[:], keys)
		for i := n; i < (n+7)&^7; i++ {
			tmp[i] = ^uint64(0)
		}
		rankSortKeys(&keys[0], &tmp[0], n)
		return
	}
	if n > rankSortMax {
		slices.Sort(keys)
		return
	}
	var tmp [rankSortMax]uint64
	src := tmp[:n]
	copy(src, keys)
	i := 0
	for ; i+4 <= n; i += 4 { // four keys a pass: one load for four comparisons
		k0, k1, k2, k3 := src[i], src[i+1], src[i+2], src[i+3]
		var r0, r1, r2, r3 int
		for _, o := range src {
			if o < k0 {
				r0++
			}
			if o < k1 {
				r1++
			}
			if o < k2 {
				r2++
			}
			if o < k3 {
				r3++
			}
		}
		keys[r0], keys[r1], keys[r2], keys[r3] = k0, k1, k2, k3
	}
	for ; i < n; i++ {
		k, r := src[i], 0
		for _, o := range src {
			if o < k {
				r++
			}
		}
		keys[r] = k
	}
}

// nextBand puts in order the keys of order[sorted:] below twice limit (all
// of them once limit saturates), moved to the front of that range, and
// returns the new sorted count and limit. The keys before sorted are all
// below limit, so order[:sorted] stays the start of the full order.
func nextBand(order []uint64, sorted int, limit uint64) (int, uint64) {
	for sorted < len(order) {
		if limit > ^uint64(0)/2 {
			limit = ^uint64(0)
		} else {
			limit *= 2
		}
		lo := sorted
		for i := sorted; i < len(order); i++ {
			if order[i] < limit || limit == ^uint64(0) {
				order[lo], order[i] = order[i], order[lo]
				lo++
			}
		}
		if lo > sorted {
			sortKeys(order[sorted:lo])
			return lo, limit
		}
	}
	return sorted, limit
}

// boundary evaluates the splits between code c (last code on the left, with
// left statistics left) and the next present code, with missing values on
// either side (m: missing statistics, tot: node totals).
func (b *builder) boundary(j, c int, left, m, tot []int64, best *split) {
	stride := b.stride
	minLeaf := int64(b.minLeaf)
	for pass := 0; pass < 2; pass++ {
		ml := pass == 1
		if ml && m[0] == 0 {
			return
		}
		var score float64
		if b.cls == nil {
			nl, wl, sl := left[0], left[1], left[2]
			if ml {
				nl, wl, sl = nl+m[0], wl+m[1], sl+m[2]
			}
			if nl < minLeaf || tot[0]-nl < minLeaf || wl < b.minW || tot[1]-wl < b.minW {
				continue
			}
			score = regressionScoreRec(sl, wl, tot[2], tot[1], b.rec)
		} else {
			cand := b.scr.cand
			copy(cand, left)
			if ml {
				for q := 0; q < stride; q++ {
					cand[q] += m[q]
				}
			}
			if cand[0] < minLeaf || tot[0]-cand[0] < minLeaf || cand[1] < b.minW || tot[1]-cand[1] < b.minW {
				continue
			}
			score = b.proxy(cand)
			for q := 0; q < stride; q++ {
				cand[q] = tot[q] - cand[q]
			}
			score += b.proxy(cand)
		}
		if better(best, score, j, c, ml) {
			best.ok, best.score, best.feature, best.bin, best.missingLeft = true, score, j, c, ml
			copy(best.left, left)
			if ml {
				for q := 0; q < stride; q++ {
					best.left[q] += m[q]
				}
			}
		}
	}
}

// scanDense evaluates feature j from the dense histogram h of the node.
// It returns false when the feature is constant in the node.
func (b *builder) scanDense(j int, hist, tot []int64, best *split) bool {
	return b.scanHist(j, hist[b.off[j]*b.stride:(b.off[j]+b.nb[j]+1)*b.stride], tot, best)
}

// scanRows evaluates feature j of the node's rows[lo:hi] through a histogram
// of that feature alone. It returns false when the feature is constant.
// A bitmap of the codes present lets the boundary scan visit them in order
// without looking at the absent ones; it is made after the counting loop
// (which carries no dependency through it): from the rows' codes when they
// are fewer than the codes, else from the histogram.
func (b *builder) scanRows(j, lo, hi int, tot []int64, best *split) bool {
	stride, nbj := b.stride, b.nb[j]
	h := b.fh[:(nbj+1)*stride] // all zero between calls
	var present [4]uint64
	if b.local && b.cstride > 0 {
		return b.scanLocalGini(j, lo, hi, best)
	}
	if b.local {
		return b.scanLocal(j, lo, hi, h, &present, tot, best)
	}
	xb, p := b.feature(j, hi-lo)
	counts := b.rw
	if b.cstride > 0 {
		return b.scanGlobalGini(j, lo, hi, xb, p, best)
	}
	if b.cls != nil {
		cls := b.cls
		for _, r := range b.rows[lo:hi] {
			c := int(xb[int(r)*p])
			e := c * stride
			h[e]++
			h[e+2+int(cls[r])] += counts[r] // the weight h[e+1]: fillWeights
		}
	} else {
		wy := b.wy
		for _, r := range b.rows[lo:hi] {
			c := int(xb[int(r)*p])
			e := c * 3
			hh := h[e : e+3 : e+3]
			hh[0]++
			hh[1] += counts[r]
			hh[2] += wy[r]
		}
	}
	if hi-lo < nbj { // few rows: mark the codes they hold
		for _, r := range b.rows[lo:hi] {
			c := xb[int(r)*p]
			present[c>>6] |= 1 << (c & 63)
		}
	} else {
		present = presentInHist(h, nbj, stride)
	}
	return b.scanPresentClear(j, h, &present, tot, best)
}

// presentInHist returns the bitmap of the codes 0..nbj with rows in the
// histogram h: a pass over the codes, cheaper than marking each row's
// code as it is counted once the node has more rows than codes.
func presentInHist(h []int64, nbj, stride int) (present [4]uint64) {
	for c := 0; c <= nbj; c++ {
		x := h[c*stride]                                  // a count, >= 0
		present[c>>6] |= uint64(x|-x) >> 63 << uint(c&63) // 1 when x > 0
	}
	return present
}

// feature returns where feature j of the rows of a node of m rows (not in
// a local block) is read: row r's code is at xb[r*p], in the column-major
// copy for large nodes (p = 1), else in the row-major codes. Without
// row-major codes (cols) it is the column read whole into colBuf, valid
// until the next call.
func (b *builder) feature(j, m int) (xb []uint8, p int) {
	if b.cols != nil {
		return b.cols.column(j, b.colBuf), 1
	}
	if b.xc != nil && (m > b.localAt || b.xb == nil) {
		return b.xc[j*b.n : (j+1)*b.n], 1
	}
	return b.xb[j:], b.p
}

// scanLocal is scanRows in the local block.
func (b *builder) scanLocal(j, lo, hi int, h []int64, present *[4]uint64, tot []int64, best *split) bool {
	stride := b.stride
	col := b.loc[j*b.lsize : (j+1)*b.lsize]
	lw, ly := b.locW, b.locY
	if b.cls != nil {
		for _, i := range b.lrows[lo-b.lbase : hi-b.lbase] {
			c := int(col[i])
			e := c * stride
			h[e]++
			h[e+2+int(ly[i])] += lw[i] // the weight h[e+1]: fillWeights
		}
	} else {
		for _, i := range b.lrows[lo-b.lbase : hi-b.lbase] {
			c := int(col[i])
			e := c * 3
			hh := h[e : e+3 : e+3]
			hh[0]++
			hh[1] += lw[i]
			hh[2] += ly[i]
		}
	}
	if nbj := b.nb[j]; hi-lo < nbj { // few rows: mark the codes they hold
		for _, i := range b.lrows[lo-b.lbase : hi-b.lbase] {
			c := col[i]
			present[c>>6] |= 1 << (c & 63)
		}
	} else {
		*present = presentInHist(h, nbj, stride)
	}
	return b.scanPresentClear(j, h, present, tot, best)
}

// maxPacked bounds the classes of packed scans (builder.packed).
const maxPacked = 128

// compactClasses sets up the node's class entries for scanLocalGini
// (builder.cstride) from its totals. Every row of a node has a positive
// weight (buildTree), so each row's class is among those with weight.
func (b *builder) compactClasses(tot []int64) {
	cs := 2
	for q, v := range tot[2:b.stride] {
		if v != 0 {
			b.cmap[q], b.cclass[cs-2], b.ctot[cs] = cs, q, v
			cs++
		}
	}
	b.ctot[0], b.ctot[1] = tot[0], tot[1]
	b.cstride = cs
}

// fillNodeW sets nodeW for the node of rows[lo:hi] (compactClasses set
// its classes' entries) when its scans will read it: in a local block, or
// from the column-major copy (builder.feature).
func (b *builder) fillNodeW(lo, hi int) {
	if b.nodeW == nil {
		return
	}
	nw, cm := b.nodeW[:hi-lo], &b.cmap
	switch {
	case b.local:
		lv := b.locW
		rows := b.lrows[lo-b.lbase : hi-b.lbase]
		for k, i := range rows {
			w := lv[i] // class<<56 | 1<<32 | weight
			nw[k] = w<<8 | int64(cm[w>>56&(maxPacked-1)])
		}
		if b.lnz && hi-lo >= sparseAt {
			nb, rw, pt := b.nodeBits[:b.lwords], b.rowW, b.ptot[:b.cstride]
			clear(nb)
			clear(pt)
			for k, i := range rows {
				v := nw[k]
				nb[i>>6] |= 1 << (i & 63)
				rw[i] = v
				pt[v&0xFF] += v >> 8
			}
			b.sparseOK = true
		}
	case b.cols != nil || b.xc != nil && (hi-lo > b.localAt || b.xb == nil):
		rw, cls := b.rw, b.cls
		for k, r := range b.rows[lo:hi] {
			nw[k] = (1<<32|rw[r])<<8 | int64(cm[cls[r]])
		}
		if b.gBits != nil {
			gb, grw, pt := b.gBits, b.gRowW, b.ptot[:b.cstride]
			clear(gb)
			clear(pt)
			for k, r := range b.rows[lo:hi] {
				v := nw[k]
				gb[r>>6] |= 1 << (r & 63)
				grw[r] = v
				pt[v&0xFF] += v >> 8
			}
			b.gsparseOK = true
		}
	default:
		return
	}
	b.nodeOK = true
}

// scanLocalGini is scanLocal for the Gini criterion, through a histogram of
// the node's classes only (compactClasses): a node deep in a tree holds a
// few of the classes, and the scan of the boundaries costs per code and
// class. Each row adds 1<<32 + its weight to its code and class, one update
// instead of two: after the loop an entry holds the rows in its high half
// and their weight in its low half (sums of weights are below 2^32:
// builder.packed), and a code's first word is 1 when a row holds it (a
// plain store, so that runs of one code do not wait on it). A feature whose
// rows hold one code is found constant by a comparison of codes, without a
// histogram. The scores and the split are scanPresentGini's: the classes
// left out have no weight in the node, so every integer sum is the same.
// With the AVX-512 byte kernels (nodeOK: builder.nodeW) a large node
// counts its nonzero codes only (scanSparseGini), a node of at most
// fewNode rows sorts its codes instead (scanFewGini), and the others'
// loop marks each code present in a byte (seen) instead of its first word.
func (b *builder) scanLocalGini(j, lo, hi int, best *split) bool {
	cs, nbj := b.cstride, b.nb[j]
	col := b.loc[j*b.lsize : (j+1)*b.lsize]
	rows := b.lrows[lo-b.lbase : hi-b.lbase]
	if b.sparseOK && nbj > 0 {
		return b.scanSparseGini(j, col, best)
	}
	if !b.nodeOK || b.locBits == nil || len(rows) <= fewNode {
		// (markBase left out of a larger node the features of their
		// base code in all its rows: the rare other constant is found
		// by the histogram's codes present.)
		c0, k := col[rows[0]], 1
		for k < len(rows) && col[rows[k]] == c0 {
			k++
		}
		if k == len(rows) {
			return false
		}
	}
	if len(rows) <= min(fewRows, fewNode) && b.nodeOK && b.minLeaf == 1 && b.minW == 0 {
		if ok, done := b.scanFewGini(j, col, rows, best); done {
			return ok
		}
	}
	h := b.fh[:(nbj+1)*cs] // all zero between calls
	var present [4]uint64
	switch {
	case b.nodeOK:
		// The loop reads each row's weight and class entry in order
		// (nodeW) and marks its code in a byte of its own (a plain
		// store), which presentSeen turns into the bitmap 64 codes at
		// a time.
		_ = h[nbj*cs+cs-1]
		histNodeAsm(&h[0], &col[0], &rows[0], len(rows), &b.nodeW[0], cs, &b.seen[0])
		presentSeen(&b.seen, &present)
		return b.scanSeenGini(j, h, &present, best)
	case hi-lo < nbj: // few rows: mark the codes they hold
		histPackedFast(h, col, rows, b.locW, &b.cmap, cs)
		for _, i := range rows {
			c := col[i]
			present[c>>6] |= 1 << (c & 63)
		}
	default:
		histPackedFast(h, col, rows, b.locW, &b.cmap, cs)
		present = presentInHist(h, nbj, cs)
	}
	ok := b.scanPackedGini(j, h, &present, best)
	b.clearPresent(h, &present, cs)
	return ok
}

// sparseAt is the fewest rows of a node in a local block that
// scanSparseGini searches (tests set it to compare with the histogram
// of every row).
var sparseAt = 512

// scanSparseGini is scanLocalGini for a large node of a local block
// (sparseOK): the histogram counts only the node's rows whose code is not
// 0, found by a word-by-word AND of the node's bitmap of rows and the
// feature's of nonzero codes (most of MNIST's pixels are 0 in most
// images), and code 0's entries are the node's sums (ptot) less the other
// codes'. The entries, the codes present and the search are then
// scanLocalGini's. A feature of one code in the node is found by the
// search (one code present), without a check of its own.
func (b *builder) scanSparseGini(j int, col []uint8, best *split) bool {
	cs, nbj, lw := b.cstride, b.nb[j], b.lwords
	h := b.fh[:(nbj+1)*cs] // all zero between calls
	_ = h[nbj*cs+cs-1]
	nz := b.locNZ[j*lw : (j+1)*lw]
	histSparseAsm(&h[0], &col[0], &b.nodeBits[0], &nz[0], lw, &b.rowW[0], cs, &b.seen[0], &b.list[0], &b.wlist[0])
	var present [4]uint64
	presentSeen(&b.seen, &present)
	b.baseEntries(h, &present, 0) // code 0 is never marked: no row of it is counted
	return b.scanSeenGini(j, h, &present, best)
}

// baseEntries sets the entries of code base in the packed histogram h of
// the node being searched, whose rows of the other codes were counted
// (present: those codes; base is never marked): what those codes leave of
// the node's sums (ptot), and marks base present when anything is left.
func (b *builder) baseEntries(h []int64, present *[4]uint64, base int) {
	cs := b.cstride
	z := h[base*cs : base*cs+cs : base*cs+cs]
	copy(z[2:], b.ptot[2:cs])
	if cs-2 <= 16 { // summed in vectors over the codes listed
		codes := b.codeBuf[:listCodes(present, &b.codeBuf[:cap(b.codeBuf)][0])]
		var sum [16]int64
		if len(codes) > 0 {
			sumEntries(&h[0], cs, &codes[0], len(codes), &sum)
		}
		for q, v := range sum[:cs-2] {
			z[2+q] -= v
		}
	} else {
		for k, word := range present {
			for word != 0 {
				c := k<<6 | bits.TrailingZeros64(word)
				word &= word - 1
				e := h[c*cs+2 : c*cs+cs : c*cs+cs]
				for q, v := range e {
					z[2+q] -= v
				}
			}
		}
	}
	for _, v := range z[2:] {
		if v != 0 {
			present[base>>6] |= 1 << (base & 63)
			break
		}
	}
}

// scanSeenGini ends the packed scans whose codes were marked in bytes
// (histNodeAsm, the sparse counts): those leave the codes' first words
// alone, and scanPackedGini reads the missing code's, so it is set when
// that code is present; then the search, and the clearing of h.
func (b *builder) scanSeenGini(j int, h []int64, present *[4]uint64, best *split) bool {
	cs, nbj := b.cstride, b.nb[j]
	if present[nbj>>6]&(1<<(nbj&63)) != 0 {
		h[nbj*cs] = 1
	}
	ok := b.scanPackedGini(j, h, present, best)
	b.clearPresent(h, present, cs)
	return ok
}

// fewNode is the most rows of a node that scanFewGini searches.
const fewNode = 12

// fewRows is the most rows scanLocalGini sends to scanFewGini (fewNode;
// tests set 0 to compare with the histogram).
var fewRows = fewNode

// scanFewGini is scanLocalGini's search of a node of at most fewNode
// rows (two thirds of the scans of fully grown trees on MNIST), without
// a histogram: its rows' codes (row k's packed weight and class entry in
// nodeW[k]) are sorted with their row, and the boundaries between codes
// scanned in increasing order with the left side's sums kept as the
// packed scans keep them, row by row: the same integers (Σ L² and Σ T·L
// are exact whatever the order their terms are added in), the same
// scores, the same rule. A node holding the feature's missing code is
// left to the histogram (done false); so are nodes whose boundaries are
// not all valid (the caller checks min_samples_leaf 1 and no least
// weight).
func (b *builder) scanFewGini(j int, col []uint8, rows []int32, best *split) (ok, done bool) {
	m, nbj, cs := len(rows), b.nb[j], b.cstride
	var keys [fewNode]uint32
	nw := b.nodeW[:m]
	for k, i := range rows {
		c := uint32(col[i])
		if int(c) == nbj {
			return false, false
		}
		// insertion into keys[:k], ordered by code
		key := c<<8 | uint32(k)
		p := k
		for p > 0 && keys[p-1] > key {
			keys[p] = keys[p-1]
			p--
		}
		keys[p] = key
	}
	tot := b.ctot[:cs:cs]
	var tc, lc [fewNode]int64 // the node's classes: at most one a row
	var tt int64
	for q, v := range tot[2:] {
		tc[q] = v
		tt += v * v
	}
	tw := tot[1]
	bestScore := best.floor()
	var nl, wl, s1, s2 int64
	last := keys[m-1] >> 8
	for k := 0; k < m; {
		c := keys[k] >> 8
		if c == last {
			break
		}
		for ; k < m && keys[k]>>8 == c; k++ {
			v := nw[keys[k]&0xFF]
			q := int(v&0xFF) - 2
			w := v >> 8 & (1<<32 - 1)
			s1 += w * (2*lc[q] + w)
			s2 += tc[q] * w
			lc[q] += w
			wl += w
			nl++
		}
		score := float64(s1)/float64(wl) + float64(tt-2*s2+s1)/float64(tw-wl)
		if score >= bestScore && better(best, score, j, int(c), false) {
			best.ok, best.score, best.feature, best.bin, best.missingLeft = true, score, j, int(c), false
			left := b.scr.left[:cs:cs]
			left[0], left[1] = nl, wl
			copy(left[2:], lc[:cs-2])
			b.expandLeft(best.left, left, nil)
			bestScore = score
		}
	}
	return true, true
}

// histPacked is scanLocalGini's loop over the node's rows: each row adds
// its packed weight (builder.locW) to the entry of its code and class, and
// marks its code's first word. A function of its own, so that its values
// stay in registers.
func histPacked(h []int64, col []uint8, rows []int32, lv []int64, cm *[maxPacked]int, cs int) {
	for _, i := range rows {
		v := lv[i]
		e := int(col[i]) * cs
		h[e] = 1
		h[e+cm[v>>56&(maxPacked-1)]] += v << 8 >> 8 // the weight and row count: the class's byte cleared (bit 55 is 0)
	}
}

// scanGlobalGini is scanLocalGini for a node outside a local block, whose
// rows' codes of feature j are at xb[r*p] (builder.feature).
func (b *builder) scanGlobalGini(j, lo, hi int, xb []uint8, p int, best *split) bool {
	cs, nbj := b.cstride, b.nb[j]
	rows := b.rows[lo:hi]
	if s := b.cols.sparseIndex(j); b.gsparseOK && s >= 0 && cs-2 <= 16 && nbj > 0 {
		// A sparse column (xb the column read whole): the node's rows off
		// the column's base only, as scanSparseGini counts a local
		// block's nonzero codes.
		c := b.cols
		h := b.fh[:(nbj+1)*cs] // all zero between calls
		_ = h[nbj*cs+cs-1]
		histSparseAsm(&h[0], &xb[0], &b.gBits[0], &c.bits[s*c.words], c.words, &b.gRowW[0], cs, &b.seen[0], &b.gList[0], &b.gWlist[0])
		var present [4]uint64
		presentSeen(&b.seen, &present)
		b.baseEntries(h, &present, int(c.base[j]))
		return b.scanSeenGini(j, h, &present, best)
	}
	c0, k := xb[int(rows[0])*p], 1
	for k < len(rows) && xb[int(rows[k])*p] == c0 {
		k++
	}
	if k == len(rows) {
		return false
	}
	h := b.fh[:(nbj+1)*cs] // all zero between calls
	var present [4]uint64
	if p == 1 && b.nodeOK { // the column-major copy: scanLocalGini's kernel
		_ = h[nbj*cs+cs-1]
		histNodeAsm(&h[0], &xb[0], &rows[0], len(rows), &b.nodeW[0], cs, &b.seen[0])
		presentSeen(&b.seen, &present)
		return b.scanSeenGini(j, h, &present, best)
	}
	counts, cls, cm := b.rw, b.cls, &b.cmap
	for _, r := range rows {
		e := int(xb[int(r)*p]) * cs
		h[e] = 1
		h[e+cm[cls[r]]] += 1<<32 + counts[r]
	}
	if hi-lo < nbj { // few rows: mark the codes they hold
		for _, r := range rows {
			c := xb[int(r)*p]
			present[c>>6] |= 1 << (c & 63)
		}
	} else {
		present = presentInHist(h, nbj, cs)
	}
	ok := b.scanPackedGini(j, h, &present, best)
	b.clearPresent(h, &present, cs)
	return ok
}

// clearPresent clears the entries of the present codes of h.
func (b *builder) clearPresent(h []int64, present *[4]uint64, stride int) {
	for k, word := range present {
		for word != 0 {
			c := k<<6 | bits.TrailingZeros64(word)
			word &= word - 1
			clear(h[c*stride : (c+1)*stride])
		}
	}
}

// unpackEntry turns the packed entry st of one code (scanLocalGini) into
// rows, weight and class weights.
func unpackEntry(st []int64) {
	var n, w int64
	for q := 2; q < len(st); q++ {
		v := st[q]
		n += v >> 32
		v &= 1<<32 - 1
		w += v
		st[q] = v
	}
	st[0], st[1] = n, w
}

// scanPackedGini is scanPresentGini on the packed histogram of
// scanLocalGini, unpacking each code as it goes. It may clear entries of
// h as it reads them; present is left holding the codes whose entries the
// caller must still clear.
func (b *builder) scanPackedGini(j int, h []int64, present *[4]uint64, best *split) bool {
	cs, nbj := b.cstride, b.nb[j]
	real, last, count := lastPresent(present, nbj)
	if count <= 1 {
		return false
	}
	tot := b.ctot[:cs:cs]
	m := h[nbj*cs : (nbj+1)*cs : (nbj+1)*cs]
	if m[0] > 0 {
		unpackEntry(m)
	}
	if m[0] == 0 && b.minLeaf == 1 && b.minW == 0 {
		switch cs {
		case 4:
			b.scanPacked2(j, h, &real, last, best)
		case 5:
			b.scanPacked3(j, h, &real, last, best)
		default:
			b.scanPackedN(j, h, &real, last, best)
		}
		// They cleared the entries of every code they read, all but the
		// highest real one and the missing one.
		missing := present[nbj>>6] & (1 << (nbj & 63))
		*present = [4]uint64{}
		present[last>>6] |= 1 << (last & 63)
		present[nbj>>6] |= missing
		return true
	}
	tc, tt, left, lc := b.giniStart(tot, cs)
	var s1, s2 int64 // Σ L², Σ T·L
	minLeaf, tn, tw := int64(b.minLeaf), tot[0], tot[1]
	for k, word := range real {
		for word != 0 {
			c := k<<6 | bits.TrailingZeros64(word)
			word &= word - 1
			if c == last {
				return true
			}
			st := h[c*cs : (c+1)*cs : (c+1)*cs]
			var n, w int64
			for q, v := range st[2:cs] {
				n += v >> 32
				v &= 1<<32 - 1
				s1 += v * (2*lc[q] + v)
				s2 += tc[q] * v
				lc[q] += v
				w += v
			}
			left[0] += n
			left[1] += w
			if nl, wl := left[0], left[1]; nl >= minLeaf && tn-nl >= minLeaf && wl >= b.minW && tw-wl >= b.minW {
				score := float64(s1)/float64(wl) + float64(tt-2*s2+s1)/float64(tw-wl)
				if (!best.ok || score >= best.score) && better(best, score, j, c, false) {
					best.ok, best.score, best.feature, best.bin, best.missingLeft = true, score, j, c, false
					b.expandLeft(best.left, left, nil)
				}
			}
			if m[0] > 0 {
				b.missingLeftPacked(j, c, left, m, best)
			}
		}
	}
	return true
}

// scanPacked2 is scanPackedGini's loop for a node of two classes (cstride
// 4) without missing values, every boundary valid: the left side's class
// weights and sums in registers instead of slices. The integer sums are
// the same (exact), and so are the scores. It clears the entries of each
// code it reads (the caller clears the rest: scanPackedGini).
func (b *builder) scanPacked2(j int, h []int64, real *[4]uint64, last int, best *split) {
	tot := b.ctot[:4:4]
	t0, t1, tw := tot[2], tot[3], tot[1]
	tt := t0*t0 + t1*t1
	bestScore := best.floor()
	var nl, l0, l1, s1, s2 int64
	for k, word := range real {
		for word != 0 {
			c := k<<6 | bits.TrailingZeros64(word)
			word &= word - 1
			if c == last {
				return
			}
			st := h[c*4 : c*4+4 : c*4+4]
			v0, v1 := st[2], st[3]
			st[0], st[2], st[3] = 0, 0, 0 // the histogram is zero between scans
			nl += v0>>32 + v1>>32
			v0 &= 1<<32 - 1
			v1 &= 1<<32 - 1
			s1 += v0*(2*l0+v0) + v1*(2*l1+v1)
			s2 += t0*v0 + t1*v1
			l0 += v0
			l1 += v1
			wl := l0 + l1
			score := float64(s1)/float64(wl) + float64(tt-2*s2+s1)/float64(tw-wl)
			if score >= bestScore && better(best, score, j, c, false) {
				best.ok, best.score, best.feature, best.bin, best.missingLeft = true, score, j, c, false
				left := b.scr.left[:4:4]
				left[0], left[1], left[2], left[3] = nl, wl, l0, l1
				b.expandLeft(best.left, left, nil)
				bestScore = score
			}
		}
	}
}

// scanPackedN is scanPacked2 for a node of any number of classes: the
// left side's class weights in a slice, its rows, weight and sums in
// registers.
func (b *builder) scanPackedN(j int, h []int64, real *[4]uint64, last int, best *split) {
	cs := b.cstride
	if useAVX512 && cs-2 <= 16 {
		b.scanPackedVector(j, h, real, last, best)
		return
	}
	tot := b.ctot[:cs:cs]
	tc, tt, left, lc := b.giniStart(tot, cs)
	tw := tot[1]
	bestScore := best.floor()
	var nl, wl, s1, s2 int64
	for k, word := range real {
		for word != 0 {
			c := k<<6 | bits.TrailingZeros64(word)
			word &= word - 1
			if c == last {
				return
			}
			h[c*cs] = 0 // the histogram is zero between scans
			st := h[c*cs+2 : (c+1)*cs : (c+1)*cs]
			st = st[:len(lc)]
			for q, v := range st {
				st[q] = 0
				nl += v >> 32
				v &= 1<<32 - 1
				l := lc[q]
				s1 += v * (2*l + v)
				s2 += tc[q] * v
				lc[q] = l + v
				wl += v
			}
			score := float64(s1)/float64(wl) + float64(tt-2*s2+s1)/float64(tw-wl)
			if score >= bestScore && better(best, score, j, c, false) {
				best.ok, best.score, best.feature, best.bin, best.missingLeft = true, score, j, c, false
				left[0], left[1] = nl, wl
				b.expandLeft(best.left, left, nil)
				bestScore = score
			}
		}
	}
}

// packedScan is scanPackedAsm's state (its offsets are the assembly's):
// the left side's class weights, the node's, the left side's rows, weight,
// Σ L² and Σ T·L, the node's Σ T² and weight, the best score so far, the
// score of the code it stopped at, and an entry of zeros (what the
// batched kernels read for lanes past their codes).
type packedScan struct {
	lc, tc                 [16]int64
	nl, wl, s1, s2, tt, tw int64
	best, score            float64
	zero                   [18]int64
}

// scanPackedVector is scanPackedN for nodes of at most 16 classes with
// AVX-512: the codes present below last are listed, and the assembly runs
// over them. Nodes of weight below 2^31 are scanned eight codes at a time
// (scanBatch8Asm, scanBatch16Asm) up to a batch holding a score that
// reaches the best; that batch, and every code of heavier nodes, is
// scanned code by code (scanPacked8Asm, scanPackedAsm), which stops at
// each score reaching the best, settled here as scanPackedN settles it.
func (b *builder) scanPackedVector(j int, h []int64, real *[4]uint64, last int, best *split) {
	cs := b.cstride
	codes := b.codeBuf[:0]
	if useVBMI2 {
		below := *real // the codes below last
		below[last>>6] &= 1<<(last&63) - 1
		for k := last>>6 + 1; k < 4; k++ {
			below[k] = 0
		}
		codes = b.codeBuf[:listCodes(&below, &b.codeBuf[:cap(b.codeBuf)][0])]
	} else {
		for k, word := range real {
			for word != 0 {
				c := k<<6 | bits.TrailingZeros64(word)
				word &= word - 1
				if c == last {
					break
				}
				codes = append(codes, uint8(c))
			}
		}
	}
	if len(codes) == 0 {
		return
	}
	_ = h[(int(codes[len(codes)-1])+1)*cs-1] // every code's entries are within h
	_ = b.codeBuf[:len(codes)+7]             // the batches read up to 7 codes past the last
	s := &b.pscan
	tot := b.ctot[:cs:cs]
	*s = packedScan{tw: tot[1]}
	for q, v := range tot[2:] {
		s.tc[q] = v
		s.tt += v * v
	}
	bestScore := best.floor()
	scan, batch := scanPackedAsm, scanBatch16Asm
	if cs-2 <= 8 {
		scan, batch = scanPacked8Asm, scanBatch8Asm
	}
	if tot[1] >= 1<<31 {
		scan, batch = scanPackedAsm, nil
	}
	for i := 0; i < len(codes); {
		end := len(codes)
		if batch != nil {
			s.best = bestScore
			if i += batch(&h[0], cs, &codes[i], len(codes)-i, s); i == len(codes) {
				return
			}
			end = min(i+8, len(codes)) // a score reaches the best in codes[i:end]
		}
		for i < end {
			s.best = bestScore
			k := scan(&h[0], cs, &codes[i], end-i, s)
			if i += k; i == end {
				break
			}
			if c, score := int(codes[i]), s.score; better(best, score, j, c, false) {
				best.ok, best.score, best.feature, best.bin, best.missingLeft = true, score, j, c, false
				left := b.scr.left[:cs:cs]
				left[0], left[1] = s.nl, s.wl
				copy(left[2:], s.lc[:cs-2])
				b.expandLeft(best.left, left, nil)
				bestScore = score
			}
			i++
		}
	}
}

// scanPacked3 is scanPacked2 for a node of three classes (cstride 5).
func (b *builder) scanPacked3(j int, h []int64, real *[4]uint64, last int, best *split) {
	tot := b.ctot[:5:5]
	t0, t1, t2, tw := tot[2], tot[3], tot[4], tot[1]
	tt := t0*t0 + t1*t1 + t2*t2
	bestScore := best.floor()
	var nl, l0, l1, l2, s1, s2 int64
	for k, word := range real {
		for word != 0 {
			c := k<<6 | bits.TrailingZeros64(word)
			word &= word - 1
			if c == last {
				return
			}
			st := h[c*5 : c*5+5 : c*5+5]
			v0, v1, v2 := st[2], st[3], st[4]
			st[0], st[2], st[3], st[4] = 0, 0, 0, 0 // the histogram is zero between scans
			nl += v0>>32 + v1>>32 + v2>>32
			v0 &= 1<<32 - 1
			v1 &= 1<<32 - 1
			v2 &= 1<<32 - 1
			s1 += v0*(2*l0+v0) + v1*(2*l1+v1) + v2*(2*l2+v2)
			s2 += t0*v0 + t1*v1 + t2*v2
			l0 += v0
			l1 += v1
			l2 += v2
			wl := l0 + l1 + l2
			score := float64(s1)/float64(wl) + float64(tt-2*s2+s1)/float64(tw-wl)
			if score >= bestScore && better(best, score, j, c, false) {
				best.ok, best.score, best.feature, best.bin, best.missingLeft = true, score, j, c, false
				left := b.scr.left[:5:5]
				left[0], left[1], left[2], left[3], left[4] = nl, wl, l0, l1, l2
				b.expandLeft(best.left, left, nil)
				bestScore = score
			}
		}
	}
}

// giniProxy is proxy for Gini on statistics st of any number of classes.
func giniProxy(st []int64) float64 {
	w := float64(st[1])
	if w <= 0 {
		return 0
	}
	var sq int64
	for _, v := range st[2:] {
		sq += v * v
	}
	return float64(sq) / w
}

// missingLeftPacked is missingLeft on the node's classes (scanPackedGini).
func (b *builder) missingLeftPacked(j, c int, left, m []int64, best *split) {
	cs, minLeaf, tot := b.cstride, int64(b.minLeaf), b.ctot
	cand := b.scr.cand[:cs:cs]
	for q := range cand {
		cand[q] = left[q] + m[q]
	}
	if cand[0] < minLeaf || tot[0]-cand[0] < minLeaf || cand[1] < b.minW || tot[1]-cand[1] < b.minW {
		return
	}
	score := giniProxy(cand)
	for q := range cand {
		cand[q] = tot[q] - cand[q]
	}
	score += giniProxy(cand)
	if better(best, score, j, c, true) {
		best.ok, best.score, best.feature, best.bin, best.missingLeft = true, score, j, c, true
		b.expandLeft(best.left, left, m)
	}
}

// expandLeft sets dst (all classes) to left plus m (when not nil), given
// on the node's classes.
func (b *builder) expandLeft(dst, left, m []int64) {
	clear(dst)
	for q := range left {
		v := left[q]
		if m != nil {
			v += m[q]
		}
		if q < 2 {
			dst[q] = v
		} else {
			dst[2+b.cclass[q-2]] = v
		}
	}
}

// lastPresent returns the highest of the real codes present (the missing
// code nbj left out) and how many there are.
func lastPresent(present *[4]uint64, nbj int) (real [4]uint64, last, count int) {
	real = *present
	real[nbj>>6] &^= 1 << (nbj & 63)
	last = -1
	for k := 3; k >= 0; k-- {
		if real[k] != 0 {
			if last < 0 {
				last = k<<6 | (63 - bits.LeadingZeros64(real[k]))
			}
			count += bits.OnesCount64(real[k])
		}
	}
	return real, last, count
}

// giniStart returns what the Gini boundary scans start from, for node
// totals tot of stride entries: the class totals T, Σ T², and the left
// side's statistics (cleared) with their class part.
func (b *builder) giniStart(tot []int64, stride int) (tc []int64, tt int64, left, lc []int64) {
	tc = tot[2:stride]
	for _, v := range tc {
		tt += v * v
	}
	left = b.scr.left[:stride:stride]
	clear(left)
	return tc, tt, left, left[2:stride:stride]
}

// scanPresentGini is scanPresent for the Gini criterion, on a histogram
// whose weights are not filled in (see fillWeights). It keeps the sums of
// squares of both sides up to date as codes move left instead of
// recomputing them at each boundary: with L the left class weights and T
// the node's, Σ L² grows by v·(2L+v) when v joins L, and
// Σ (T−L)² = Σ T² − 2·Σ T·L + Σ L², all exact in int64, so every score
// is boundary's, bit for bit.
func (b *builder) scanPresentGini(j int, h []int64, present *[4]uint64, tot []int64, best *split) bool {
	stride, nbj := b.stride, b.nb[j]
	real, last, count := lastPresent(present, nbj)
	if count <= 1 {
		return false
	}
	m := h[nbj*stride : (nbj+1)*stride]
	if m[0] > 0 {
		var w int64
		for _, v := range m[2:] {
			w += v
		}
		m[1] = w
	}
	tc, tt, left, lc := b.giniStart(tot, stride)
	var s1, s2 int64 // Σ L², Σ T·L
	minLeaf, tn, tw := int64(b.minLeaf), tot[0], tot[1]
	for k, word := range real {
		for word != 0 {
			c := k<<6 | bits.TrailingZeros64(word)
			word &= word - 1
			if c == last {
				return true
			}
			st := h[c*stride : (c+1)*stride]
			var w int64
			for q, v := range st[2:stride] {
				if v != 0 {
					s1 += v * (2*lc[q] + v)
					s2 += tc[q] * v
					lc[q] += v
					w += v
				}
			}
			left[0] += st[0]
			left[1] += w
			if nl, wl := left[0], left[1]; nl >= minLeaf && tn-nl >= minLeaf && wl >= b.minW && tw-wl >= b.minW {
				score := float64(s1)/float64(wl) + float64(tt-2*s2+s1)/float64(tw-wl)
				if (!best.ok || score >= best.score) && better(best, score, j, c, false) {
					best.ok, best.score, best.feature, best.bin, best.missingLeft = true, score, j, c, false
					copy(best.left, left)
				}
			}
			if m[0] > 0 {
				b.missingLeft(j, c, left, m, tot, best)
			}
		}
	}
	return true
}

// missingLeft is boundary's candidate at code c with the missing values
// sent left.
func (b *builder) missingLeft(j, c int, left, m, tot []int64, best *split) {
	stride, minLeaf := b.stride, int64(b.minLeaf)
	cand := b.scr.cand
	for q := 0; q < stride; q++ {
		cand[q] = left[q] + m[q]
	}
	if cand[0] < minLeaf || tot[0]-cand[0] < minLeaf || cand[1] < b.minW || tot[1]-cand[1] < b.minW {
		return
	}
	score := b.proxy(cand)
	for q := 0; q < stride; q++ {
		cand[q] = tot[q] - cand[q]
	}
	score += b.proxy(cand)
	if better(best, score, j, c, true) {
		best.ok, best.score, best.feature, best.bin, best.missingLeft = true, score, j, c, true
		for q := 0; q < stride; q++ {
			best.left[q] = left[q] + m[q]
		}
	}
}

// fillWeights sets the weight of each present code of a classification
// histogram, the sum of its class weights, which the scans leave out of
// their loop over rows.
func fillWeights(h []int64, present *[4]uint64, stride int) {
	for k, word := range present {
		for word != 0 {
			c := k<<6 | bits.TrailingZeros64(word)
			word &= word - 1
			st := h[c*stride : (c+1)*stride]
			var w int64
			for _, v := range st[2:] {
				w += v
			}
			st[1] = w
		}
	}
}

// scanPresentClear is scanPresent, then clears the histogram's present
// codes.
func (b *builder) scanPresentClear(j int, h []int64, present *[4]uint64, tot []int64, best *split) bool {
	stride := b.stride
	var ok bool
	switch {
	case b.cls != nil && !b.entropy:
		ok = b.scanPresentGini(j, h, present, tot, best)
	case b.cls != nil:
		fillWeights(h, present, stride)
		ok = b.scanPresent(j, h, present, tot, best)
	default:
		ok = b.scanPresent(j, h, present, tot, best)
	}
	for k, word := range present {
		for word != 0 {
			c := k<<6 | bits.TrailingZeros64(word)
			word &= word - 1
			clear(h[c*stride : (c+1)*stride])
		}
	}
	return ok
}

// scanPresent is scanHist for a histogram whose nonzero codes are the set
// bits of present: it evaluates the same boundaries in the same order.
func (b *builder) scanPresent(j int, h []int64, present *[4]uint64, tot []int64, best *split) bool {
	stride, nbj := b.stride, b.nb[j]
	m := h[nbj*stride : (nbj+1)*stride]
	real, last, count := lastPresent(present, nbj)
	if count <= 1 {
		return false
	}
	left := b.scr.left
	clear(left)
	for k, word := range real {
		for word != 0 {
			c := k<<6 | bits.TrailingZeros64(word)
			word &= word - 1
			if c == last {
				return true
			}
			st := h[c*stride : (c+1)*stride]
			for q := range left {
				left[q] += st[q]
			}
			b.boundary(j, c, left, m, tot, best)
		}
	}
	return true
}

// scanHist evaluates feature j from its histogram h (codes 0..nb[j], the
// last one the missing code).
func (b *builder) scanHist(j int, h, tot []int64, best *split) bool {
	stride, nbj := b.stride, b.nb[j]
	m := h[nbj*stride : (nbj+1)*stride]
	first, last := -1, -1
	for c := 0; c < nbj; c++ {
		if h[c*stride] > 0 {
			if first < 0 {
				first = c
			}
			last = c
		}
	}
	if first == last {
		return false
	}
	if b.cls == nil && m[0] == 0 && b.minLeaf == 1 && b.minW == 0 && uint64(tot[1]) < uint64(len(b.rec)) {
		b.scanHistRegression(j, h, first, last, tot, best)
		return true
	}
	left := b.scr.left
	clear(left)
	for c := first; c < last; c++ {
		st := h[c*stride : (c+1)*stride]
		if st[0] == 0 {
			continue
		}
		for q := range left {
			left[q] += st[q]
		}
		b.boundary(j, c, left, m, tot, best)
	}
	return true
}

// scanHistRegression is scanHist's loop for squared error in the common
// case (no missing value in the node, every boundary valid, every weight's
// reciprocal in the table), with boundary's scores inlined: codes without
// rows add nothing and are skipped by the test after the score's, which
// rarely passes.
func (b *builder) scanHistRegression(j int, h []int64, first, last int, tot []int64, best *split) {
	tw, ts := tot[1], tot[2]
	rec := b.rec[:tw+1]
	bestScore := best.floor()
	h = h[:last*3]
	var nl, wl, sl int64
	for c := first; c < last; c++ {
		st := h[c*3 : c*3+3 : c*3+3]
		nl += st[0]
		wl += st[1]
		sl += st[2]
		fl, fr := float64(sl), float64(ts-sl)
		score := float64(float64(fl*fl)*rec[wl]) + float64(float64(fr*fr)*rec[tw-wl])
		if score >= bestScore && st[0] != 0 && better(best, score, j, c, false) {
			best.ok, best.score, best.feature, best.bin, best.missingLeft = true, score, j, c, false
			best.left[0], best.left[1], best.left[2] = nl, wl, sl
			bestScore = score
		}
	}
}

// A sorted list's entry (builder.sent) holds a local row in its low
// entRowBits bits and the row's code above them, so that a partition moves
// one word an entry and a scan reads one. Sorted subtrees have at most
// 1<<entRowBits rows (newBuilder caps sortAt).
const (
	entRowBits = 24
	entRowMask = 1<<entRowBits - 1
)

// entRow is the local row of a sorted list's entry.
func entRow(v uint32) int32 { return int32(v & entRowMask) }

// entCode is the code of a sorted list's entry.
func entCode(v uint32) uint8 { return uint8(v >> entRowBits) }

// scanSorted evaluates feature j from the node's rows sorted by code.
// It returns false when the feature is constant in the node.
func (b *builder) scanSorted(j, lo, hi, buf int, tot []int64, best *split) bool {
	off := j*b.scap + lo - b.sbase
	ents := b.sent[buf][off : off+hi-lo]
	mc := b.miss[j]
	// Missing rows sort last.
	end := len(ents)
	for end > 0 && entCode(ents[end-1]) == mc {
		end--
	}
	if end == 0 || entCode(ents[0]) == entCode(ents[end-1]) {
		return false
	}
	m := b.scr.miss
	clear(m)
	lw, lwy := b.lw, b.lwy
	for _, v := range ents[end:] {
		e := entRow(v)
		m[0]++
		m[1] += lw[e]
		if b.cls != nil {
			m[2+lwy[e]] += lw[e]
		} else {
			m[2] += lwy[e]
		}
	}
	if b.cls == nil {
		b.scanSortedRegression(j, ents[:end], m, tot, best)
		return true
	}
	left := b.scr.left
	clear(left)
	prev := entCode(ents[0])
	for _, v := range ents[:end] {
		if c := entCode(v); c != prev {
			b.boundary(j, int(prev), left, m, tot, best)
			prev = c
		}
		e := entRow(v)
		left[0]++
		left[1] += lw[e]
		left[2+lwy[e]] += lw[e]
	}
	return true
}

// regressionScoreRec is the squared-error score of a split whose left side
// has weighted target sum s and weight w, in a node with totals ts and tw:
// s²·(1/w) + (ts−s)²·(1/(tw−w)), where rec[w] = 1/w and every product is
// rounded to float64. Every learner must use exactly this expression.
// recip returns 1/w: rec[w] when the table holds it, else the same
// division (weighted fits have weights beyond any table).
func recip(rec []float64, w int64) float64 {
	if uint64(w) < uint64(len(rec)) {
		return rec[w]
	}
	return 1 / float64(w)
}

func regressionScoreRec(s, w, ts, tw int64, rec []float64) float64 {
	fl, fr := float64(s), float64(ts-s)
	return float64(float64(fl*fl)*recip(rec, w)) + float64(float64(fr*fr)*recip(rec, tw-w))
}

// scanSortedRegression is scanSorted's loop for squared error, with the
// candidate scores of boundary inlined.
func (b *builder) scanSortedRegression(j int, ents []uint32, m, tot []int64, best *split) {
	tw, ts := tot[1], tot[2]
	lw, lwy, rec := b.lw, b.lwy, b.rec
	if m[0] == 0 && b.minLeaf == 1 && b.minW == 0 {
		// The common case: no missing value and every boundary valid. The
		// best score stays in a register; better() settles ties.
		bestScore := best.floor()
		// Each row's score is computed, boundary or not, and the rare
		// score that reaches the best so far checks whether the next
		// row's code differs: no branch on the codes themselves, which
		// changes about every other row in small nodes.
		var wl, sl int64
		last := len(ents) - 1
		if uint64(tw) < uint64(len(rec)) {
			// Every weight of the node has its reciprocal in the table
			// (recip without its fallback): fewer live values in the loop.
			rec := rec[:tw+1]
			for i := 0; i < last; i++ {
				var score float64
				i, wl, sl, score = scanRegFast(ents, i, last, lw, lwy, rec, ts, tw, wl, sl, bestScore)
				if i == last {
					return
				}
				if v := ents[i]; better(best, score, j, int(entCode(v)), false) {
					best.ok, best.score, best.feature, best.bin, best.missingLeft = true, score, j, int(entCode(v)), false
					best.left[0], best.left[1], best.left[2] = int64(i+1), wl, sl
					bestScore = score
				}
			}
			return
		}
		for i, v := range ents[:last] {
			e := v & entRowMask
			wl += lw[e]
			sl += lwy[e]
			fl, fr := float64(sl), float64(ts-sl)
			score := float64(float64(fl*fl)*recip(rec, wl)) + float64(float64(fr*fr)*recip(rec, tw-wl))
			if score >= bestScore && (ents[i+1]^v)>>entRowBits != 0 && better(best, score, j, int(entCode(v)), false) {
				best.ok, best.score, best.feature, best.bin, best.missingLeft = true, score, j, int(entCode(v)), false
				best.left[0], best.left[1], best.left[2] = int64(i+1), wl, sl
				bestScore = score
			}
		}
		return
	}
	minLeaf := int64(b.minLeaf)
	tn := tot[0]
	mn, mw, ms := m[0], m[1], m[2]
	var nl, wl, sl int64
	prev := entCode(ents[0])
	consider := func(n, w, s int64, ml bool) {
		if n < minLeaf || tn-n < minLeaf || w < b.minW || tw-w < b.minW {
			return
		}
		score := regressionScoreRec(s, w, ts, tw, rec)
		if best.ok && score < best.score {
			return
		}
		if better(best, score, j, int(prev), ml) {
			best.ok, best.score, best.feature, best.bin, best.missingLeft = true, score, j, int(prev), ml
			best.left[0], best.left[1], best.left[2] = n, w, s
		}
	}
	for _, v := range ents {
		if c := entCode(v); c != prev {
			consider(nl, wl, sl, false)
			if mn > 0 {
				consider(nl+mn, wl+mw, sl+ms, true)
			}
			prev = c
		}
		e := entRow(v)
		nl++
		wl += lw[e]
		sl += lwy[e]
	}
}

// scanRegRun is scanSortedRegression's loop over ents[i:last] until an
// entry's score reaches bestScore at a boundary (the next entry's code
// differs): it returns that entry's index, the sums
// through it and its score, or last when none does. It calls nothing, so
// that its values stay in registers. Every weight of the node has its
// reciprocal in rec.
func scanRegRun(ents []uint32, i, last int, lw, lwy []int64, rec []float64, ts, tw, wl, sl int64, bestScore float64) (int, int64, int64, float64) {
	for ; i < last; i++ {
		e := ents[i] & entRowMask
		wl += lw[e]
		sl += lwy[e]
		fl, fr := float64(sl), float64(ts-sl)
		score := float64(float64(fl*fl)*rec[wl]) + float64(float64(fr*fr)*rec[tw-wl])
		if score >= bestScore && (ents[i+1]^ents[i])>>entRowBits != 0 {
			return i, wl, sl, score
		}
	}
	return last, wl, sl, 0
}

// scanRandom is the random splitter's search of feature j at the node
// with the given key over rows[lo:hi] (read as scanRows reads them): it
// finds the lowest and highest codes of the node's rows that are not
// missing, draws a code t uniformly from [lowest, highest) with
// core.ThresholdDraw, and evaluates the boundary after t (codes <= t
// left) with the missing values on either side, as boundary does. It
// returns false when the feature is constant in the node (at most one
// code besides missing). The missing code is above every real code.
func (b *builder) scanRandom(j, lo, hi int, key uint64, tot []int64, best *split) bool {
	mc := b.miss[j]
	var col []uint8
	var rows []int32
	p := 1
	if b.local {
		col, rows = b.loc[j*b.lsize:(j+1)*b.lsize], b.lrows[lo-b.lbase:hi-b.lbase]
	} else {
		col, p = b.feature(j, hi-lo)
		rows = b.rows[lo:hi]
	}
	low, high := mc, uint8(0)
	for _, r := range rows {
		c := col[int(r)*p]
		low = min(low, c)
		if c == mc {
			c = 0
		}
		high = max(high, c)
	}
	if low >= high {
		return false
	}
	t := low + uint8(rng.Below(core.ThresholdDraw(b.seed, b.tree, key, j), int(high-low)))
	// Each row adds to the left side (codes <= t), the missing side or
	// neither, without a branch: counts, weights and weighted targets in
	// registers (an update through memory would wait on the previous
	// row's), class weights in a table of three sides (left, right: not
	// kept, missing).
	stride := b.stride
	sides := b.scr.sides
	clear(sides)
	var nl, nm, wl, wm, sl, sm int64
	switch {
	case b.local && b.cls != nil:
		w, y := b.locW, b.locY
		for _, r := range rows {
			c := col[int(r)*p]
			isL, isM := b2i(c <= t), b2i(c == mc)
			wr := w[r]
			nl, nm, wl, wm = nl+isL, nm+isM, wl+wr&-isL, wm+wr&-isM
			sides[int(b2i(c > t)+isM)*stride+2+int(y[r])] += wr
		}
	case b.local:
		w, y := b.locW, b.locY
		for _, r := range rows {
			c := col[int(r)*p]
			isL, isM := b2i(c <= t), b2i(c == mc)
			wr, yr := w[r], y[r]
			nl, nm, wl, wm = nl+isL, nm+isM, wl+wr&-isL, wm+wr&-isM
			sl, sm = sl+yr&-isL, sm+yr&-isM
		}
	case b.cls != nil:
		for _, r := range rows {
			c := col[int(r)*p]
			isL, isM := b2i(c <= t), b2i(c == mc)
			wr := b.rw[r]
			nl, nm, wl, wm = nl+isL, nm+isM, wl+wr&-isL, wm+wr&-isM
			sides[int(b2i(c > t)+isM)*stride+2+int(b.cls[r])] += wr
		}
	default:
		for _, r := range rows {
			c := col[int(r)*p]
			isL, isM := b2i(c <= t), b2i(c == mc)
			wr, yr := b.rw[r], b.wy[r]
			nl, nm, wl, wm = nl+isL, nm+isM, wl+wr&-isL, wm+wr&-isM
			sl, sm = sl+yr&-isL, sm+yr&-isM
		}
	}
	left, m := sides[:stride], sides[2*stride:]
	left[0], left[1], m[0], m[1] = nl, wl, nm, wm
	if b.cls == nil {
		left[2], m[2] = sl, sm
	}
	b.boundary(j, int(t), left, m, tot, best)
	return true
}

// b2i is 1 for true, 0 for false.
func b2i(v bool) int64 {
	var i int64
	if v {
		i = 1
	}
	return i
}

// findSplit searches the node's best split.
// konstant is the node's known-constant bitset (see builder.konst); the
// features the search finds constant are added to it.
func (b *builder) findSplit(lo, hi, buf int, key uint64, hist []int64, tot []int64, konst []uint64) split {
	best := split{left: b.scr.best}
	examined := 0
	b.catNode = false
	if b.local && b.locBits != nil && hist == nil && buf < 0 && hi-lo < sparseAt {
		// Larger nodes' ORs cost more than the scans they spare.
		b.markBase(lo, hi, konst)
	}
	order, sorted, limit := b.featureOrder(key, konst)
	if b.packed && !b.random && hist == nil && buf < 0 {
		b.compactClasses(tot)
		b.fillNodeW(lo, hi)
		defer func() { b.cstride, b.nodeOK, b.sparseOK, b.gsparseOK = 0, false, false, false }()
	}
	cat := b.cat
	if hist == nil && hi-lo <= 3 && b.pairShortcut() {
		switch {
		case hi-lo == 2 && (buf >= 0 || b.local):
			order = b.scanPair(lo, buf, tot, order, sorted, limit, &best)
		case hi-lo == 3 && buf >= 0 && b.cls == nil:
			order = b.scanTriple(lo, buf, tot, order, sorted, limit, &best)
		}
	}
	for i, kj := range order {
		if examined >= b.k {
			break
		}
		if i == sorted {
			sorted, limit = nextBand(order, sorted, limit) // more constant features than expected
			kj = order[i]
		}
		j := int(kj & 0xFFFF)
		var ok bool
		switch {
		case cat != nil && cat[j]:
			ok = b.scanCategorical(j, lo, hi, buf, key, hist, tot, &best)
		case b.random:
			ok = b.scanRandom(j, lo, hi, key, tot, &best)
		case hist != nil:
			ok = b.scanDense(j, hist, tot, &best)
		case buf >= 0:
			ok = b.scanSorted(j, lo, hi, buf, tot, &best)
		default:
			ok = b.scanRows(j, lo, hi, tot, &best)
		}
		if ok {
			examined++
		} else {
			konst[j>>6] |= 1 << (j & 63)
		}
	}
	if best.ok {
		parent := b.proxy(tot)
		best.gain = best.score - parent
		if !(best.gain > gainTolerance*math.Abs(parent)) {
			best.ok = false
		}
	}
	if best.ok && !b.isCat(best.feature) && !b.hasMissing(hist, lo, hi, buf, best.feature) {
		// No missing value seen: send them to the heavier side.
		best.missingLeft = 2*best.left[1] >= tot[1]
	}
	return best
}

// markBase adds to konst the features whose code is their column's base
// in every row of the local node rows[lo:hi] (baseBits): they hold one
// code in the node, so every scan would find them constant, and leaving
// them out of the node's order leaves the features it examines, and its
// split, as they are.
func (b *builder) markBase(lo, hi int, konst []uint64) {
	for w, v := range b.baseBits(lo, hi, b.baseBuf) {
		konst[w] |= v
	}
}

// baseBits sets dst (cwords words) to the features whose code is their
// column's base in every row of the local node rows[lo:hi]: those with no
// bit in any of its rows' locBits.
func (b *builder) baseBits(lo, hi int, dst []uint64) []uint64 {
	cw := b.cwords
	acc := dst[:cw]
	lb, rows := b.locBits, b.lrows[lo-b.lbase:hi-b.lbase]
	if useAVX512 && cw <= 16 {
		orRows(&acc[0], &lb[0], &rows[0], len(rows), cw)
	} else {
		clear(acc)
		for _, i := range rows {
			for w, v := range lb[int(i)*cw : int(i)*cw+cw] {
				acc[w] |= v
			}
		}
	}
	for w, v := range acc {
		acc[w] = ^v
	}
	if r := b.p & 63; r != 0 {
		acc[cw-1] &= 1<<r - 1 // no feature past p
	}
	return acc
}

// pairShortcut tells whether scanPair and scanTriple may stand in for the
// scans of a node of two or three rows: numeric features only, the best
// splitter, and every boundary valid (min_samples_leaf 1, no least weight).
func (b *builder) pairShortcut() bool {
	return b.cat == nil && !b.random && b.minLeaf == 1 && b.minW == 0
}

// scanPair is findSplit's search of a node of two rows, on the sorted path
// or in a local block (in fully grown trees a third to an eighth of the
// scans). Every feature that separates the two rows (two codes, neither
// missing) splits them the same way, one row on each side, so every such
// feature scores the same bits: each criterion's score is a term of the
// left side's totals plus the same term of the right side's (boundary;
// scanPackedGini's right term is an exact integer sum of squares, and
// squared error's sl²·(1/wl) + sr²·(1/wr)), the two terms swap places
// from one feature to another, and a float64 sum does not depend on the
// order of its terms. The tie then goes to the lowest feature
// (core.Better), so among the features findSplit would examine (the first
// b.k that separate the rows, in the node's order) only the lowest is
// scanned, by scanSorted or scanRows, which set best as the full search
// would. It returns the order left to findSplit's loop: none. The
// features that do not separate the rows are not marked constant: the
// node's children, of one row each, are leaves.
func (b *builder) scanPair(lo, buf int, tot []int64, order []uint64, sorted int, limit uint64, best *split) []uint64 {
	examined, low := 0, -1
	for i, kj := range order {
		if examined >= b.k {
			break
		}
		if i == sorted {
			sorted, limit = nextBand(order, sorted, limit)
			kj = order[i]
		}
		j := int(kj & 0xFFFF)
		var c0, c1 uint8
		if buf >= 0 {
			o := j*b.scap + lo - b.sbase
			c0, c1 = entCode(b.sent[buf][o]), entCode(b.sent[buf][o+1]) // sorted: c0 <= c1
		} else {
			col, rows := b.loc[j*b.lsize:(j+1)*b.lsize], b.lrows[lo-b.lbase:lo-b.lbase+2]
			c0, c1 = min(col[rows[0]], col[rows[1]]), max(col[rows[0]], col[rows[1]])
		}
		if c0 == c1 || c1 == b.miss[j] {
			// One code, or one real code and the missing one (which is
			// above every real code): every scan finds the feature
			// constant.
			continue
		}
		examined++
		if low < 0 || j < low {
			low = j
		}
	}
	switch {
	case low < 0:
	case buf >= 0:
		b.scanSorted(low, lo, lo+2, buf, tot, best)
	default:
		b.scanRows(low, lo, lo+2, tot, best)
	}
	return nil
}

// scanTriple is scanPair's counterpart for a sorted node of three rows.
// A boundary of such a node puts one row on one side and the other two on
// the other, so its score is that of the lone row x on the left, by
// regressionScoreRec, the expression of scanSortedRegression: on either
// side its terms only swap places (the two rows' sums and weights are
// exact integers whichever way they are added). The three scores are computed
// once; each feature's boundaries (after its first code, lone row first;
// before its last, lone row last) are compared with core.Better's rule
// on these scores, and only the winner is scanned, by scanSorted, to set
// best as the full search would. A feature with a missing value among
// the node's rows (the learned default needs the full scan) leaves the
// node to findSplit's loop: the order is returned whole and best untouched.
func (b *builder) scanTriple(lo, buf int, tot []int64, order []uint64, sorted int, limit uint64, best *split) []uint64 {
	full := order
	tw, ts := tot[1], tot[2]
	ents := b.sent[buf][lo-b.sbase : lo-b.sbase+3] // any feature's list holds the three rows
	var rows [3]int32
	var score [3]float64
	for q, v := range ents {
		e := entRow(v)
		rows[q] = e
		score[q] = regressionScoreRec(b.lwy[e], b.lw[e], ts, tw, b.rec) // row e alone on the left
	}
	lone := func(e int32) float64 {
		if e == rows[0] {
			return score[0]
		}
		if e == rows[1] {
			return score[1]
		}
		return score[2]
	}
	var win split
	examined := 0
	for i, kj := range order {
		if examined >= b.k {
			break
		}
		if i == sorted {
			sorted, limit = nextBand(order, sorted, limit)
			kj = order[i]
		}
		j := int(kj & 0xFFFF)
		o := j*b.scap + lo - b.sbase
		s := b.sent[buf][o : o+3 : o+3]
		c := [3]uint8{entCode(s[0]), entCode(s[1]), entCode(s[2])}
		if c[2] == b.miss[j] {
			if c[0] == c[2] {
				continue // all missing: constant
			}
			return full
		}
		if c[0] == c[2] {
			continue
		}
		examined++
		if c[0] != c[1] {
			if sc := lone(entRow(s[0])); better(&win, sc, j, int(c[0]), false) {
				win.ok, win.score, win.feature, win.bin = true, sc, j, int(c[0])
			}
		}
		if c[1] != c[2] {
			if sc := lone(entRow(s[2])); better(&win, sc, j, int(c[1]), false) {
				win.ok, win.score, win.feature, win.bin = true, sc, j, int(c[1])
			}
		}
	}
	if win.ok {
		b.scanSorted(win.feature, lo, lo+3, buf, tot, best)
	}
	return nil
}

// hasMissing tells whether any of the node's rows misses feature j.
func (b *builder) hasMissing(hist []int64, lo, hi, buf, j int) bool {
	if b.noMissing != nil && b.noMissing[j] {
		return false
	}
	if hist != nil {
		return hist[(b.off[j]+b.nb[j])*b.stride] > 0
	}
	if buf < 0 && b.local {
		mc, col := b.miss[j], b.loc[j*b.lsize:(j+1)*b.lsize]
		for _, i := range b.lrows[lo-b.lbase : hi-b.lbase] {
			if col[i] == mc {
				return true
			}
		}
		return false
	}
	if buf < 0 {
		mc := b.miss[j]
		xb, p := b.feature(j, hi-lo)
		for _, r := range b.rows[lo:hi] {
			if xb[int(r)*p] == mc {
				return true
			}
		}
		return false
	}
	return entCode(b.sent[buf][j*b.scap+hi-1-b.sbase]) == b.miss[j]
}

// sortSegment starts a sorted subtree at rows[lo:hi]: it renumbers the rows
// locally and fills every feature's list, sorted by code with a counting sort.
func (b *builder) sortSegment(lo, hi int) {
	b.sbase = lo
	rows := b.rows[lo:hi]
	for i, r := range rows {
		b.lw[i] = b.rw[r]
		if b.cls != nil {
			b.lwy[i] = int64(b.cls[r])
		} else {
			b.lwy[i] = b.wy[r]
		}
	}
	p, xb := b.p, b.xb
	for j := 0; j < p; j++ {
		cnt := b.bucket[:b.nb[j]+2] // codes 0..nb[j] (the last is missing), shifted by one
		clear(cnt)
		for _, r := range rows {
			cnt[int(xb[int(r)*p+j])+1]++
		}
		for c := 1; c < len(cnt); c++ {
			cnt[c] += cnt[c-1]
		}
		ents := b.sent[0][j*b.scap : j*b.scap+len(rows)]
		for i, r := range rows {
			c := xb[int(r)*p+j]
			k := cnt[c]
			cnt[c]++
			ents[k] = uint32(i) | uint32(c)<<entRowBits
		}
	}
}

// enterLocal starts a local subtree at rows[lo:hi] (see builder.xc): it
// numbers the rows 0..m-1 and copies their codes into loc, column-major,
// and their weights and classes (or weighted targets) into locW and locY.
// Features known to be constant in the parent are left out, and so are
// those of their base code in every row of the block (baseBits): no node
// of the subtree reads them.
func (b *builder) enterLocal(lo, hi int) {
	m, p, xb := hi-lo, b.p, b.xb
	b.local, b.lbase, b.lsize = true, lo, m
	rows := b.rows[lo:hi]
	b.localRows(rows, b.lrows, b.locW, b.locY)
	konst := b.parentKonst()
	var base []uint64 // features of their base code in every row of the block
	if lb, cw := b.locBits, b.cwords; lb != nil {
		if useAVX512 && cw <= 16 {
			copyRows(&lb[0], &b.rowNZ[0], &rows[0], m, cw)
		} else {
			for i, r := range rows {
				copy(lb[i*cw:i*cw+cw], b.rowNZ[int(r)*cw:int(r)*cw+cw])
			}
		}
		// Those are left out of the copy, as the parent's constants are,
		// and set in the block's constants (lkonst), which every node of
		// the block inherits.
		base = b.baseBits(lo, hi, b.baseBuf)
		skip := b.skipBuf
		for w, v := range base {
			skip[w] = v
			if konst != nil {
				skip[w] |= konst[w]
			}
		}
		konst = skip
	}
	if xb == nil { // only the column-major copy (Fit)
		b.cols.gather(b.loc[:m*p], rows, konst, b.gmask, b.colBuf)
	} else {
		b.sink |= gatherColumns(b.loc[:m*p], xb, rows, p, konst)
	}
	b.lnz = false
	if b.locNZ != nil && m >= sparseAt {
		// The bitmaps of nonzero codes, and the block's constants on the
		// way (columnBits).
		b.lnz, b.lwords = true, (m+63)/64
		clear(b.lkonst)
		for j := 0; j < p; j++ {
			if konst != nil && konst[j>>6]&(1<<(j&63)) != 0 {
				continue
			}
			if columnBits(&b.loc[j*m], m, &b.locNZ[j*b.lwords]) {
				b.lkonst[j>>6] |= 1 << (j & 63)
			}
		}
	} else {
		blockConstants(b.lkonst, b.loc[:m*p], m, p, konst)
	}
	for w, v := range base {
		b.lkonst[w] |= v
	}
}

// blockConstants sets in dst the features whose column of the local block
// loc (m rows a feature) holds one code, skipping those set in skip (not
// copied into the block).
func blockConstants(dst []uint64, loc []uint8, m, p int, skip []uint64) {
	clear(dst)
	if m < 2 {
		return
	}
	for j := 0; j < p; j++ {
		if skip != nil && skip[j>>6]&(1<<(j&63)) != 0 {
			continue
		}
		col := loc[j*m : (j+1)*m]
		if bytes.Equal(col[1:], col[:m-1]) { // every code equals the next
			dst[j>>6] |= 1 << (j & 63)
		}
	}
}

// localRows numbers rows 0..m-1 into lrows and copies their weights and
// classes or weighted targets into locW and locY (see builder.locW).
func (b *builder) localRows(rows, lrows []int32, locW, locY []int64) {
	for i, r := range rows {
		lrows[i] = int32(i)
		locW[i] = b.rw[r]
		if b.packed { // see builder.locW
			locW[i] |= int64(b.cls[r])<<56 | 1<<32
		}
		if b.cls != nil {
			locY[i] = int64(b.cls[r])
		} else {
			locY[i] = b.wy[r]
		}
	}
}

// parentKonst is the bitset of the features known to be constant in the
// node whose child is being entered (nil at the root).
func (b *builder) parentKonst() []uint64 {
	if n := len(b.konst); n > 0 {
		return b.konst[n-b.cwords:]
	}
	return nil
}

// isLeaf tells whether a node at depth with n rows is a leaf without a split search.
func (b *builder) isLeaf(depth, n int) bool {
	return (b.maxDepth > 0 && depth >= b.maxDepth) || n < b.minSplit || n < 2*b.minLeaf
}

// leafNode tells whether a node at depth with statistics st is a leaf
// without a split search: isLeaf, or a classification node of one class,
// which no split can improve (each side's Gini or entropy term sums to the
// node's own exactly, a gain of 0, short of the tolerance).
func (b *builder) leafNode(depth int, st []int64) bool {
	if b.isLeaf(depth, int(st[0])) || st[1] < 2*b.minW {
		return true
	}
	if b.cls == nil {
		return false
	}
	classes := 0
	for _, v := range st[2:b.stride] {
		if v != 0 {
			classes++
		}
	}
	return classes <= 1
}

// grow builds the subtree over rows[lo:hi] and returns its node index.
// hist (owned by the call) is the node's dense histogram, or nil; buf is the
// sorted-list buffer that holds the node's rows, or -1 when none does.
func (b *builder) grow(lo, hi, depth int, key uint64, hist []int64, buf int, tot []int64) int32 {
	id := int32(len(b.nodes))
	b.nodes = append(b.nodes, bnode{feature: -1, set: -1, left: -1, right: -1, n: int32(tot[0]), w: tot[1]})
	b.values = b.prep.LeafValue(b.values, tot)
	if b.leafNode(depth, tot) {
		b.putHist(hist)
		return id
	}
	if hist == nil && buf < 0 && hi-lo <= b.sortAt {
		b.sortSegment(lo, hi)
		buf = 0
	}
	entered := false
	if hist == nil && buf < 0 && !b.local && hi-lo <= b.localAt {
		b.enterLocal(lo, hi)
		entered = true
		defer func() { b.local = false }()
	}
	// This node's known constants start as its parent's (the frame below
	// it on the stack, or none at the root).
	kmark := len(b.konst)
	if kmark == 0 {
		b.konst = append(b.konst, make([]uint64, b.cwords)...)
	} else {
		b.konst = append(b.konst, b.konst[kmark-b.cwords:kmark]...)
	}
	konst := b.konst[kmark : kmark+b.cwords : kmark+b.cwords]
	if entered {
		// Features of one code in the whole block: every scan of the
		// subtree would find them constant.
		for w, v := range b.lkonst {
			konst[w] |= v
		}
	}
	sp := b.findSplit(lo, hi, buf, key, hist, tot, konst)
	if !sp.ok {
		b.konst = b.konst[:kmark]
		b.putHist(hist)
		return id
	}
	j, bin, ml, mc := sp.feature, uint8(sp.bin), sp.missingLeft, b.miss[sp.feature]
	set := sp.set
	if b.isCat(j) {
		bin, ml = 0, set.Has(mc)
		b.nodes[id].set = int32(len(b.sets))
		b.sets = append(b.sets, set)
	} else {
		set = numericSet(bin, ml, mc)
	}
	mark := len(b.arena)
	b.arena = append(b.arena, sp.left...)
	b.arena = append(b.arena, tot...)
	ltot := b.arena[mark : mark+b.stride : mark+b.stride]
	rtot := b.arena[mark+b.stride : mark+2*b.stride : mark+2*b.stride]
	for q := range rtot {
		rtot[q] = tot[q] - ltot[q]
	}
	var mid int
	leaves := b.leafNode(depth+1, ltot) && b.leafNode(depth+1, rtot)
	if leaves {
		mid = lo + int(ltot[0]) // both children are leaves: their rows are not needed
	} else {
		mid = b.partition(lo, hi, buf, j, &set)
	}
	cbuf := buf
	if buf >= 0 && !leaves {
		cbuf = 1 - buf
	}
	nl, nr := mid-lo, hi-mid
	var lh, rh []int64
	if hist != nil && !leaves && max(nl, nr) > b.small {
		small := b.getHist()
		if nl <= nr {
			b.accumulate(small, b.rows[lo:mid])
			subtract(hist, small)
			lh, rh = small, hist
		} else {
			b.accumulate(small, b.rows[mid:hi])
			subtract(hist, small)
			lh, rh = hist, small
		}
		if nl <= b.small {
			b.putHist(lh)
			lh = nil
		}
		if nr <= b.small {
			b.putHist(rh)
			rh = nil
		}
	} else {
		b.putHist(hist)
	}
	b.nodes[id].feature = int32(j)
	b.nodes[id].bin = bin
	b.nodes[id].missingLeft = ml
	b.nodes[id].gain = sp.gain
	l := b.grow(lo, mid, depth+1, core.ChildKey(key, 0), lh, cbuf, ltot)
	r := b.grow(mid, hi, depth+1, core.ChildKey(key, 1), rh, cbuf, rtot)
	b.nodes[id].left, b.nodes[id].right = l, r
	b.arena = b.arena[:mark]
	b.konst = b.konst[:kmark]
	return id
}

// partition moves the rows of [lo,hi) going left (their code of feature j
// in set) first and returns the boundary. For sorted nodes (buf >= 0) it
// moves every feature's list from buffer buf to the other buffer, stably
// (rows itself is no longer used there).
func (b *builder) partition(lo, hi, buf, j int, set *CategorySet) int {
	if buf < 0 {
		// Stable, so that a node's rows stay in increasing order and its
		// scans read each column forwards (a local block's, or the
		// column-major copy's).
		rows := b.rows[lo:hi]
		var codes []uint8
		stride := 1
		if b.local {
			codes, rows = b.loc[j*b.lsize:(j+1)*b.lsize], b.lrows[lo-b.lbase:hi-b.lbase]
		} else {
			codes, stride = b.feature(j, hi-lo)
		}
		return lo + stablePartition(rows, b.rtmp[:len(rows)], codes, stride, set)
	}
	n := hi - lo
	mark := b.mark
	nl := 0
	off := j*b.scap + lo - b.sbase
	for _, v := range b.sent[buf][off : off+n] {
		c := entCode(v)
		l := uint8(set[c>>6] >> (c & 63) & 1)
		mark[entRow(v)] = l
		nl += int(l)
	}
	for f := 0; f < b.p; f++ {
		o := f*b.scap + lo - b.sbase
		src, dst := b.sent[buf][o:o+n], b.sent[1-buf][o:o+n]
		if useAVX512 {
			partitionEnts(&dst[0], &src[0], n, &mark[0], nl)
			continue
		}
		w, t := 0, nl
		for _, v := range src {
			l := int(mark[v&entRowMask])
			pos := t + (w-t)*l
			dst[pos] = v // one word: the row and its code
			w += l
			t += 1 - l
		}
	}
	return lo + nl
}

// stablePartition moves the rows whose code (codes[r*stride]) is in set
// first, keeping the order of each side, and returns how many there are;
// right is scratch of len(rows). Without branches on the codes: each row
// is written to both sides' next places and only the side it goes to
// moves.
func stablePartition(rows, right []int32, codes []uint8, stride int, set *CategorySet) int {
	w, k := 0, 0
	for _, r := range rows {
		c := codes[int(r)*stride]
		l := int(set[c>>6] >> (c & 63) & 1)
		rows[w] = r
		right[k] = r
		w += l
		k += 1 - l
	}
	copy(rows[w:], right[:k])
	return w
}

// subtract sets h -= s.
func subtract(h, s []int64) {
	s = s[:len(h)]
	for i := range h {
		h[i] -= s[i]
	}
}

// emit writes the grown tree into tr in breadth-first order.
func (b *builder) emit(tr *Tree) {
	nn := len(b.nodes)
	d := b.stride - 2
	*tr = newTree(nn, d, b.edges)
	queue := append(b.queue[:0], 0)
	for out := 0; out < len(queue); out++ {
		src := b.nodes[queue[out]]
		tr.SetCounts(out, src.n, src.w)
		copy(tr.Value[out*d:(out+1)*d], b.values[int(queue[out])*d:int(queue[out]+1)*d])
		if src.feature < 0 {
			continue
		}
		if src.set >= 0 {
			if tr.Category == nil {
				tr.Category = make([]int32, nn)
				for i := range tr.Category {
					tr.Category[i] = -1
				}
				sets := 0
				for _, nd := range b.nodes {
					if nd.feature >= 0 && nd.set >= 0 {
						sets++
					}
				}
				tr.Sets = make([]CategorySet, 0, sets)
			}
			tr.Category[out] = int32(len(tr.Sets))
			tr.Sets = append(tr.Sets, b.sets[src.set])
		}
		tr.setSplit(out, src.feature, src.bin, src.missingLeft, int32(len(queue)), src.gain)
		queue = append(queue, src.left, src.right)
	}
	b.queue = queue[:0]
}
