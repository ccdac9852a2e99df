// Package forestdist is data-parallel forest training: each process
// (rank) holds a shard of the training rows, and the ranks grow together
// the forest forest.Fit grows on all the rows, byte for byte.
//
// How: the ranks first agree on the shards (the same columns, names and
// classes; rank r's rows follow rank r-1's). The binner then sees every
// feature column whole, gathered from the shards one column at a time, so
// its edges are computed from exactly the values forest.Fit bins; the
// target and the weights are gathered likewise, so the fixed-point target,
// the classes and the weight scale are forest.Fit's. Trees grow level by
// level on the host side forest/internal/level shares with the WebGPU
// learner: each rank builds the integer histograms of a level's nodes over
// its own rows, the ranks sum them with an int64 allreduce (exact, in any
// order), and every rank searches the same splits from the same sums and
// moves its own rows. Bootstrap counts come from the counter-based stream
// keyed by the global row index (core.BootstrapCounts), and every float
// total is computed by forest.Fit's expressions from exact integers, or in
// its fixed order (docs/FOREST.md, "Float totals").
//
// Each rank keeps the bin codes of every row (one byte a value, an eighth
// of the float64 data; gathered once), so the out-of-bag score and the
// leaf samples are computed as forest.Fit computes them; the histogram
// work, the cost that grows with rows × features × levels, is divided.
// Categorical features are refused (the level-wise split search does not
// order categories), as on WebGPU.
package forestdist

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"
	"time"

	"github.com/gotrain/gotrain/data"
	"github.com/gotrain/gotrain/forest"
	"github.com/gotrain/gotrain/forest/internal/core"
	"github.com/gotrain/gotrain/forest/internal/level"
)

// errCategorical is the refusal of categorical features.
var errCategorical = errors.New("forestdist: fit: categorical features are refused in data-parallel training (the level-wise split search does not order categories); use tree-parallel training (--distributed trees) or one process")

// Learner returns the forest.Learner of data-parallel training on c: its
// Fit takes this rank's shard (see Fit).
func Learner(c forest.Comm) forest.Learner { return learner{c} }

type learner struct{ c forest.Comm }

func (l learner) Fit(d *data.Dataset, opt forest.Options) (*forest.Forest, forest.FitStats, error) {
	start := time.Now()
	f, ds, err := Fit(d, opt, l.c)
	if err != nil {
		return nil, forest.FitStats{}, err
	}
	return f, forest.FitStats{Seconds: time.Since(start).Seconds(), Dist: ds}, nil
}

// Fit grows forest.Fit's forest of the rows of every rank's shard d (rank
// 0's rows first, then rank 1's, ...) with opt, every rank calling it.
// Every rank returns the same forest, whose model file equals forest.Fit's
// on the concatenated rows byte for byte. opt.Threads is each rank's
// thread count. An error is returned by every rank alike (naming the rank
// whose shard caused it); a shard may hold no rows.
func Fit(d *data.Dataset, opt forest.Options, c forest.Comm) (*forest.Forest, *forest.DistStats, error) {
	if c == nil {
		return nil, nil, errors.New("forestdist: fit: nil communicator")
	}
	cc := &counting{Comm: c, st: &forest.DistStats{Mode: "data", Ranks: c.Size(), Rank: c.Rank()}}
	sh, err := agree(cc, d)
	if err != nil {
		return nil, nil, err
	}
	gd, err := sh.global(cc, d)
	if err != nil {
		return nil, nil, err
	}
	pr, err := core.Prepare[forest.Options, *forest.Forest](gd, opt)
	if err != nil {
		return nil, nil, err // the same data on every rank: the same error
	}
	if gd.HasCategories() {
		return nil, nil, errCategorical
	}
	k := newKernels(cc, pr, sh.lo, sh.hi)
	rep := &level.Report{}
	f, err := level.Grow("forestdist: fit", pr, k, k.batch, 0, rep)
	if err != nil {
		return nil, nil, err
	}
	cc.st.BytesSent = cc.sent
	return f, cc.st, nil
}

// counting wraps a Comm, counting this rank's payload bytes and the time
// spent in collectives.
type counting struct {
	forest.Comm
	st   *forest.DistStats
	sent int64
}

func (c *counting) timed(fn func() error) error {
	t := time.Now()
	err := fn()
	c.st.CommSeconds += time.Since(t).Seconds()
	return err
}

func (c *counting) AllreduceInt64(buf []int64) error {
	if c.Size() > 1 {
		c.sent += int64(8 * len(buf))
	}
	return c.timed(func() error { return c.Comm.AllreduceInt64(buf) })
}

func (c *counting) Bcast(buf []byte, root int) error {
	if c.Size() > 1 && c.Rank() == root {
		c.sent += int64(len(buf))
	}
	return c.timed(func() error { return c.Comm.Bcast(buf, root) })
}

func (c *counting) Gather(buf []byte, root int) (parts [][]byte, err error) {
	if c.Size() > 1 && c.Rank() != root {
		c.sent += int64(len(buf))
	}
	err = c.timed(func() error { parts, err = c.Comm.Gather(buf, root); return err })
	return parts, err
}

// allgather gives every rank every rank's message, in rank order; a rank
// with an error (err != nil) sends it instead, and then every rank returns
// the errors of all the ranks that had one, naming them.
func allgather(c forest.Comm, msg []byte, err error) ([][]byte, error) {
	parts, gerr := c.Gather(tag(msg, err), 0)
	if gerr != nil {
		return nil, fmt.Errorf("forestdist: gather: %w", gerr)
	}
	// Rank 0 packs the parts: a count, then each part's length and bytes.
	var packed []byte
	if c.Rank() == 0 {
		packed = binary.LittleEndian.AppendUint64(nil, uint64(len(parts)))
		for _, p := range parts {
			packed = binary.LittleEndian.AppendUint64(packed, uint64(len(p)))
			packed = append(packed, p...)
		}
	}
	packed, err = bcastBytes(c, packed)
	if err != nil {
		return nil, err
	}
	size := uint64(len(packed))
	if size < 8 || binary.LittleEndian.Uint64(packed) != uint64(c.Size()) {
		return nil, fmt.Errorf("forestdist: rank 0 gathered a malformed set of %d bytes from %d ranks", size, c.Size())
	}
	parts = make([][]byte, c.Size())
	at := uint64(8)
	for r := range parts {
		if at+8 > size {
			return nil, errors.New("forestdist: a truncated gather")
		}
		l := binary.LittleEndian.Uint64(packed[at:])
		at += 8
		if l > size-at {
			return nil, errors.New("forestdist: a truncated gather")
		}
		parts[r] = packed[at : at+l]
		at += l
	}
	return untag(parts)
}

// tag is a rank's message as allgather sends it: 0 and the message, or 1
// and the error's text.
func tag(msg []byte, err error) []byte {
	if err != nil {
		return append([]byte{1}, err.Error()...)
	}
	return append([]byte{0}, msg...)
}

// untag returns the messages of tagged parts (rank order), or the errors
// of every rank that sent one, naming the ranks.
func untag(parts [][]byte) ([][]byte, error) {
	out := make([][]byte, len(parts))
	var errs []error
	for r, p := range parts {
		switch {
		case len(p) == 0:
			errs = append(errs, fmt.Errorf("rank %d: an empty message", r))
		case p[0] != 0:
			errs = append(errs, fmt.Errorf("rank %d: %s", r, p[1:]))
		default:
			out[r] = p[1:]
		}
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("forestdist: %w", errors.Join(errs...))
	}
	return out, nil
}

// bcastBytes gives every rank rank 0's b, whatever its length: the length,
// then the bytes.
func bcastBytes(c forest.Comm, b []byte) ([]byte, error) {
	n := binary.LittleEndian.AppendUint64(nil, uint64(len(b)))
	if err := c.Bcast(n, 0); err != nil {
		return nil, fmt.Errorf("forestdist: broadcast: %w", err)
	}
	size := binary.LittleEndian.Uint64(n)
	if size > 1<<40 {
		return nil, fmt.Errorf("forestdist: rank 0 announced %d bytes", size)
	}
	if c.Rank() != 0 {
		b = make([]byte, size)
	}
	if size > 0 {
		if err := c.Bcast(b, 0); err != nil {
			return nil, fmt.Errorf("forestdist: broadcast: %w", err)
		}
	}
	return b, nil
}

// shardInfo is what a rank tells the others about its shard.
type shardInfo struct {
	Rows, Cols   int
	Names        []string
	Target       string
	Classes      []string
	Weights      bool
	Categorical  bool
	ColumnSource bool
}

// shards is the agreed layout: this rank's rows are lo..hi of rows.
type shards struct {
	rows, lo, hi int
	info         shardInfo
}

// agree checks that the shards fit together (the same columns, names,
// target, classes and weights; no categorical column) and returns this
// rank's global row range.
func agree(c forest.Comm, d *data.Dataset) (*shards, error) {
	var msg []byte
	var err error
	if d == nil {
		err = errors.New("nil data set")
	} else {
		msg, err = json.Marshal(shardInfo{Rows: d.Rows, Cols: d.Cols, Names: d.FeatureNames, Target: d.TargetName,
			Classes: d.Classes, Weights: d.Weights != nil, Categorical: d.HasCategories(), ColumnSource: d.Source != nil})
	}
	parts, err := allgather(c, msg, err)
	if err != nil {
		return nil, err
	}
	infos := make([]shardInfo, len(parts))
	for r, p := range parts {
		if err := json.Unmarshal(p, &infos[r]); err != nil {
			return nil, fmt.Errorf("forestdist: fit: rank %d's shard description: %w", r, err)
		}
	}
	s := &shards{info: infos[0]}
	for r, in := range infos {
		switch {
		case in.Cols != infos[0].Cols:
			return nil, fmt.Errorf("forestdist: fit: rank %d's shard has %d features, rank 0's %d", r, in.Cols, infos[0].Cols)
		case !slices.Equal(in.Names, infos[0].Names):
			return nil, fmt.Errorf("forestdist: fit: rank %d's shard names its features %q, rank 0's %q", r, in.Names, infos[0].Names)
		case in.Target != infos[0].Target:
			return nil, fmt.Errorf("forestdist: fit: rank %d's target is %q, rank 0's %q", r, in.Target, infos[0].Target)
		case !slices.Equal(in.Classes, infos[0].Classes):
			return nil, fmt.Errorf("forestdist: fit: rank %d's shard has classes %q, rank 0's %q: data-parallel training needs the same class labels in every shard (or labels that are small integers)", r, in.Classes, infos[0].Classes)
		case in.Weights != infos[0].Weights:
			return nil, fmt.Errorf("forestdist: fit: rank %d's shard has sample weights %v, rank 0's %v", r, in.Weights, infos[0].Weights)
		case in.Categorical:
			return nil, fmt.Errorf("%w (rank %d's shard has one)", errCategorical, r)
		case in.Rows < 0:
			return nil, fmt.Errorf("forestdist: fit: rank %d's shard has %d rows", r, in.Rows)
		}
		if r == c.Rank() {
			s.lo = s.rows
		}
		s.rows += in.Rows
		if r == c.Rank() {
			s.hi = s.rows
		}
	}
	return s, nil
}

// global returns the data set of every shard's rows: the target and the
// weights gathered, the feature columns read through a source that
// gathers one column from every shard each time it is asked.
func (s *shards) global(c forest.Comm, d *data.Dataset) (*data.Dataset, error) {
	y, err := gatherFloats(c, d.Y, d.Rows, "target", nil)
	if err != nil {
		return nil, err
	}
	var w []float64
	if s.info.Weights {
		if w, err = gatherFloats(c, d.Weights, d.Rows, "weights", nil); err != nil {
			return nil, err
		}
	}
	return &data.Dataset{Name: d.Name, Rows: s.rows, Cols: d.Cols, Y: y, Weights: w,
		FeatureNames: d.FeatureNames, TargetName: d.TargetName, Classes: d.Classes,
		Source: &gatherSource{c: c, d: d, rows: s.rows}}, nil
}

// gatherFloats gathers every rank's vals (n of them) in rank order, or
// every rank's error (err: this rank's, if any).
func gatherFloats(c forest.Comm, vals []float64, n int, what string, err error) ([]float64, error) {
	if err == nil && len(vals) != n {
		err = fmt.Errorf("the shard has %d %s values for %d rows", len(vals), what, n)
	}
	buf := make([]byte, 8*len(vals))
	for i, v := range vals {
		binary.LittleEndian.PutUint64(buf[8*i:], math.Float64bits(v))
	}
	parts, err := allgather(c, buf, err)
	if err != nil {
		return nil, err
	}
	var out []float64
	for _, p := range parts {
		for i := 0; i+8 <= len(p); i += 8 {
			out = append(out, math.Float64frombits(binary.LittleEndian.Uint64(p[i:])))
		}
	}
	return out, nil
}

// gatherSource reads a feature column of the whole data set: every
// shard's part of it, gathered in rank order. Every rank reads the
// columns in the same order (the binner's), so the gathers pair up.
type gatherSource struct {
	c    forest.Comm
	d    *data.Dataset
	rows int
	col  []float64
}

func (g *gatherSource) ReadColumn(j int, dst []float64) ([]float64, []string, error) {
	d := g.d
	var local []float64
	var err error
	switch {
	case d.Source != nil:
		var dict []string
		local, dict, err = d.Source.ReadColumn(j, g.col)
		g.col = local
		if err == nil && dict != nil {
			err = errCategorical
		}
		if err == nil && len(local) != d.Rows {
			err = fmt.Errorf("feature column %d has %d values, want %d", j+1, len(local), d.Rows)
		}
	case len(d.X) != d.Rows*d.Cols:
		err = fmt.Errorf("X has %d values, want rows*cols = %d", len(d.X), d.Rows*d.Cols)
	default:
		local = g.col[:0]
		for i := range d.Rows {
			local = append(local, d.X[i*d.Cols+j])
		}
		g.col = local
	}
	col, err := gatherFloats(g.c, local, len(local), fmt.Sprintf("feature %d", j+1), err)
	if err != nil {
		return nil, nil, err
	}
	if len(col) != g.rows {
		return nil, nil, fmt.Errorf("forestdist: feature column %d: %d values gathered, want %d", j+1, len(col), g.rows)
	}
	return append(dst[:0], col...), nil, nil
}

// kernels build the histograms of this rank's rows lo..hi and sum them
// over the ranks.
type kernels struct {
	c       forest.Comm
	pr      *level.Prepared
	lo, hi  int
	batch   int
	n, p, q int
	threads int
	weight  []uint32
	slot    []int32
	trees   int
	subs    []core.Subtrees // one learner a thread, made when first needed
}

// localLimit, when not negative, replaces the bytes of a histogram as the
// bound below which a slot's rows × features make it local (Histograms):
// tests set it to 0 (every slot summed over the ranks) and to a large
// value (every slot local).
var localLimit int64 = -1

// subtreeRowsOverride, when not negative, replaces the most distinct rows
// of a node whose subtree one rank grows whole (kernels.SubtreeRows): tests
// set 0 (none) and large values (every child of the root).
var subtreeRowsOverride int64 = -1

// batchBytes bounds the per-(tree, row) arrays of a batch of trees.
const batchBytes = 256 << 20

func newKernels(c forest.Comm, pr *level.Prepared, lo, hi int) *kernels {
	n := pr.Rows
	batch := max(1, min(pr.Options.Trees, batchBytes/(8*max(1, n))))
	return &kernels{c: c, pr: pr, lo: lo, hi: hi, batch: batch, n: n, p: pr.Cols, q: pr.Stride(), threads: max(1, pr.Options.Threads)}
}

func (k *kernels) Bootstrap(seed uint64, t0, trees, n, draws int) ([]uint32, error) {
	out := make([]uint32, trees*n)
	c := make([]int32, n)
	for t := range trees {
		core.BootstrapCounts(seed, t0+t, draws, c)
		for i, v := range c {
			out[t*n+i] = uint32(v)
		}
	}
	return out, nil
}

func (k *kernels) SetBatch(trees int, weight []uint32, slot []int32) error {
	if len(weight) != trees*k.n || len(slot) != trees*k.n {
		return fmt.Errorf("forestdist: a batch of %d trees with %d weights and %d slots for %d rows", trees, len(weight), len(slot), k.n)
	}
	k.trees, k.weight, k.slot = trees, weight, slot
	return nil
}

// MaxScatter bounds one allreduce to about 64 MiB of histograms.
func (k *kernels) MaxScatter() int {
	return max(1, (64<<20)/(8*k.pr.Entries*k.q))
}

// Histograms builds the histograms of the slots in [lo, hi). A slot
// with many rows (replicated: false) is built over this rank's rows only
// and summed over the ranks by an allreduce; a slot with few rows, whose
// histogram would cost more to send than to build, is built by every rank
// from all its rows (Move keeps every row's slot on every rank, and every
// rank holds every row's codes), with no communication. Threads split the
// rows, each into a histogram of its own, added up in thread order:
// integers, so any order gives the same sums.
func (k *kernels) Histograms(hmap []int32, lo, hi int) ([]int64, error) {
	pr, q, e, p := k.pr, k.q, k.pr.Entries, k.p
	size := (hi - lo) * e * q
	// The slots' rows, counted over every row: a slot is local when
	// building its histogram from all its rows costs fewer bytes touched
	// than its histogram takes to send.
	count := make([]int64, hi-lo)
	for _, s := range k.slot {
		if s >= 0 {
			if hs := int(hmap[s]); hs >= lo && hs < hi {
				count[hs-lo]++
			}
		}
	}
	limit := int64(e * q * 8)
	if localLimit >= 0 {
		limit = localLimit
	}
	local := make([]bool, hi-lo)
	anyShared := false
	for i, c := range count {
		local[i] = k.c.Size() == 1 || c*int64(p) < limit
		anyShared = anyShared || !local[i]
	}
	threads := min(k.threads, max(1, k.n/4096))
	parts := make([][]int64, threads)
	var wg sync.WaitGroup
	for th := range threads {
		wg.Add(1)
		go func() {
			defer wg.Done()
			h := make([]int64, size)
			r0, r1 := k.n*th/threads, k.n*(th+1)/threads
			for t := range k.trees {
				base := t * k.n
				for i := r0; i < r1; i++ {
					s := k.slot[base+i]
					if s < 0 {
						continue
					}
					hs := int(hmap[s])
					if hs < lo || hs >= hi || (!local[hs-lo] && (i < k.lo || i >= k.hi)) {
						continue
					}
					w := int64(k.weight[base+i])
					off := (hs - lo) * e
					codes := pr.Codes[i*p : (i+1)*p]
					if pr.Class != nil {
						cl := 2 + int(pr.Class[i])
						for j, c := range codes {
							b := (off + pr.Offsets[j] + int(c)) * q
							h[b]++
							h[b+1] += w
							h[b+cl] += w
						}
					} else {
						wy := w * pr.YQ[i]
						for j, c := range codes {
							b := (off + pr.Offsets[j] + int(c)) * q
							h[b]++
							h[b+1] += w
							h[b+2] += wy
						}
					}
				}
			}
			parts[th] = h
		}()
	}
	wg.Wait()
	h := parts[0]
	for _, o := range parts[1:] {
		for i, v := range o {
			h[i] += v
		}
	}
	if !anyShared {
		return h, nil
	}
	// Sum the shared slots over the ranks: their blocks, packed.
	var packed []int64
	for i, l := range local {
		if !l {
			packed = append(packed, h[i*e*q:(i+1)*e*q]...)
		}
	}
	if err := k.c.AllreduceInt64(packed); err != nil {
		return nil, fmt.Errorf("forestdist: summing a level's histograms: %w", err)
	}
	at := 0
	for i, l := range local {
		if !l {
			copy(h[i*e*q:(i+1)*e*q], packed[at:at+e*q])
			at += e * q
		}
	}
	return h, nil
}

// Move sends the rows of each split node to its children: every row, not
// only this rank's, so that every rank can build the histograms of the
// slots with few rows alone (Histograms).
func (k *kernels) Move(dec []int32) error {
	pr, p := k.pr, k.p
	for t := range k.trees {
		base := t * k.n
		for i := range k.n {
			s := k.slot[base+i]
			if s < 0 {
				continue
			}
			f := dec[4*s]
			if f < 0 {
				k.slot[base+i] = -1
				continue
			}
			code := pr.Codes[i*p+int(f)]
			bin, ml := uint8(dec[4*s+1]&0xFF), dec[4*s+1]>>8 != 0
			if code <= bin || (code == pr.MissCode[f] && ml) {
				k.slot[base+i] = dec[4*s+2]
			} else {
				k.slot[base+i] = dec[4*s+3]
			}
		}
	}
	return nil
}

// SubtreeRows is the most distinct rows of a node whose subtree one rank
// grows whole with package forest's learner (GrowSubtrees): below about a
// quarter of a rank's share of the rows, the subtrees outnumber the ranks
// several times over, so they can be shared out evenly, and the histograms
// of their nodes (most nodes of deep trees) are never built or summed.
func (k *kernels) SubtreeRows() int64 {
	if subtreeRowsOverride >= 0 {
		return subtreeRowsOverride
	}
	if k.c.Size() == 1 {
		return 0
	}
	return max(64, int64(k.n/(4*k.c.Size())))
}

// GrowSubtrees shares the subtrees of reqs out among the ranks (the
// largest first, each to the least loaded rank, by distinct rows: the
// same plan on every rank), grows this rank's with its threads, each
// from the rows of its node (every rank tracks every row's slot), and
// gives every rank every subtree.
func (k *kernels) GrowSubtrees(reqs []level.SubtreeReq, dec []int32) ([][]core.Node, error) {
	size, rank := k.c.Size(), k.c.Rank()
	order := make([]int, len(reqs))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmpInt64(reqs[b].Rows, reqs[a].Rows) })
	owner := make([]int, len(reqs))
	load := make([]int64, size)
	for _, i := range order {
		r := 0
		for q := 1; q < size; q++ {
			if load[q] < load[r] {
				r = q
			}
		}
		owner[i], load[r] = r, load[r]+reqs[i].Rows
	}
	// This rank's requests' rows: one pass over the batch's rows.
	byChild := make(map[[2]int32]int, len(reqs))
	for i, r := range reqs {
		if owner[i] == rank {
			byChild[[2]int32{r.Slot, int32(r.Side)}] = i
		}
	}
	rows := make([][]int32, len(reqs))
	weights := make([][]int64, len(reqs))
	pr, p := k.pr, k.p
	for t := range k.trees {
		base := t * k.n
		for i := range k.n {
			s := k.slot[base+i]
			if s < 0 || dec[4*s] < 0 {
				continue
			}
			f := dec[4*s]
			code := pr.Codes[i*p+int(f)]
			bin, ml := uint8(dec[4*s+1]&0xFF), dec[4*s+1]>>8 != 0
			side := int32(1)
			if code <= bin || (code == pr.MissCode[f] && ml) {
				side = 0
			}
			if q, ok := byChild[[2]int32{s, side}]; ok {
				rows[q] = append(rows[q], int32(i))
				weights[q] = append(weights[q], int64(k.weight[base+i]))
			}
		}
	}
	var mine []int
	for i := range reqs {
		if owner[i] == rank {
			mine = append(mine, i)
		}
	}
	out := make([][]core.Node, len(reqs))
	threads := max(1, min(k.threads, len(mine)))
	for len(k.subs) < threads {
		st, err := core.NewSubtrees(pr)
		if err != nil {
			return nil, err
		}
		k.subs = append(k.subs, st)
	}
	errs := make([]error, threads)
	var wg sync.WaitGroup
	for th := range threads {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for x := th; x < len(mine); x += threads {
				i := mine[x]
				r := reqs[i]
				nodes, err := k.subs[th].Grow(r.TreeIndex, rows[i], weights[i], r.Key, r.Depth, r.MinW)
				if err != nil {
					errs[th] = err
					return
				}
				out[i] = nodes
			}
		}()
	}
	wg.Wait()
	var err error
	if e := errors.Join(errs...); e != nil {
		err = e
	}
	// Every rank's subtrees to every rank.
	var msg []byte
	for _, i := range mine {
		msg = binary.LittleEndian.AppendUint32(msg, uint32(i))
		msg = appendNodes(msg, out[i])
	}
	parts, err := allgather(k.c, msg, err)
	if err != nil {
		return nil, err
	}
	d := pr.Outputs
	for r, part := range parts {
		for len(part) > 0 {
			if len(part) < 4 {
				return nil, fmt.Errorf("forestdist: rank %d's subtrees are truncated", r)
			}
			i := int(binary.LittleEndian.Uint32(part))
			if i >= len(reqs) || owner[i] != r {
				return nil, fmt.Errorf("forestdist: rank %d sent subtree %d, not its own", r, i)
			}
			var nodes []core.Node
			nodes, part, err = readNodes(part[4:], d)
			if err != nil {
				return nil, fmt.Errorf("forestdist: rank %d's subtree %d: %w", r, i, err)
			}
			out[i] = nodes
		}
	}
	return out, nil
}

func cmpInt64(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// nodeBytes is the size of a core.Node without its values.
const nodeBytes = 4 + 1 + 1 + 4 + 4 + 8 + 8

// appendNodes appends a count and the nodes, values last in each.
func appendNodes(b []byte, nodes []core.Node) []byte {
	b = binary.LittleEndian.AppendUint32(b, uint32(len(nodes)))
	for _, nd := range nodes {
		b = binary.LittleEndian.AppendUint32(b, uint32(nd.Feature))
		ml := byte(0)
		if nd.MissingLeft {
			ml = 1
		}
		b = append(b, nd.Bin, ml)
		b = binary.LittleEndian.AppendUint32(b, uint32(nd.Left))
		b = binary.LittleEndian.AppendUint32(b, uint32(nd.N))
		b = binary.LittleEndian.AppendUint64(b, uint64(nd.W))
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(nd.Gain))
		for _, v := range nd.Values {
			b = binary.LittleEndian.AppendUint64(b, math.Float64bits(v))
		}
	}
	return b
}

// readNodes reads what appendNodes wrote (d values a node) and returns the
// rest of b.
func readNodes(b []byte, d int) ([]core.Node, []byte, error) {
	if len(b) < 4 {
		return nil, nil, errors.New("truncated")
	}
	n := int(binary.LittleEndian.Uint32(b))
	b = b[4:]
	per := nodeBytes + 8*d
	if n < 1 || n > len(b)/per {
		return nil, nil, fmt.Errorf("%d nodes in %d bytes", n, len(b))
	}
	nodes := make([]core.Node, n)
	for i := range nodes {
		nd := &nodes[i]
		nd.Feature = int32(binary.LittleEndian.Uint32(b))
		nd.Bin, nd.MissingLeft = b[4], b[5] != 0
		nd.Left = int32(binary.LittleEndian.Uint32(b[6:]))
		nd.N = int32(binary.LittleEndian.Uint32(b[10:]))
		nd.W = int64(binary.LittleEndian.Uint64(b[14:]))
		nd.Gain = math.Float64frombits(binary.LittleEndian.Uint64(b[22:]))
		nd.Values = make([]float64, d)
		for v := range nd.Values {
			nd.Values[v] = math.Float64frombits(binary.LittleEndian.Uint64(b[30+8*v:]))
		}
		if nd.Left < -1 || nd.Left >= int32(n) || (nd.Left >= 0 && nd.Left+1 >= int32(n)) {
			return nil, nil, fmt.Errorf("node %d's children at %d of %d nodes", i, nd.Left, n)
		}
		b = b[per:]
	}
	return nodes, b, nil
}
