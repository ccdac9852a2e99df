// Package level is the host side of the level-wise forest learners: the
// WebGPU learner (package forestwgpu, whose kernels are WGSL) and the
// data-parallel learner (package forestdist, whose kernels build each
// rank's histograms natively and sum them across ranks). The kernels
// return exact integer statistics of a level's nodes; the host searches
// every node's split from them, grows the trees level by level and
// computes every float64 by forest.Fit's expressions, so the forest
// equals forest.Fit's node for node. Nothing here is API.
package level

import (
	"fmt"
	"math"
	"slices"

	"github.com/gotrain/gotrain/forest"
	"github.com/gotrain/gotrain/forest/internal/core"
	"github.com/gotrain/gotrain/rng"
)

// Prepared is the host-side preparation forest.Fit shares with the
// level-wise learners.
type Prepared = core.Prepared[forest.Options, *forest.Forest]

// Kernels are the device's stages of a fit. Every result is an exact
// integer.
type Kernels interface {
	// Bootstrap returns the bootstrap counts of trees t0 .. t0+trees-1,
	// trees×n (core.BootstrapCounts of each tree, in order).
	Bootstrap(seed uint64, t0, trees, n, draws int) ([]uint32, error)
	// SetBatch uploads each (tree, row)'s weight in its tree and its
	// frontier slot (−1: in no node), trees×n each.
	SetBatch(trees int, weight []uint32, slot []int32) error
	// Histograms returns the histograms of the frontier slots whose hmap
	// entry is in [lo, hi): (hi−lo) × entries × stride int64 statistics
	// (n, w, sums per entry), slot hmap[s]−lo's block first.
	Histograms(hmap []int32, lo, hi int) ([]int64, error)
	// MaxScatter is the most slots one Histograms call takes.
	MaxScatter() int
	// Move sends each (tree, row) of frontier slot s to its child's slot
	// for the next level: dec holds four words per slot, the split
	// feature (−1 when the node is not split: its rows leave the
	// frontier), the bin with missing-left at bit 8, the left and the
	// right child's slots (−1 for a leaf).
	Move(dec []int32) error
}

// Report describes a level-wise fit.
type Report struct {
	// Adapter is the WebGPU adapter's description (forestwgpu).
	Adapter string
	// TreesPerBatch is the number of trees grown together.
	TreesPerBatch int
	// Levels is the number of levels grown, summed over batches.
	Levels int
	// ScatteredNodes counts the nodes whose histograms the device built;
	// DerivedNodes those the host computed as the parent's minus the
	// sibling's (exact in int64).
	ScatteredNodes, DerivedNodes int
	// HistogramCalls counts the histogram passes (one per chunk of slots).
	HistogramCalls int
	// Dispatches counts the GPU dispatches of each stage (kernel), in
	// the order the stages first ran (forestwgpu).
	Stages     []string
	Dispatches []int
	// Seconds is the fit's wall time.
	Seconds float64
}

// hostHistBudget bounds the parents' histograms the host keeps for the
// parent-minus-sibling subtraction; hostWindowBytes the histograms of a
// window of frontier nodes the host searches at once (the wasm module's
// memory is at most 4 GiB).
const (
	hostHistBudget  = 128 << 20
	hostWindowBytes = 64 << 20
)

// SubtreeReq asks for the subtree below a node of the level being grown:
// side Side (0 left, 1 right) of frontier slot Slot, node Node of tree
// Tree of the batch (TreeIndex in the forest), with its key, depth, the
// tree's least leaf weight and the node's distinct rows.
type SubtreeReq struct {
	Tree, TreeIndex int
	Node            int32
	Slot            int32
	Side            int
	Key             uint64
	Depth           int
	MinW            int64
	Rows            int64
}

// SubtreeKernels are Kernels that also grow the subtrees of small nodes
// whole, with package forest's learner (core.Subtrees): the data-parallel
// learner's, whose histograms of small nodes would cost more to sum over
// the ranks than their subtrees cost to grow.
type SubtreeKernels interface {
	Kernels
	// SubtreeRows is the most distinct rows of a node whose subtree is
	// grown whole (0: none).
	SubtreeRows() int64
	// GrowSubtrees grows the subtrees of reqs, the children that the
	// level's split decisions dec (as Move takes them, before Move) make,
	// and returns each one's nodes (core.Subtrees.Grow's form).
	GrowSubtrees(reqs []SubtreeReq, dec []int32) ([][]core.Node, error)
}

// graft grows the subtrees of reqs (g.sub) and puts their nodes into the
// trees: each request's node takes its subtree root's split, and the
// other nodes are appended (emit orders them breadth-first).
func (g *grower) graft(nodes [][]core.Node, reqs []SubtreeReq, dec []int32) error {
	subs, err := g.sub.GrowSubtrees(reqs, dec)
	if err != nil {
		return err
	}
	if len(subs) != len(reqs) {
		return fmt.Errorf("%s: %d subtrees for %d requests", g.name, len(subs), len(reqs))
	}
	for i, r := range reqs {
		sub := subs[i]
		tn := nodes[r.Tree]
		if len(sub) == 0 || int64(sub[0].N) != r.Rows || sub[0].W != tn[r.Node].W {
			return fmt.Errorf("%s: the subtree of tree %d node %d does not start at that node", g.name, r.TreeIndex, r.Node)
		}
		base := int32(len(tn)) - 1 // sub[k] for k >= 1 goes to base+k
		at := func(k int32) int32 {
			if k < 0 {
				return -1
			}
			return base + k
		}
		root := &tn[r.Node]
		root.Feature, root.Bin, root.MissingLeft, root.Gain, root.Left = sub[0].Feature, sub[0].Bin, sub[0].MissingLeft, sub[0].Gain, at(sub[0].Left)
		for _, nd := range sub[1:] {
			nd.Left = at(nd.Left)
			tn = append(tn, nd)
		}
		nodes[r.Tree] = tn
	}
	return nil
}

// Grow grows the forest of pr with kernels k, trees trees at a time, the
// split search and every float64 here, and finishes it (pr.Finish: the
// out-of-bag score, the leaf samples, the predictor). It equals
// forest.Fit's forest of the same data and options node for node.
// window > 0 sets the frontier nodes the host searches at once (tests);
// 0 takes hostWindowBytes' worth. name prefixes Grow's own errors (the
// kernels' are returned as they are); rep receives the counts.
func Grow(name string, pr *Prepared, k Kernels, trees, window int, rep *Report) (*forest.Forest, error) {
	if trees < 1 {
		return nil, fmt.Errorf("%s: %d trees per batch", name, trees)
	}
	g := &grower{name: name, pr: pr, opt: pr.Options, n: pr.Rows, p: pr.Cols, q: pr.Stride(), e: pr.Entries,
		random:  pr.Options.Splitter == forest.Random,
		entropy: pr.Options.Task == forest.Classification && pr.Options.Criterion == forest.Entropy,
		rep:     rep, windowNodes: window, k: k, trees: trees}
	g.rep.TreesPerBatch = trees
	if sk, ok := k.(SubtreeKernels); ok && sk.SubtreeRows() > 0 {
		g.sub, g.subRows = sk, sk.SubtreeRows()
	}
	f := pr.NewForest(g.opt.Trees)
	var inbag [][]uint64
	if g.opt.OOB {
		inbag = make([][]uint64, g.opt.Trees)
	}
	for t0 := 0; t0 < g.opt.Trees; t0 += trees {
		t1 := min(g.opt.Trees, t0+trees)
		if err := g.growBatch(f.Trees[t0:t1], t0, inbag); err != nil {
			return nil, err
		}
	}
	if err := pr.Finish(f, inbag); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return f, nil
}

// grower grows the trees of one fit.
type grower struct {
	name            string
	sub             SubtreeKernels // nil: every node searched here
	subRows         int64
	pr              *Prepared
	opt             forest.Options
	k               Kernels
	n, p, q, e      int
	trees           int
	random, entropy bool
	minW            []int64 // each tree's least leaf weight in the batch
	windowNodes     int     // frontier nodes per window; 0: hostWindowBytes' worth
	rep             *Report
}

// frontierNode is a node whose split is searched at this level.
type frontierNode struct {
	tree  int // in the batch
	node  int32
	depth int
	key   uint64
	tot   []int64
	// sib is the index of the sibling in the frontier (−1 when the
	// sibling is a leaf), parent the parent's histogram when the host
	// kept it (nil otherwise).
	sib    int
	parent []int64
}

// leafNode tells whether a node at depth with statistics st is a leaf
// without a split search, as forest.Fit's: too deep, too few rows, too
// little weight for two leaves, or one class only.
func (g *grower) leafNode(depth int, st []int64, minW int64) bool {
	o := g.opt
	if (o.MaxDepth > 0 && depth >= o.MaxDepth) || st[0] < int64(o.MinSamplesSplit) || st[0] < 2*int64(o.MinSamplesLeaf) || st[1] < 2*minW {
		return true
	}
	if g.pr.Class == nil {
		return false
	}
	classes := 0
	for _, v := range st[2:g.q] {
		if v != 0 {
			classes++
		}
	}
	return classes <= 1
}

// growBatch grows trees out (the forest's trees t0...).
func (g *grower) growBatch(out []forest.Tree, t0 int, inbag [][]uint64) error {
	T, n, q := len(out), g.n, g.q
	var counts []uint32
	if g.opt.NoBootstrap {
		counts = make([]uint32, T*n)
		for i := range counts {
			counts[i] = 1
		}
	} else {
		var err error
		if counts, err = g.k.Bootstrap(g.opt.Seed, t0, T, n, g.pr.Draws); err != nil {
			return err
		}
		if len(counts) != T*n {
			return fmt.Errorf("%s: the bootstrap returned %d counts, want %d", g.name, len(counts), T*n)
		}
	}
	weight := make([]uint32, T*n)
	slot := make([]int32, T*n)
	roots := make([][]int64, T)
	g.minW = make([]int64, T)
	for t := 0; t < T; t++ {
		tc := make([]int32, n)
		tot := make([]int64, q)
		for i := 0; i < n; i++ {
			c := counts[t*n+i]
			tc[i] = int32(c)
			w := int64(c)
			if g.pr.W != nil {
				w *= g.pr.W[i]
			}
			if w < 0 || w > math.MaxUint32 {
				return fmt.Errorf("%s: row %d weighs %d in tree %d, beyond the 32 bits of a kernel weight", g.name, i, w, t0+t)
			}
			weight[t*n+i] = uint32(w)
			slot[t*n+i] = -1
			if w == 0 {
				continue
			}
			slot[t*n+i] = int32(t)
			tot[0]++
			tot[1] += w
			if g.pr.Class != nil {
				tot[2+g.pr.Class[i]] += w
			} else {
				tot[2] += w * g.pr.YQ[i]
			}
		}
		if inbag != nil {
			inbag[t0+t] = core.InBagMask(tc)
		}
		roots[t] = tot
		if f := g.opt.MinWeightFractionLeaf; f > 0 {
			g.minW[t] = int64(math.Ceil(f * float64(tot[1])))
		}
	}
	nodes := make([][]core.Node, T)
	var frontier []frontierNode
	for t := 0; t < T; t++ {
		nodes[t] = []core.Node{{Feature: -1, Left: -1, N: int32(roots[t][0]), W: roots[t][1], Values: g.pr.LeafValue(nil, roots[t])}}
		if !g.leafNode(0, roots[t], g.minW[t]) {
			frontier = append(frontier, frontierNode{tree: t, key: core.RootKey, tot: roots[t], sib: -1})
		}
	}
	// The first level's slots: the frontier's index of the tree's root,
	// −1 in the trees whose root is a leaf.
	remap := make([]int32, T)
	for t := range remap {
		remap[t] = -1
	}
	for s, fn := range frontier {
		remap[fn.tree] = int32(s)
	}
	for i, s := range slot {
		if s >= 0 {
			slot[i] = remap[s]
		}
	}
	if err := g.k.SetBatch(T, weight, slot); err != nil {
		return err
	}
	size := g.e * q * 8 // bytes of one node's histogram on the host
	window := g.windowNodes
	if window <= 0 {
		window = max(2, hostWindowBytes/size)
	}
	for len(frontier) > 0 {
		g.rep.Levels++
		N := len(frontier)
		dec := make([]int32, 4*N)
		var next []frontierNode
		var reqs []SubtreeReq
		kept := 0
		// The frontier in windows of nodes whose histograms the host
		// holds at once; a window keeps sibling pairs together (one may be
		// derived from the other).
		for w0 := 0; w0 < N; {
			w1 := min(N, w0+window)
			if w1 < N && frontier[w1-1].sib == w1 {
				w1++
			}
			hists, err := g.levelHistograms(frontier, w0, w1)
			if err != nil {
				return err
			}
			for s := w0; s < w1; s++ {
				fn := frontier[s]
				dec[4*s], dec[4*s+2], dec[4*s+3] = -1, -1, -1
				sp := g.search(hists[s-w0], fn.tot, t0+fn.tree, fn.key, g.minW[fn.tree])
				if !sp.ok {
					continue
				}
				tn := nodes[fn.tree]
				nd := &tn[fn.node]
				nd.Feature, nd.Bin, nd.MissingLeft, nd.Gain = int32(sp.feature), uint8(sp.bin), sp.missingLeft, sp.gain
				nd.Left = int32(len(tn))
				ml := int32(0)
				if sp.missingLeft {
					ml = 1
				}
				dec[4*s], dec[4*s+1] = int32(sp.feature), int32(sp.bin)|ml<<8
				lt := sp.left
				rt := make([]int64, q)
				for i := range rt {
					rt[i] = fn.tot[i] - lt[i]
				}
				first := len(next)
				for side, st := range [][]int64{lt, rt} {
					id := int32(len(tn))
					tn = append(tn, core.Node{Feature: -1, Left: -1, N: int32(st[0]), W: st[1], Values: g.pr.LeafValue(nil, st)})
					if g.leafNode(fn.depth+1, st, g.minW[fn.tree]) {
						continue
					}
					if g.sub != nil && st[0] <= g.subRows {
						reqs = append(reqs, SubtreeReq{Tree: fn.tree, Node: id, Slot: int32(s), Side: side,
							Key: core.ChildKey(fn.key, uint64(side)), Depth: fn.depth + 1, MinW: g.minW[fn.tree], TreeIndex: t0 + fn.tree, Rows: st[0]})
						continue
					}
					dec[4*s+2+side] = int32(len(next))
					next = append(next, frontierNode{tree: fn.tree, node: id, depth: fn.depth + 1, key: core.ChildKey(fn.key, uint64(side)), tot: st, sib: -1})
				}
				if len(next) == first+2 {
					next[first].sib, next[first+1].sib = first+1, first
					if kept+size <= hostHistBudget {
						// A copy: the read-back block of the window stays
						// out of the budget's way.
						kept += size
						h := slices.Clone(hists[s-w0])
						next[first].parent, next[first+1].parent = h, h
					}
				}
				nodes[fn.tree] = tn
			}
			w0 = w1
		}
		if len(reqs) > 0 {
			if err := g.graft(nodes, reqs, dec); err != nil {
				return err
			}
		}
		if len(next) > 0 {
			if err := g.k.Move(dec); err != nil {
				return err
			}
		}
		frontier = next
	}
	for t := range out {
		if err := Emit(nodes[t], g.pr, &out[t]); err != nil {
			return err
		}
	}
	return nil
}

// levelHistograms returns the histograms of the frontier's nodes
// [w0, w1): of two siblings whose parent's histogram the host kept, the
// one with fewer distinct rows (the left one on a tie) is built on the
// device and the other is the parent's minus it; every other node is
// built on the device.
func (g *grower) levelHistograms(frontier []frontierNode, w0, w1 int) ([][]int64, error) {
	N, size := len(frontier), g.e*g.q
	hmap := make([]int32, N)
	for s := range hmap {
		hmap[s] = -1
	}
	derived := make([]bool, w1-w0)
	var scatter []int
	for s := w0; s < w1; s++ {
		fn := frontier[s]
		if fn.parent != nil && fn.sib >= w0 && fn.sib < w1 {
			sib := frontier[fn.sib]
			small := fn.tot[0] < sib.tot[0] || (fn.tot[0] == sib.tot[0] && fn.sib > s)
			if !small {
				derived[s-w0] = true
				continue
			}
		}
		hmap[s] = int32(len(scatter))
		scatter = append(scatter, s)
	}
	hists := make([][]int64, w1-w0)
	chunk := g.k.MaxScatter()
	for lo := 0; lo < len(scatter); lo += chunk {
		hi := min(len(scatter), lo+chunk)
		h, err := g.k.Histograms(hmap, lo, hi)
		if err != nil {
			return nil, err
		}
		if len(h) != (hi-lo)*size {
			return nil, fmt.Errorf("%s: the histograms of %d slots hold %d statistics, want %d", g.name, hi-lo, len(h), (hi-lo)*size)
		}
		g.rep.HistogramCalls++
		for i, s := range scatter[lo:hi] {
			hists[s-w0] = h[i*size : (i+1)*size : (i+1)*size]
		}
	}
	g.rep.ScatteredNodes += len(scatter)
	for s := w0; s < w1; s++ {
		if !derived[s-w0] {
			continue
		}
		fn := frontier[s]
		h := slices.Clone(fn.parent)
		for i, v := range hists[fn.sib-w0] {
			h[i] -= v
		}
		hists[s-w0] = h
		g.rep.DerivedNodes++
	}
	return hists, nil
}

// split is a node's chosen split.
type split struct {
	ok          bool
	score, gain float64
	feature     int
	bin         int
	missingLeft bool
	left        []int64
}

// better reports whether candidate (score, j, bin, ml) beats the best so
// far: core.Better's tie rule.
func better(cur *split, score float64, j, bin int, ml bool) bool {
	return core.Better(cur.ok, cur.score, cur.feature, cur.bin, cur.missingLeft, score, j, bin, ml)
}

// proxy is the impurity proxy of a side with statistics st (n, w, sums):
// core.Proxy.
func (g *grower) proxy(st []int64) float64 {
	return core.Proxy(st[:g.q], g.pr.Class != nil, g.entropy)
}

// regressionScore is forest.Fit's squared-error score of a split whose
// left side has weighted target sum s and weight w in a node of totals ts
// and tw: s²·(1/w) + (ts−s)²·(1/(tw−w)), every product rounded.
func regressionScore(s, w, ts, tw int64) float64 {
	fl, fr := float64(s), float64(ts-s)
	return float64(float64(fl*fl)*(1/float64(w))) + float64(float64(fr*fr)*(1/float64(tw-w)))
}

// boundary evaluates the splits after code c of feature j (left: the
// statistics of codes <= c; m: the missing values'), missing values right
// then left.
func (g *grower) boundary(j, c int, left, m, tot []int64, minW int64, best *split, cand []int64) {
	q := g.q
	minLeaf := int64(g.opt.MinSamplesLeaf)
	for pass := 0; pass < 2; pass++ {
		ml := pass == 1
		if ml && m[0] == 0 {
			return
		}
		copy(cand, left)
		if ml {
			for i := 0; i < q; i++ {
				cand[i] += m[i]
			}
		}
		if cand[0] < minLeaf || tot[0]-cand[0] < minLeaf || cand[1] < minW || tot[1]-cand[1] < minW {
			continue
		}
		var score float64
		if g.pr.Class == nil {
			score = regressionScore(cand[2], cand[1], tot[2], tot[1])
		} else {
			score = g.proxy(cand)
			for i := 0; i < q; i++ {
				cand[q+i] = tot[i] - cand[i]
			}
			score += g.proxy(cand[q : 2*q])
		}
		if better(best, score, j, c, ml) {
			best.ok, best.score, best.feature, best.bin, best.missingLeft = true, score, j, c, ml
			copy(best.left, cand[:q])
		}
	}
}

// search finds the best split of a node of tree t (its index in the
// forest) with key key, histogram h (entries × stride) and totals tot, as
// forest.Fit: the features in the node's order, skipping those constant
// in the node, until K are examined.
func (g *grower) search(h, tot []int64, t int, key uint64, minW int64) split {
	pr, q := g.pr, g.q
	best := split{left: make([]int64, q)}
	order := make([]uint64, g.p)
	for j := range order {
		order[j] = uint64(j)
	}
	if pr.K < g.p {
		nk := core.NodeFeatureKey(g.opt.Seed, t, key)
		for j := range order {
			order[j] = core.FeaturePriorityAt(nk, j)>>16<<16 | uint64(j)
		}
		slices.Sort(order)
	}
	left := make([]int64, q)
	cand := make([]int64, 2*q)
	examined := 0
	for _, kj := range order {
		if examined >= pr.K {
			break
		}
		j := int(kj & 0xFFFF)
		nb := pr.NumBins[j]
		hj := h[pr.Offsets[j]*q : (pr.Offsets[j]+nb+1)*q]
		m := hj[nb*q : (nb+1)*q]
		first, last := -1, -1
		for c := 0; c < nb; c++ {
			if hj[c*q] > 0 {
				if first < 0 {
					first = c
				}
				last = c
			}
		}
		if first == last {
			continue // constant in the node
		}
		examined++
		clear(left)
		if g.random {
			tc := first + rng.Below(core.ThresholdDraw(g.opt.Seed, t, key, j), last-first)
			for c := first; c <= tc; c++ {
				for i := 0; i < q; i++ {
					left[i] += hj[c*q+i]
				}
			}
			g.boundary(j, tc, left, m, tot, minW, &best, cand)
			continue
		}
		for c := first; c < last; c++ {
			st := hj[c*q : (c+1)*q]
			if st[0] == 0 {
				continue
			}
			for i := range left {
				left[i] += st[i]
			}
			g.boundary(j, c, left, m, tot, minW, &best, cand)
		}
	}
	if best.ok {
		parent := g.proxy(tot)
		best.gain = best.score - parent
		if !(best.gain > 1e-12*math.Abs(parent)) {
			best.ok = false
		}
	}
	if best.ok && h[(pr.Offsets[best.feature]+pr.NumBins[best.feature])*q] == 0 {
		// No missing value in the node: they go to the heavier side.
		best.missingLeft = 2*best.left[1] >= tot[1]
	}
	return best
}

// Emit writes a grown tree of the preparation pr, its nodes in
// breadth-first order from the root (a split's children adjacent, at
// Left and Left+1), whatever their order in nodes: the level host grafts
// subtrees after later levels' nodes. The graph learner's trees too.
func Emit(nodes []core.Node, pr *Prepared, tr *forest.Tree) error {
	nn, d := len(nodes), pr.Outputs
	var err error
	if *tr, err = forest.NewTree(nn, d, pr.Edges); err != nil {
		return err
	}
	queue := make([]int32, 1, nn)
	for i := 0; i < len(queue); i++ {
		nd := nodes[queue[i]]
		tr.SetCounts(i, nd.N, nd.W)
		copy(tr.Value[i*d:(i+1)*d], nd.Values)
		if nd.Feature >= 0 {
			if err := tr.SetSplit(i, int(nd.Feature), nd.Bin, nd.MissingLeft, len(queue), nd.Gain); err != nil {
				return err
			}
			queue = append(queue, nd.Left, nd.Left+1)
		}
	}
	return nil
}
