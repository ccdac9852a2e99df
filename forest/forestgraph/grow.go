package forestgraph

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
	"slices"
	"time"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/pkg/core/dtypes"
	"github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/shapes"
	"github.com/gomlx/gomlx/pkg/core/tensors"

	"github.com/gotrain/gotrain/data"
	"github.com/gotrain/gotrain/forest"
	"github.com/gotrain/gotrain/forest/internal/core"
	"github.com/gotrain/gotrain/forest/internal/level"
)

// prepared is the host-side preparation forest.Fit shares with Fit.
type prepared = core.Prepared[forest.Options, *forest.Forest]

// Histogram is how the growth graphs build a level's histograms.
type Histogram string

const (
	// ScatterHistogram adds every (row, feature) statistic into its
	// (node slot, bin) entry with one int64 ScatterSum: exact and independent
	// of the order of the additions (atomics on a GPU). The default.
	ScatterHistogram Histogram = "scatter"
	// OneHotHistogram contracts a one-hot (tree, row)→slot matrix with the
	// row statistics, then with the (row, bin) indicator: no scatter, but
	// O(slots·rows·bins) work. The contractions are float64 (simplego's
	// int64 DotGeneral fails) and exact: every partial sum is an integer
	// below 2^53, the regression sums split into 31-bit limbs. It gives the
	// same histograms; it exists to compare the two (it is several times
	// slower on simplego).
	OneHotHistogram Histogram = "onehot"
)

// DefaultMaxDeviceBytes is GrowOptions.MaxDeviceBytes's default: 512 MiB.
const DefaultMaxDeviceBytes int64 = 512 << 20

// GrowOptions tune the graph learner; none of them changes the forest.
type GrowOptions struct {
	// TreesPerBatch is the number of trees grown together (the tree axis of
	// the graphs); 0 picks as many as MaxDeviceBytes allows, up to 64, in
	// batches of even size.
	TreesPerBatch int
	// MaxDeviceBytes bounds the histogram and scatter buffers of one graph
	// execution; the frontier of a level is processed in chunks of node
	// slots (a power of two) that fit. 0 means DefaultMaxDeviceBytes.
	MaxDeviceBytes int64
	// Histogram picks the histogram construction; "" is ScatterHistogram.
	Histogram Histogram
	// DeviceNum is the backend's device the growth and bootstrap graphs
	// run on (default 0).
	DeviceNum int
	// Subtract picks the parent-minus-sibling trick for the scatter
	// histograms (SubtractOn, SubtractOff); "" is DefaultSubtract. It is
	// not available with OneHotHistogram (there "" means off).
	Subtract Subtract
}

// GrowReport describes a graph fit.
type GrowReport struct {
	// Backend is the GoMLX backend's name.
	Backend string
	// TreesPerBatch is the size of the tree axis.
	TreesPerBatch int
	// Levels is the number of tree levels grown (summed over batches).
	Levels int
	// Executions counts graph executions (split searches and row moves).
	Executions int
	// Compiles counts the distinct graph shapes compiled.
	Compiles int
	// CompileSeconds is the time spent compiling graphs.
	CompileSeconds float64
	// RunSeconds is the rest of the fit's wall time (bootstrap, graph
	// executions, host orchestration, OOB score).
	RunSeconds float64
	// MaxSlots is the largest node-slot count of one execution.
	MaxSlots int
	// PeakHistogramBytes is the largest histogram of one execution:
	// slots × Σ_groups features × b × stride × 8 bytes, b being a feature
	// group's most bins plus the missing bin.
	PeakHistogramBytes int64
	// PeakScatterBytes is the size of the per-row buffers of the tree axis:
	// about trees × rows × features × 40 bytes for the scatter (three int64
	// updates and their int32 indices per (tree, row, feature)); for the
	// one-hot variant the (row, bin) indicator and the row statistics.
	PeakScatterBytes int64
	// ScatterRows is the number of (tree, row) entries the histogram
	// scatters walk, summed over the split executions and padding included
	// (each adds three values per feature): trees × rows per execution
	// without the subtraction, the compacted list with it.
	ScatterRows int64
	// DerivedNodes counts the frontier nodes whose histograms were computed
	// as the parent's minus the sibling's (the subtraction mode).
	DerivedNodes int
}

// errCategorical is Fit's refusal of categorical features.
var errCategorical = errors.New("forestgraph: fit: categorical features are refused on graph engines: a categorical split orders each node's categories by their target statistics, a sort per node and feature that the graph learner's fixed-shape histogram scan does not do; use the native learner (--device cpu)")

// Fit grows a forest as GoMLX graphs on backend: bootstrap counts, then,
// level by level, the histograms of every frontier node of a batch of trees,
// their split search and the rows' moves to the children. The forest equals
// forest.Fit(d, opt) node for node (see the package documentation for the
// guarantee). The entropy criterion runs only on simplego, whose Log is Go's
// math.Log; on other backends it is refused (their Log may differ in the
// last bit). Categorical features are refused.
func Fit(backend backends.Backend, d *data.Dataset, opt forest.Options, gopt GrowOptions) (*forest.Forest, *GrowReport, error) {
	start := time.Now()
	if backend == nil {
		return nil, nil, errors.New("forestgraph: fit: nil backend")
	}
	if d != nil && d.HasCategories() {
		return nil, nil, errCategorical
	}
	pr, err := core.Prepare[forest.Options, *forest.Forest](d, opt)
	if err != nil {
		return nil, nil, err
	}
	if d.HasCategories() { // found while reading the columns (data.Dataset.Source)
		return nil, nil, errCategorical
	}
	if pr.Options.Task == forest.Classification && pr.Options.Criterion == forest.Entropy && !exactLog(backend) {
		return nil, nil, fmt.Errorf("forestgraph: fit: the entropy criterion needs a backend whose Log is Go's math.Log (simplego, device go); %s's is not known to give the same bits: use gini, or the native learner", backend.Name())
	}
	g, err := newGrower(backend, pr, gopt)
	if err != nil {
		return nil, nil, err
	}
	defer g.close()
	f := pr.NewForest(pr.Options.Trees)
	var inbag [][]uint64
	if pr.Options.OOB {
		inbag = make([][]uint64, pr.Options.Trees)
	}
	for t0 := 0; t0 < pr.Options.Trees; t0 += g.trees {
		t1 := min(pr.Options.Trees, t0+g.trees)
		if err := g.growBatch(f.Trees[t0:t1], t0, inbag); err != nil {
			return nil, nil, err
		}
	}
	if err := pr.Finish(f, inbag); err != nil {
		return nil, nil, fmt.Errorf("forestgraph: fit: %w", err)
	}
	g.rep.RunSeconds = time.Since(start).Seconds() - g.rep.CompileSeconds
	return f, &g.rep, nil
}

// Learner is the forest.Learner that grows forests with Fit on Backend
// (for forest.Train's TrainConfig.Learner).
type Learner struct {
	// Backend is the GoMLX backend the graphs run on.
	Backend backends.Backend
	// Options tune the growth (GrowOptions.DeviceNum picks the device).
	Options GrowOptions
}

// Fit grows a forest with Fit and reports its run time and graph
// statistics.
func (l Learner) Fit(d *data.Dataset, opt forest.Options) (*forest.Forest, forest.FitStats, error) {
	f, rep, err := Fit(l.Backend, d, opt, l.Options)
	if err != nil {
		return nil, forest.FitStats{}, err
	}
	return f, rep.FitStats(), nil
}

// FitStats returns the report as forest.FitStats: RunSeconds, and the
// compile time, trees per batch and peak buffer sizes.
func (r *GrowReport) FitStats() forest.FitStats {
	return forest.FitStats{Seconds: r.RunSeconds, Graph: &forest.GraphStats{
		CompileSeconds: r.CompileSeconds, TreesPerBatch: r.TreesPerBatch,
		PeakHistogramBytes: r.PeakHistogramBytes, PeakScatterBytes: r.PeakScatterBytes,
	}}
}

// simpleGoName is the name of GoMLX's simplego backend, whose float64 Log
// is Go's math.Log.
const simpleGoName = "SimpleGo (go)"

// exactLog tells whether the backend's float64 Log is Go's math.Log, which
// the entropy criterion needs to give forest.Fit's bits: true for simplego
// only (XLA's and other backends' Log are their own approximations).
func exactLog(b backends.Backend) bool { return b.Name() == simpleGoName }

// grower holds one fit's graphs and constants.
type grower struct {
	backend backends.Backend
	pr      *prepared
	opt     forest.Options
	hist    Histogram
	sub     bool // the parent-minus-sibling trick
	random  bool // the random splitter (forest.Random): keysTensor, searchSplits
	// minW holds, when Options.MinWeightFractionLeaf > 0, the least
	// weight of each side of a split in each tree of the batch being
	// grown: ceil(fraction × the tree's root weight), as forest's.
	minW    []int64
	compact bool // the compacted row list (SubtractOn or SubtractCompact)
	device  int
	n, p    int
	b       int // the most positions of a feature: real bins + 1 (missing last)
	groups  []fgroup
	fGroup  []int32 // each feature's group
	fLocal  []int32 // each feature's index within its group
	nml     int     // missing directions searched: 2, or 1 when no value is missing
	e       int     // histogram entries per slot: Σ_groups features·b
	q       int     // stride
	trees   int     // tree axis
	maxNc   int     // most node slots per execution
	// keepBytes bounds the histograms of one level kept for the next
	// (subtraction mode).
	keepBytes int64
	rep       GrowReport

	boot     *Bootstrap
	split    *graph.Exec
	splitSub *graph.Exec
	splitCmp *graph.Exec
	move     *graph.Exec
	compiled map[string]bool

	// Inputs shared by every execution.
	codesOff *tensors.Tensor // [n·p] int32: each value's histogram entry
	codes    *tensors.Tensor // [n·p] int32: code
	target   *tensors.Tensor // [n] int64 yq, or [n] int32 class
	onehot   *tensors.Tensor // [n, E] float64 code indicator (one-hot variant)
	noParent *tensors.Tensor // [1, q·E] int64 zeros: the parent input when none is kept
}

// maxGroups is the most feature groups of different widths.
const maxGroups = 4

// fgroup is a group of features whose histograms share a width: b
// positions each (the group's most real bins + 1, the missing bin last),
// at entries off... of a slot's histogram.
type fgroup struct {
	feats []int // feature indices, ascending
	b     int
	off   int
}

// groupFeatures partitions the features into at most k groups of
// similar bin counts, minimising the padded histogram size Σ |group|·width
// (features sorted by width, split by dynamic programming).
func groupFeatures(numBins []int, k int) []fgroup {
	p := len(numBins)
	order := make([]int, p)
	for j := range order {
		order[j] = j
	}
	width := func(j int) int { return numBins[j] + 1 }
	slices.SortStableFunc(order, func(a, b int) int { return width(a) - width(b) })
	// cost[g][i]: the least size of the first i sorted features in g groups.
	const inf = math.MaxInt
	cost := make([][]int, k+1)
	from := make([][]int, k+1)
	for g := range cost {
		cost[g] = make([]int, p+1)
		from[g] = make([]int, p+1)
		for i := range cost[g] {
			cost[g][i] = inf
		}
	}
	cost[0][0] = 0
	for g := 1; g <= k; g++ {
		for i := 1; i <= p; i++ {
			for s := g - 1; s < i; s++ { // the last group is sorted[s:i]
				if cost[g-1][s] == inf {
					continue
				}
				if c := cost[g-1][s] + (i-s)*width(order[i-1]); c < cost[g][i] {
					cost[g][i], from[g][i] = c, s
				}
			}
		}
	}
	best := 1
	for g := 2; g <= k; g++ {
		if cost[g][p] < cost[best][p] {
			best = g
		}
	}
	var groups []fgroup
	for g, i := best, p; g > 0; g-- {
		s := from[g][i]
		feats := append([]int(nil), order[s:i]...)
		slices.Sort(feats)
		groups = append(groups, fgroup{feats: feats, b: width(order[i-1])})
		i = s
	}
	slices.SortFunc(groups, func(a, b fgroup) int { return a.feats[0] - b.feats[0] })
	off := 0
	for i := range groups {
		groups[i].off = off
		off += len(groups[i].feats) * groups[i].b
	}
	return groups
}

// roundSlots rounds a node count up to a padded slot count: a power of two
// or 1.5 times one, so that a forest compiles a few shapes and pads by at
// most a third.
func roundSlots(x int) int {
	if x <= 2 {
		return max(x, 1)
	}
	p := 1 << bits.Len(uint(x-1)) // the power of two >= x
	if q := p / 4 * 3; q >= x {
		return q
	}
	return p
}

func newGrower(backend backends.Backend, pr *prepared, gopt GrowOptions) (*grower, error) {
	g := &grower{backend: backend, pr: pr, opt: pr.Options, hist: gopt.Histogram, device: gopt.DeviceNum, n: pr.Rows, p: pr.Cols, q: pr.Stride(), compiled: map[string]bool{},
		random: pr.Options.Splitter == forest.Random}
	for _, nb := range pr.NumBins {
		g.b = max(g.b, nb+1)
	}
	g.groups = groupFeatures(pr.NumBins, maxGroups)
	g.fGroup = make([]int32, g.p)
	g.fLocal = make([]int32, g.p)
	for gi, gr := range g.groups {
		for jj, j := range gr.feats {
			g.fGroup[j], g.fLocal[j] = int32(gi), int32(jj)
		}
		g.e = max(g.e, gr.off+len(gr.feats)*gr.b)
	}
	g.nml = 1
	for j, c := range pr.Codes {
		if c == pr.MissCode[j%g.p] {
			g.nml = 2 // some value is missing: search both directions
			break
		}
	}
	g.rep.Backend = backend.Name()
	switch g.hist {
	case "":
		g.hist = ScatterHistogram
	case ScatterHistogram, OneHotHistogram:
	default:
		return nil, fmt.Errorf("forestgraph: fit: unknown histogram %q (want scatter or onehot)", gopt.Histogram)
	}
	mode := gopt.Subtract
	switch mode {
	case "":
		mode = SubtractOff
		if g.hist == ScatterHistogram {
			mode = DefaultSubtract
		}
	case SubtractOn, SubtractCompact:
		if g.hist != ScatterHistogram {
			return nil, fmt.Errorf("forestgraph: fit: subtract %q needs the scatter histogram, not %q", gopt.Subtract, g.hist)
		}
	case SubtractOff:
	default:
		return nil, fmt.Errorf("forestgraph: fit: unknown subtract mode %q (want on, compact or off)", gopt.Subtract)
	}
	g.sub = mode == SubtractOn
	g.compact = mode == SubtractOn || mode == SubtractCompact
	limit := gopt.MaxDeviceBytes
	switch {
	case limit == 0:
		limit = DefaultMaxDeviceBytes
	case limit < 0:
		return nil, fmt.Errorf("forestgraph: fit: max device bytes %d, want > 0 (0 = default)", limit)
	}
	if gopt.DeviceNum < 0 {
		return nil, fmt.Errorf("forestgraph: fit: device %d, want >= 0", gopt.DeviceNum)
	}
	if gopt.TreesPerBatch < 0 {
		return nil, fmt.Errorf("forestgraph: fit: trees per batch %d, want >= 0 (0 = automatic)", gopt.TreesPerBatch)
	}
	// Budget: half for the per-row buffers of the tree axis, half for the
	// per-slot histograms and split search (about 8 arrays of the
	// histogram's size).
	perTree := g.rowBytes(1)
	slotBytes := int64(g.e) * int64(g.q) * 8
	if perTree > limit/2 {
		return nil, fmt.Errorf("forestgraph: fit: one tree's row buffers take %d bytes, more than half of the %d-byte device limit", perTree, limit)
	}
	if 8*slotBytes > limit/2 {
		return nil, fmt.Errorf("forestgraph: fit: one node slot's histogram takes %d bytes (x8 for the split search), more than half of the %d-byte device limit", slotBytes, limit)
	}
	g.trees = gopt.TreesPerBatch
	if g.trees == 0 {
		g.trees = int(min(int64(64), (limit/2)/perTree))
	}
	g.trees = max(1, min(g.trees, g.opt.Trees))
	if gopt.TreesPerBatch == 0 {
		// Even batches: 100 trees at most 64 per batch run as 2 × 50, not 64 + 36 padded.
		batches := (g.opt.Trees + g.trees - 1) / g.trees
		g.trees = (g.opt.Trees + batches - 1) / batches
	}
	if g.rowBytes(g.trees) > limit/2 {
		return nil, fmt.Errorf("forestgraph: fit: %d trees per batch take %d bytes of row buffers, more than half of the %d-byte device limit", g.trees, g.rowBytes(g.trees), limit)
	}
	if int64(g.trees)*int64(g.n)*int64(g.p) >= math.MaxInt32 {
		return nil, fmt.Errorf("forestgraph: fit: %d trees × %d rows × %d features is too large for one graph; use fewer trees per batch", g.trees, g.n, g.p)
	}
	perSlot := 8 * slotBytes
	if g.sub {
		// The chunk's histograms as an output, the gathers and subtraction
		// of the derived slots and two transposes: about six more arrays.
		// The kept histograms of the last level and this one's take up to
		// a quarter of the limit, leaving a quarter for the chunk.
		perSlot += 6 * slotBytes
		perSlot *= 2
		g.keepBytes = limit / 8
	}
	if g.hist == OneHotHistogram {
		// The (tree, row, slot) indicator and the per-row sums of each slot.
		perSlot += int64(g.trees)*int64(g.n)*8 + int64(g.n)*int64(g.q+1)*8
	}
	g.maxNc = 1 << (bits.Len64(uint64(max(1, (limit/2)/perSlot))) - 1)
	// Flat indices over (entry, slot, side) stay in int32.
	g.maxNc = min(g.maxNc, 1<<(bits.Len64(uint64(math.MaxInt32/(2*int64(g.e)*int64(g.q))))-1))
	g.rep.TreesPerBatch = g.trees

	var err error
	if !g.opt.NoBootstrap {
		if g.boot, err = NewBootstrap(backend, g.n, g.pr.Draws, g.trees); err != nil {
			return nil, err
		}
		if err = g.boot.UseDevice(g.device); err != nil {
			return nil, err
		}
	}
	off := make([]int32, g.n*g.p)
	cd := make([]int32, g.n*g.p)
	for i := 0; i < g.n; i++ {
		for j := 0; j < g.p; j++ {
			c := int32(pr.Codes[i*g.p+j])
			cd[i*g.p+j] = c
			fg := g.groups[g.fGroup[j]]
			pos := c
			if c == int32(pr.MissCode[j]) {
				pos = int32(fg.b - 1)
			}
			off[i*g.p+j] = int32(fg.off+int(g.fLocal[j])*fg.b) + pos
		}
	}
	g.codesOff = tensors.FromFlatDataAndDimensions(off, g.n*g.p)
	g.codes = tensors.FromFlatDataAndDimensions(cd, g.n*g.p)
	if pr.Class != nil {
		g.target = tensors.FromFlatDataAndDimensions(append([]int32(nil), pr.Class...), g.n)
	} else {
		g.target = tensors.FromFlatDataAndDimensions(append([]int64(nil), pr.YQ...), g.n)
	}
	if g.hist == OneHotHistogram {
		c := make([]float64, g.n*g.e)
		for i := 0; i < g.n; i++ {
			for j := 0; j < g.p; j++ {
				c[i*g.e+int(off[i*g.p+j])] = 1
			}
		}
		g.onehot = tensors.FromFlatDataAndDimensions(c, g.n, g.e)
	}
	if g.split, err = graph.NewExec(backend, g.buildSplit); err != nil {
		return nil, fmt.Errorf("forestgraph: fit: creating the split graph: %w", err)
	}
	g.split.SetMaxCache(-1)
	if g.compact {
		if g.splitCmp, err = graph.NewExec(backend, g.buildSplitCompact); err != nil {
			return nil, fmt.Errorf("forestgraph: fit: creating the compact split graph: %w", err)
		}
		g.splitCmp.SetMaxCache(-1)
	}
	if g.sub {
		if g.splitSub, err = graph.NewExec(backend, g.buildSplitSub); err != nil {
			return nil, fmt.Errorf("forestgraph: fit: creating the subtraction split graph: %w", err)
		}
		g.splitSub.SetMaxCache(-1)
		g.noParent = tensors.FromFlatDataAndDimensions(make([]int64, g.q*g.e), 1, g.q*g.e)
	}
	if g.move, err = graph.NewExec(backend, g.buildMove); err != nil {
		return nil, fmt.Errorf("forestgraph: fit: creating the move graph: %w", err)
	}
	g.move.SetMaxCache(-1)
	return g, nil
}

// slotBytes is the size of one node slot's histogram.
func (g *grower) slotBytes() int64 { return int64(g.e) * int64(g.q) * 8 }

// rowBytes is the size of the per-row buffers of t trees: the scatter's
// updates and indices (or the one-hot variant's matrices), slots and counts.
func (g *grower) rowBytes(t int) int64 {
	tn := int64(t) * int64(g.n)
	if g.hist == OneHotHistogram {
		return tn*int64(g.q+1)*8 + int64(g.n)*int64(g.e)*8 + tn*16
	}
	return tn*int64(g.p)*(3*(8+4)+4) + tn*16
}

func (g *grower) close() {
	if g.boot != nil {
		g.boot.Close()
	}
	for _, e := range []*graph.Exec{g.split, g.splitSub, g.splitCmp, g.move} {
		if e != nil {
			e.Finalize()
		}
	}
	for _, t := range []*tensors.Tensor{g.codesOff, g.codes, g.target, g.onehot, g.noParent} {
		if t != nil {
			_ = t.FinalizeAll()
		}
	}
}

// exec runs e on args, compiling first (timed apart) for a new shape key.
func (g *grower) exec(e *graph.Exec, key string, args ...any) (outs []*tensors.Tensor, err error) {
	defer func() {
		if r := recover(); r != nil {
			outs, err = nil, fmt.Errorf("forestgraph: fit on %s: %v", g.backend.Name(), r)
		}
	}()
	if !g.compiled[key] {
		t0 := time.Now()
		if err := e.PreCompile(args...); err != nil {
			return nil, fmt.Errorf("forestgraph: fit: compiling on %s: %w", g.backend.Name(), err)
		}
		g.rep.CompileSeconds += time.Since(t0).Seconds()
		g.rep.Compiles++
		g.compiled[key] = true
	}
	outs, _, err = e.ExecWithGraphOnDevice(backends.DeviceNum(g.device), args...)
	if err != nil {
		return nil, fmt.Errorf("forestgraph: fit on %s: %w", g.backend.Name(), err)
	}
	g.rep.Executions++
	return outs, nil
}

// take gathers params[idx] from a vector: idx has a last axis of size 1 and
// the result has idx's other axes (GoMLX's Gather wants params of rank ≥ 2).
func take(params, idx *graph.Node) *graph.Node {
	n := params.Shape().Dimensions[0]
	r := graph.Gather(graph.Reshape(params, n, 1), idx)
	return graph.Squeeze(r, -1)
}

func finalize(ts []*tensors.Tensor) {
	for _, t := range ts {
		if t != nil {
			_ = t.FinalizeAll()
		}
	}
}

// frontierNode is a node whose split is searched at this level.
type frontierNode struct {
	tree  int // position in the batch
	node  int32
	depth int
	key   uint64
	// The subtraction mode: a node whose sibling has fewer distinct rows
	// (or as many, for the right one) is derived from its parent's slot at
	// the previous level (parent, −1: not derived) minus the sibling at
	// index sib of this level's frontier.
	parent int32
	sib    int
}

func (g *grower) isLeaf(depth int, n int64) bool {
	o := g.opt
	return (o.MaxDepth > 0 && depth >= o.MaxDepth) || n < int64(o.MinSamplesSplit) || n < 2*int64(o.MinSamplesLeaf)
}

// growBatch grows trees out[0:len(out)], the trees t0... of the forest.
func (g *grower) growBatch(out []forest.Tree, t0 int, inbag [][]uint64) error {
	T, n := g.trees, g.n
	counts := make([]int32, T*n)
	if g.opt.NoBootstrap {
		for k := 0; k < len(out)*n; k++ {
			counts[k] = 1
		}
	} else {
		idx := make([]int, len(out))
		for k := range idx {
			idx[k] = t0 + k
		}
		c, err := g.boot.Counts(g.opt.Seed, idx)
		if err != nil {
			return fmt.Errorf("forestgraph: fit: %w", err)
		}
		copy(counts, c)
	}
	if inbag != nil {
		for k := range out {
			inbag[t0+k] = core.InBagMask(counts[k*n : (k+1)*n])
		}
	}
	// Each row's weight in its tree: the bootstrap count times the
	// fixed-point sample weight (forest's builder.rw); rows of weight 0
	// are in no node.
	weights := make([]int64, T*n)
	for k, c := range counts {
		weights[k] = int64(c)
		if w := g.pr.W; w != nil {
			weights[k] *= w[k%n]
		}
	}
	if f := g.opt.MinWeightFractionLeaf; f > 0 {
		g.minW = make([]int64, T)
		for t := range out {
			var root int64
			for _, w := range weights[t*n : (t+1)*n] {
				root += w
			}
			g.minW[t] = int64(math.Ceil(f * float64(root)))
		}
	}
	slot0 := make([]int32, T*n)
	for k := range slot0 {
		slot0[k] = -1
		if weights[k] > 0 {
			slot0[k] = int32(k / n)
		}
	}
	countsT := tensors.FromFlatDataAndDimensions(weights, T, n)
	defer func() { _ = countsT.FinalizeAll() }()
	slotT := tensors.FromFlatDataAndDimensions(slot0, T, n)
	defer func() { _ = slotT.FinalizeAll() }()

	nodes := make([][]core.Node, len(out))
	frontier := make([]frontierNode, len(out))
	for k := range out {
		frontier[k] = frontierNode{tree: k, node: 0, depth: 0, key: core.RootKey, parent: -1, sib: -1}
	}
	// The subtraction mode keeps each (tree, row)'s slot on the host too
	// (read back after each move) and the last level's histograms on the
	// device when that level ran as one chunk.
	var hostSlot []int32
	var kept []*tensors.Tensor // the last level's histograms, one per chunk of keptNc slots
	keptNc := 0
	defer func() { finalize(kept) }()
	if g.compact {
		hostSlot = slot0
	}
	q := g.q
	for len(frontier) > 0 {
		g.rep.Levels++
		N := len(frontier)
		nc := min(roundSlots(N), g.maxNc)
		res := splitResults{}
		// The subtraction mode keeps this level's histograms for the next
		// level when all its chunks fit g.keepBytes.
		keep := g.sub && int64((N+nc-1)/nc*nc)*g.slotBytes() <= g.keepBytes
		var cur []*tensors.Tensor
		for base := 0; base < N; base += nc {
			fr := frontier[base:min(N, base+nc)]
			var r *splitResults
			var err error
			if g.compact {
				var hist *tensors.Tensor
				r, hist, err = g.searchChunkSub(fr, base, nc, t0, countsT, hostSlot, kept, keptNc)
				if err == nil {
					if keep {
						cur = append(cur, hist)
					} else if hist != nil {
						_ = hist.FinalizeAll()
					}
				}
			} else {
				r, err = g.searchChunk(fr, base, nc, t0, slotT, countsT)
			}
			if err != nil {
				finalize(cur)
				return err
			}
			res.append(r, len(fr), q)
		}
		if g.sub {
			finalize(kept)
			kept, keptNc = cur, nc
		}
		// Decide, create children, and build the move table.
		npad := roundSlots(N)
		feat := make([]int32, npad)
		bin := make([]int32, npad)
		ml := make([]int32, npad)
		lslot := make([]int32, npad)
		rslot := make([]int32, npad)
		for k := range lslot {
			lslot[k], rslot[k] = -1, -1
		}
		var next []frontierNode
		for s, fn := range frontier {
			tot := res.tot[s*q : (s+1)*q]
			tn := nodes[fn.tree]
			if fn.depth == 0 {
				tn = append(tn, core.Node{Feature: -1, Left: -1, N: int32(tot[0]), W: tot[1], Values: g.pr.LeafValue(nil, tot)})
				nodes[fn.tree] = tn
				if g.isLeaf(0, tot[0]) {
					continue
				}
			}
			if res.ok[s] == 0 {
				continue
			}
			lt := append([]int64(nil), res.left[s*q:(s+1)*q]...)
			rt := make([]int64, q)
			for i := range rt {
				rt[i] = tot[i] - lt[i]
			}
			nd := &tn[fn.node]
			f := res.feature[s]
			nd.Feature, nd.Bin, nd.MissingLeft, nd.Gain = f, uint8(res.bin[s]), res.ml[s] != 0, res.gain[s]
			nd.Left = int32(len(tn))
			feat[s], bin[s], ml[s] = f, res.bin[s], res.ml[s]
			first := len(next)
			for side, st := range [][]int64{lt, rt} {
				id := int32(len(tn))
				tn = append(tn, core.Node{Feature: -1, Left: -1, N: int32(st[0]), W: st[1], Values: g.pr.LeafValue(nil, st)})
				if g.isLeaf(fn.depth+1, st[0]) {
					continue
				}
				sl := int32(len(next))
				if side == 0 {
					lslot[s] = sl
				} else {
					rslot[s] = sl
				}
				next = append(next, frontierNode{tree: fn.tree, node: id, depth: fn.depth + 1, key: core.ChildKey(fn.key, uint64(side)), parent: -1, sib: -1})
			}
			if len(next) == first+2 {
				// Both children split further: the one with more distinct
				// rows (the right one on a tie) is derived from this slot.
				small, large := first, first+1
				if lt[0] > rt[0] {
					small, large = large, small
				}
				next[large].parent, next[large].sib = int32(s), small
			}
			nodes[fn.tree] = tn
		}
		if len(next) > 0 {
			args := []any{slotT, g.codes,
				tensors.FromFlatDataAndDimensions(feat, npad), tensors.FromFlatDataAndDimensions(bin, npad),
				tensors.FromFlatDataAndDimensions(ml, npad), tensors.FromFlatDataAndDimensions(lslot, npad),
				tensors.FromFlatDataAndDimensions(rslot, npad)}
			outs, err := g.exec(g.move, fmt.Sprintf("move/%d", npad), args...)
			for _, a := range args[2:] {
				_ = a.(*tensors.Tensor).FinalizeAll()
			}
			if err != nil {
				return err
			}
			if len(outs) != 1 {
				finalize(outs)
				return fmt.Errorf("forestgraph: fit: the move graph returned %d outputs, want 1", len(outs))
			}
			_ = slotT.FinalizeAll()
			slotT = outs[0]
			if g.compact {
				if hostSlot, err = tensors.CopyFlatData[int32](slotT); err != nil {
					return fmt.Errorf("forestgraph: fit: reading the row slots: %w", err)
				}
			}
		}
		frontier = next
	}
	for k := range out {
		if err := level.Emit(nodes[k], g.pr, &out[k]); err != nil {
			return fmt.Errorf("forestgraph: fit: %w", err)
		}
	}
	return nil
}

// splitResults are the split graph's outputs for a level's frontier.
type splitResults struct {
	ok, feature, bin, ml []int32
	gain                 []float64
	left, tot            []int64
}

func (r *splitResults) append(c *splitResults, m, q int) {
	r.ok = append(r.ok, c.ok[:m]...)
	r.feature = append(r.feature, c.feature[:m]...)
	r.bin = append(r.bin, c.bin[:m]...)
	r.ml = append(r.ml, c.ml[:m]...)
	r.gain = append(r.gain, c.gain[:m]...)
	r.left = append(r.left, c.left[:m*q]...)
	r.tot = append(r.tot, c.tot[:m*q]...)
}

// searchChunk runs the split graph for the frontier nodes fr, whose global
// slots start at base, padded to nc slots.
func (g *grower) searchChunk(fr []frontierNode, base, nc, t0 int, slotT, countsT *tensors.Tensor) (*splitResults, error) {
	keysT := g.keysTensor(fr, nc, t0)
	defer func() { _ = keysT.FinalizeAll() }()
	baseT := tensors.FromScalar(int32(base))
	defer func() { _ = baseT.FinalizeAll() }()
	args := []any{g.codesOff, slotT, countsT, g.target, baseT, keysT}
	if g.onehot != nil {
		args = append(args, g.onehot)
	}
	outs, err := g.exec(g.split, fmt.Sprintf("split/%d", nc), args...)
	if err != nil {
		return nil, err
	}
	defer finalize(outs)
	if len(outs) != 7 {
		return nil, fmt.Errorf("forestgraph: fit: the split graph returned %d outputs, want 7", len(outs))
	}
	g.rep.MaxSlots = max(g.rep.MaxSlots, nc)
	g.rep.PeakHistogramBytes = max(g.rep.PeakHistogramBytes, int64(nc)*int64(g.e)*int64(g.q)*8)
	g.rep.PeakScatterBytes = max(g.rep.PeakScatterBytes, g.rowBytes(g.trees))
	g.rep.ScatterRows += int64(g.trees) * int64(g.n)
	return readSplit(outs)
}

// keysTensor is the split graph's per-slot input for the frontier nodes fr
// padded to nc slots, [nc, width] (keyColumns): the feature keys in group
// order ([nc, 1] zeros when every feature is examined and the splitter is
// best); with the random splitter, then each feature's threshold draw
// (core.ThresholdDraw) shifted right by 32 bits, in group order too; with
// a least leaf weight, last, the slot's tree's (grower.minW).
func (g *grower) keysTensor(fr []frontierNode, nc, t0 int) *tensors.Tensor {
	kcols, width := g.keyColumns()
	keys := make([]uint64, nc*width)
	if g.minW != nil {
		for s, fn := range fr {
			keys[s*width+width-1] = uint64(g.minW[fn.tree])
		}
	}
	if kcols > 1 {
		for s, fn := range fr {
			r := 0 // features in group order, as the graph concatenates them
			for _, gr := range g.groups {
				for _, j := range gr.feats {
					keys[s*width+r] = core.FeaturePriority(g.opt.Seed, t0+fn.tree, fn.key, j)>>16<<16 | uint64(j)
					if g.random {
						keys[s*width+kcols+r] = core.ThresholdDraw(g.opt.Seed, t0+fn.tree, fn.key, j) >> 32
					}
					r++
				}
			}
		}
	}
	return tensors.FromFlatDataAndDimensions(keys, nc, width)
}

// keyColumns returns the columns of keysTensor's feature keys (p, or 1
// when unused) and its width.
func (g *grower) keyColumns() (kcols, width int) {
	kcols = 1
	if g.random || g.pr.K < g.p {
		kcols = g.p
	}
	width = kcols
	if g.random {
		width += g.p
	}
	if g.opt.MinWeightFractionLeaf > 0 {
		width++
	}
	return kcols, width
}

// buildMove is the row-move graph: inputs slot [T,n] int32 (a row's
// frontier slot, −1 when it is in no frontier node), codes [n·p] int32, and
// per old slot (padded) feature, bin, missing-left, left and right child
// slots (−1: the child is a leaf). Output: the new slots [T,n].
func (g *grower) buildMove(in []*graph.Node) []*graph.Node {
	slot, codes, feat, bin, ml, ls, rs := in[0], in[1], in[2], in[3], in[4], in[5], in[6]
	gr := slot.Graph()
	T, n, p := g.trees, g.n, g.p
	i32 := func(v int) *graph.Node { return graph.Const(gr, int32(v)) }
	act := graph.GreaterOrEqual(slot, i32(0))
	sc := graph.ExpandAxes(graph.Max(slot, i32(0)), -1) // [T,n,1]
	f := take(feat, sc)                                 // [T,n]
	rowBase := graph.Mul(graph.Iota(gr, shapes.Make(dtypes.Int32, T, n), 1), i32(p))
	code := take(codes, graph.ExpandAxes(graph.Add(rowBase, f), -1))
	miss := make([]int32, p)
	for j := range miss {
		miss[j] = int32(g.pr.MissCode[j])
	}
	mc := take(graph.Const(gr, miss), graph.ExpandAxes(f, -1))
	goLeft := graph.LogicalOr(graph.LessOrEqual(code, take(bin, sc)),
		graph.LogicalAnd(graph.Equal(code, mc), graph.NotEqual(take(ml, sc), i32(0))))
	next := graph.Where(goLeft, take(ls, sc), take(rs, sc))
	return []*graph.Node{graph.Where(act, next, i32(-1))}
}

// scan returns the inclusive prefix sums of x along axis, exact in int64:
// a work-efficient (Blelloch-style) scan of pairs, O(size) additions in
// log2(size) rounds of reshapes, slices and element-wise operations.
func scan(x *graph.Node, axis int) *graph.Node {
	dims := x.Shape().Dimensions
	m := dims[axis]
	if m == 1 {
		return x
	}
	if m%2 == 1 {
		zd := append([]int(nil), dims...)
		zd[axis] = 1
		x = graph.Concatenate([]*graph.Node{x, graph.Zeros(x.Graph(), shapes.Make(x.DType(), zd...))}, axis)
	}
	half := (m + 1) / 2
	pd := append(append(append([]int(nil), dims[:axis]...), half, 2), dims[axis+1:]...)
	pairs := graph.Reshape(x, pd...)
	a := graph.SliceAxis(pairs, axis+1, graph.AxisRange(0, 1))
	b := graph.SliceAxis(pairs, axis+1, graph.AxisRange(1, 2))
	s := scan(graph.Add(a, b), axis) // inclusive sums of the pairs
	out := graph.Concatenate([]*graph.Node{graph.Sub(s, b), s}, axis+1)
	od := append([]int(nil), dims...)
	od[axis] = 2 * half
	out = graph.Reshape(out, od...)
	if 2*half != m {
		out = graph.SliceAxis(out, axis, graph.AxisRange(0, m))
	}
	return out
}

// buildSplit is the split-search graph of nc node slots (nc from keys'
// shape): inputs codesOff [n·p] int32 (each value's histogram entry),
// slot [T,n] int32, counts [T,n] int64 (each row's weight in its tree:
// bootstrap count times sample weight), target ([n] int64 yq or [n] int32
// class), base (int32 scalar: the first global slot of the chunk), keys
// ([nc,p] uint64 feature keys, or [nc,1] when every feature is examined),
// and for the one-hot variant the [n, E] code indicator. Outputs per
// slot: ok, feature, bin, missing-left (int32), gain (float64), left
// statistics and node totals ([nc, stride] int64).
//
// Histograms are laid out [stride, entry, slot], the entries group after
// group (g.groups): in a group every feature has b positions (its real
// bins first, the missing bin last, empty ones between), so per-feature
// prefix sums, missing statistics and totals are slices and broadcasts,
// with no gathers; the best split is combined across groups.
func (g *grower) buildSplit(in []*graph.Node) []*graph.Node {
	codesOff, slot, counts, target, base, keys := in[0], in[1], in[2], in[3], in[4], in[5]
	gr := slot.Graph()
	nc := keys.Shape().Dimensions[0]
	T, n, p, E, q := g.trees, g.n, g.p, g.e, g.q
	pr := g.pr
	i32 := func(v int) *graph.Node { return graph.Const(gr, int32(v)) }
	i64 := func(v int64) *graph.Node { return graph.Const(gr, v) }
	toF := func(x *graph.Node) *graph.Node { return graph.ConvertDType(x, dtypes.Float64) }
	lastAxis := func(x *graph.Node, lo, hi int) *graph.Node {
		return graph.SliceAxis(x, x.Rank()-1, graph.AxisRange(lo, hi))
	}

	// Row statistics, one [T,n] int64 array per component: n (1 when
	// drawn), w, then the sums (w·yq, or w per class).
	w := counts
	drawn := graph.ConvertDType(graph.GreaterThan(counts, i64(0)), dtypes.Int64)
	stats := []*graph.Node{drawn, w}
	if pr.Class != nil {
		cls := graph.BroadcastToDims(graph.ExpandAxes(target, 0), T, n)
		for c := 0; c < q-2; c++ {
			stats = append(stats, graph.Where(graph.Equal(cls, i32(c)), w, i64(0)))
		}
	} else {
		stats = append(stats, graph.Mul(w, graph.ExpandAxes(target, 0)))
	}

	// Histograms: one [p, B, nc] int64 array per component.
	local := graph.Sub(slot, base)
	active := graph.LogicalAnd(graph.GreaterOrEqual(local, i32(0)), graph.LessThan(local, i32(nc)))
	h := make([]*graph.Node, q)
	if g.hist == OneHotHistogram {
		// B[i, s, q] = Σ_t [slot(t,i) = s]·stats[t,i,q], then
		// h[e, s, q] = Σ_i C[i, e]·B[i, s, q] with C[i, e] = 1 when one of
		// row i's codes is entry e (in[6], built on the host). Both are
		// float64 contractions (simplego's int64 DotGeneral fails): exact
		// because every partial sum is an integer below 2^53 — the
		// regression sums are split into 31-bit limbs and joined in int64.
		sl := graph.Where(active, local, i32(-1))
		slots := graph.Iota(gr, shapes.Make(dtypes.Int32, T, n, nc), 2)
		oh := toF(graph.Equal(graph.BroadcastToDims(graph.ExpandAxes(sl, -1), T, n, nc), slots)) // [T,n,nc]
		st := stats
		if pr.Class == nil {
			two31 := i64(1 << 31)
			wy := stats[2]
			hi := graph.Div(wy, two31)
			lo := graph.Sub(wy, graph.Mul(hi, two31)) // truncated remainder, |lo| < 2^31
			st = []*graph.Node{stats[0], stats[1], lo, hi}
		}
		qq := len(st)
		bsum := graph.DotGeneral(oh, []int{0}, []int{1}, toF(graph.Stack(st, -1)), []int{0}, []int{1}) // [n, nc, qq]
		hf := graph.DotGeneral(in[6], []int{0}, nil, graph.Reshape(bsum, n, nc*qq), []int{0}, nil)
		hi64 := graph.Reshape(graph.ConvertDType(hf, dtypes.Int64), E, nc, qq)
		for k := range qq {
			st[k] = graph.Squeeze(lastAxis(hi64, k, k+1), -1)
		}
		copy(h, st)
		if pr.Class == nil {
			h[2] = graph.Add(graph.Mul(st[3], i64(1<<31)), st[2])
		}
	} else {
		// One scatter of three scalars per (tree, row, feature) into the
		// flat [q, E, nc] histogram: n into component 0, w into 1, and the
		// sum (w·yq, or w into the row's class) into 2 (+ class). Rows
		// outside the chunk add zeros at index 0.
		plane := E * nc
		idx := graph.Add(graph.Mul(graph.Reshape(codesOff, 1, n, p), i32(nc)), graph.ExpandAxes(local, -1)) // [T,n,p]
		idx = graph.Where(graph.BroadcastToDims(graph.ExpandAxes(active, -1), T, n, p), idx, i32(0))
		sumPlane := i32(2 * plane)
		if pr.Class != nil {
			sumPlane = graph.Reshape(graph.Mul(graph.Add(target, i32(2)), i32(plane)), 1, n, 1)
		}
		idx3 := graph.Stack([]*graph.Node{idx, graph.Add(idx, i32(plane)), graph.Add(idx, sumPlane)}, -1) // [T,n,p,3]
		sum := stats[2]
		if pr.Class != nil {
			sum = w
		}
		vals := graph.Where(active, graph.Stack([]*graph.Node{drawn, w, sum}, -1), i64(0)) // [T,n,3]
		upd := graph.BroadcastToDims(graph.ExpandAxes(vals, 2), T, n, p, 3)
		zeros := graph.Zeros(gr, shapes.Make(dtypes.Int64, q*plane))
		hs := graph.ScatterSum(zeros, graph.Reshape(idx3, T*n*p*3, 1), graph.Reshape(upd, T*n*p*3), false, false)
		hs = graph.Reshape(hs, q, E, nc)
		for k := range q {
			h[k] = graph.Reshape(graph.SliceAxis(hs, 0, graph.AxisRange(k, k+1)), E, nc)
		}
	}

	return g.searchSplits(h, keys, nc)
}

// searchSplits is the split search of nc node slots from their histograms
// h (one [E, nc] int64 array per statistic) and feature keys (see
// buildSplit). Outputs per slot: ok, feature, bin, missing-left (int32),
// gain (float64), left statistics and node totals ([nc, stride] int64).
func (g *grower) searchSplits(h []*graph.Node, keys *graph.Node, nc int) []*graph.Node {
	gr := keys.Graph()
	p, B, q := g.p, g.b, g.q
	kcols, width := g.keyColumns()
	var draws *graph.Node // [p, nc]: the random splitter's draws >> 32
	if g.random {
		draws = graph.Transpose(graph.ConvertDType(graph.SliceAxis(keys, 1, graph.AxisRange(kcols, kcols+p)), dtypes.Int64), 0, 1)
	}
	var minW *graph.Node // [nc]: the least weight of each side
	if g.opt.MinWeightFractionLeaf > 0 {
		minW = graph.Reshape(graph.ConvertDType(graph.SliceAxis(keys, 1, graph.AxisRange(width-1, width)), dtypes.Int64), nc)
	}
	keys = graph.SliceAxis(keys, 1, graph.AxisRange(0, kcols))
	pr := g.pr
	i32 := func(v int) *graph.Node { return graph.Const(gr, int32(v)) }
	i64 := func(v int64) *graph.Node { return graph.Const(gr, v) }
	f64 := func(v float64) *graph.Node { return graph.Const(gr, v) }
	toF := func(x *graph.Node) *graph.Node { return graph.ConvertDType(x, dtypes.Float64) }
	full := func(x *graph.Node, dims ...int) *graph.Node { return graph.BroadcastToDims(x, dims...) }
	nml := g.nml
	G := len(g.groups)
	// Per group (features of one width b) and component: the left
	// statistics of "code <= position" for both missing directions
	// [pg,b,nml,nc] and the missing statistics [pg,1,nc]; the node totals
	// [nc] come from the first feature.
	type gstate struct {
		pg, b           int
		cdims           []int
		left            []*graph.Node
		hN, mN, valid0  *graph.Node
		tot5            []*graph.Node
		cand, valid, sc *graph.Node
	}
	gs := make([]*gstate, G)
	tot := make([]*graph.Node, q)
	for gi, fg := range g.groups {
		pg, b := len(fg.feats), fg.b
		st := &gstate{pg: pg, b: b, cdims: []int{pg, b, nml, nc}, left: make([]*graph.Node, q), tot5: make([]*graph.Node, q)}
		gs[gi] = st
		for k := range q {
			hk := h[k]
			if G > 1 {
				hk = graph.SliceAxis(hk, 0, graph.AxisRange(fg.off, fg.off+pg*b))
			}
			hk = graph.Reshape(hk, pg, b, nc)
			cum := scan(hk, 1)
			miss := graph.SliceAxis(hk, 1, graph.AxisRange(b-1, b)) // [pg,1,nc]
			if gi == 0 {
				tot[k] = graph.Reshape(graph.Slice(cum, graph.AxisRange(0, 1), graph.AxisRange(b-1, b)), nc)
			}
			if k == 0 {
				st.hN, st.mN = hk, miss
				// Valid boundaries: a row of the node has this code, and a
				// later real code too (at the missing position the left count
				// is the total, not below the real total).
				realN := full(graph.Sub(graph.Reshape(tot[0], 1, 1, nc), miss), pg, b, nc)
				st.valid0 = graph.LogicalAnd(graph.GreaterThan(hk, i64(0)), graph.LessThan(cum, realN)) // [pg,b,nc]
			}
			if nml == 2 {
				st.left[k] = graph.Stack([]*graph.Node{cum, graph.Add(cum, full(miss, pg, b, nc))}, 2)
			} else {
				st.left[k] = graph.Reshape(cum, st.cdims...)
			}
		}
	}
	for _, st := range gs {
		for k := range q {
			st.tot5[k] = full(graph.Reshape(tot[k], 1, 1, 1, nc), st.cdims...)
		}
	}

	// Features: non-constant in the node, and among the first K of them in
	// the node's priority order (keys and features in group order).
	ncs := make([]*graph.Node, G)
	for gi, st := range gs {
		ncs[gi] = graph.GreaterThan(graph.ReduceMax(graph.ConvertDType(st.valid0, dtypes.Int32), 1), i32(0)) // [pg,nc]
	}
	nonconst := ncs[0]
	if G > 1 {
		nonconst = graph.Concatenate(ncs, 0) // [p,nc]
	}
	selected := nonconst
	if pr.K < p {
		kt := graph.Transpose(keys, 0, 1) // [p,nc]
		kj := graph.BroadcastToDims(graph.ExpandAxes(kt, 1), p, p, nc)
		kjp := graph.BroadcastToDims(graph.ExpandAxes(kt, 0), p, p, nc)
		nc32 := graph.BroadcastToDims(graph.ExpandAxes(graph.ConvertDType(nonconst, dtypes.Int32), 0), p, p, nc)
		before := graph.ReduceSum(graph.Mul(graph.ConvertDType(graph.LessThan(kjp, kj), dtypes.Int32), nc32), 1) // [p,nc]
		selected = graph.LogicalAnd(nonconst, graph.LessThan(before, i32(pr.K)))
	}

	// Scores of the candidates with missing values right (0) and left (1):
	// [pg, b, nml, nc]. Without any missing value in the training set only
	// "right" is searched (the "left" candidates would all be invalid).
	minLeaf := i64(int64(g.opt.MinSamplesLeaf))
	totW := tot[1]
	entropy := g.opt.Task == forest.Classification && g.opt.Criterion == forest.Entropy
	// forest.Fit's entropy proxy Σ_k c_k·ln c_k − w·ln w, the class terms
	// added one after the other in class order (no reduction, whose order
	// would be the backend's), with x·ln x = 0 at x = 0.
	xlogx := func(x *graph.Node) *graph.Node {
		xf := toF(x)
		return graph.Where(graph.GreaterThan(x, i64(0)), graph.Mul(xf, graph.Log(graph.Max(xf, f64(1)))), f64(0))
	}
	eproxy := func(cls []*graph.Node, w *graph.Node) *graph.Node {
		s := xlogx(cls[0])
		for _, c := range cls[1:] {
			s = graph.Add(s, xlogx(c))
		}
		return graph.Sub(s, xlogx(w))
	}
	var best *graph.Node
	row := 0
	for gi, st := range gs {
		pg, b, cdims := st.pg, st.b, st.cdims
		sel := selected
		if G > 1 {
			sel = graph.SliceAxis(selected, 0, graph.AxisRange(row, row+pg))
		}
		row += pg
		cand := graph.LogicalAnd(st.valid0, full(graph.Reshape(sel, pg, 1, nc), pg, b, nc)) // [pg,b,nc]
		if g.random {
			// forest's scanRandom: the one boundary after t, drawn
			// uniformly from [lowest, highest) of the node's real codes
			// (rng.Below: (draw>>32)·(highest−lowest) >> 32), present
			// or not.
			pos := graph.Iota(gr, shapes.Make(dtypes.Int64, pg, b, nc), 1)
			real := graph.LogicalAnd(graph.GreaterThan(st.hN, i64(0)), graph.LessThan(pos, i64(int64(b-1))))
			low := graph.ReduceMin(graph.Where(real, pos, i64(int64(b))), 1) // [pg,nc]
			high := graph.ReduceMax(graph.Where(real, pos, i64(-1)), 1)      // [pg,nc]
			dr := graph.SliceAxis(draws, 0, graph.AxisRange(row-pg, row))    // [pg,nc]
			span := graph.Max(graph.Sub(high, low), i64(0))
			t := graph.Add(low, graph.Div(graph.Mul(dr, span), i64(1<<32))) // [pg,nc]
			at := graph.Equal(pos, full(graph.Reshape(t, pg, 1, nc), pg, b, nc))
			cand = graph.LogicalAnd(at, full(graph.Reshape(graph.LogicalAnd(sel, graph.GreaterThan(high, low)), pg, 1, nc), pg, b, nc))
		}
		var valid *graph.Node
		if nml == 2 {
			hasMiss := graph.GreaterThan(st.mN, i64(0)) // [pg,1,nc]
			valid = graph.Stack([]*graph.Node{cand, graph.LogicalAnd(cand, full(hasMiss, pg, b, nc))}, 2)
		} else {
			valid = graph.Reshape(cand, cdims...)
		}
		left, tot5 := st.left, st.tot5
		nl, wl := left[0], left[1]
		if g.opt.MinSamplesLeaf > 1 {
			valid = graph.LogicalAnd(valid, graph.LogicalAnd(graph.GreaterOrEqual(nl, minLeaf), graph.GreaterOrEqual(graph.Sub(tot5[0], nl), minLeaf)))
		}
		if minW != nil {
			mw := full(graph.Reshape(minW, 1, 1, 1, nc), cdims...)
			valid = graph.LogicalAnd(valid, graph.LogicalAnd(graph.GreaterOrEqual(wl, mw), graph.GreaterOrEqual(graph.Sub(tot5[1], wl), mw)))
		}
		var score *graph.Node
		switch {
		case entropy:
			var cr []*graph.Node
			for k := 2; k < q; k++ {
				cr = append(cr, graph.Sub(tot5[k], left[k]))
			}
			score = graph.Add(eproxy(left[2:], wl), eproxy(cr, graph.Sub(tot5[1], wl)))
		case pr.Class == nil:
			wlF := toF(graph.Max(wl, i64(1)))
			wrF := toF(graph.Max(graph.Sub(tot5[1], wl), i64(1)))
			sl := left[2]
			fl, fr := toF(sl), toF(graph.Sub(tot5[2], sl))
			score = graph.Add(graph.Mul(graph.Mul(fl, fl), graph.Div(f64(1), wlF)), graph.Mul(graph.Mul(fr, fr), graph.Div(f64(1), wrF)))
		default:
			wlF := toF(graph.Max(wl, i64(1)))
			wrF := toF(graph.Max(graph.Sub(tot5[1], wl), i64(1)))
			var sqL, sqR *graph.Node
			for k := 2; k < q; k++ {
				cl := left[k]
				cr := graph.Sub(tot5[k], cl)
				l2, r2 := graph.Mul(cl, cl), graph.Mul(cr, cr)
				if sqL == nil {
					sqL, sqR = l2, r2
				} else {
					sqL, sqR = graph.Add(sqL, l2), graph.Add(sqR, r2)
				}
			}
			score = graph.Add(graph.Div(toF(sqL), wlF), graph.Div(toF(sqR), wrF))
		}
		st.valid = valid
		st.sc = graph.Where(valid, score, f64(math.Inf(-1)))
		bg := graph.ReduceMax(st.sc, 0, 1, 2) // [nc]
		if gi == 0 {
			best = bg
		} else {
			best = graph.Max(best, bg)
		}
	}
	var parent *graph.Node
	switch {
	case entropy:
		parent = eproxy(tot[2:], totW)
	case pr.Class == nil:
		s := toF(tot[2])
		parent = graph.Div(graph.Mul(s, s), toF(graph.Max(totW, i64(1))))
	default:
		var sqT *graph.Node
		for k := 2; k < q; k++ {
			t2 := graph.Mul(tot[k], tot[k])
			if sqT == nil {
				sqT = t2
			} else {
				sqT = graph.Add(sqT, t2)
			}
		}
		parent = graph.Div(toF(sqT), toF(graph.Max(totW, i64(1))))
	}
	parent = graph.Where(graph.GreaterThan(totW, i64(0)), parent, f64(0))

	// The best candidate: the smallest index (feature·B + position)·nml +
	// direction among those with the best score (B: the widest group).
	big := int32(p * B * nml)
	var pick *graph.Node
	for gi, st := range gs {
		pg, b, cdims := st.pg, st.b, st.cdims
		ci := make([]int32, pg*b*nml)
		for jj, j := range g.groups[gi].feats {
			for c := 0; c < b; c++ {
				for m := 0; m < nml; m++ {
					ci[(jj*b+c)*nml+m] = int32((j*B+c)*nml + m)
				}
			}
		}
		cidx := full(graph.Reshape(graph.Const(gr, ci), pg, b, nml, 1), cdims...)
		isBest := graph.LogicalAnd(st.valid, graph.Equal(st.sc, full(graph.Reshape(best, 1, 1, 1, nc), cdims...)))
		pk := graph.ReduceMin(graph.Where(isBest, cidx, graph.Const(gr, big)), 0, 1, 2) // [nc]
		if gi == 0 {
			pick = pk
		} else {
			pick = graph.Min(pick, pk)
		}
	}
	ok := graph.LessThan(pick, graph.Const(gr, big))
	pick = graph.Min(pick, graph.Const(gr, big-1))
	eStar := graph.Div(pick, i32(nml))
	mlStar := graph.Sub(pick, graph.Mul(eStar, i32(nml)))
	feature := graph.Div(eStar, i32(B))
	bin := graph.Sub(eStar, graph.Mul(feature, i32(B)))
	sIdx := graph.Iota(gr, shapes.Make(dtypes.Int32, nc), 0)
	fg := take(graph.Const(gr, g.fGroup), graph.ExpandAxes(feature, -1))
	fl := take(graph.Const(gr, g.fLocal), graph.ExpandAxes(feature, -1))
	// The chosen candidate's left statistics and missing count, read from
	// its group.
	parts := make([]*graph.Node, q)
	var missN *graph.Node
	for gi, st := range gs {
		pg, b := st.pg, st.b
		size := pg * b * nml * nc
		li := graph.Add(graph.Mul(graph.Add(graph.Mul(graph.Add(graph.Mul(fl, i32(b)), bin), i32(nml)), mlStar), i32(nc)), sIdx)
		li = graph.ExpandAxes(graph.Min(graph.Max(li, i32(0)), i32(size-1)), -1)
		mi := graph.ExpandAxes(graph.Min(graph.Add(graph.Mul(fl, i32(nc)), sIdx), i32(pg*nc-1)), -1)
		inG := graph.Equal(fg, i32(gi))
		mg := take(graph.Reshape(st.mN, pg*nc), mi)
		if gi == 0 {
			missN = mg
		} else {
			missN = graph.Where(inG, mg, missN)
		}
		for k := range q {
			v := take(graph.Reshape(st.left[k], size), li)
			if gi == 0 {
				parts[k] = v
			} else {
				parts[k] = graph.Where(inG, v, parts[k])
			}
		}
	}
	bestLeft := graph.Stack(parts, 1) // [nc,q]
	gain := graph.Sub(best, parent)
	ok = graph.LogicalAnd(ok, graph.GreaterThan(gain, graph.Mul(f64(1e-12), graph.Abs(parent))))
	totV := graph.Stack(tot, 1) // [nc,q]
	// No missing value of the chosen feature in the node: missing values go
	// to the heavier side (left on a tie).
	heavyLeft := graph.GreaterOrEqual(graph.Mul(parts[1], i64(2)), totW)
	ml := graph.Where(graph.GreaterThan(missN, i64(0)), graph.NotEqual(mlStar, i32(0)), heavyLeft)
	b2i := func(x *graph.Node) *graph.Node { return graph.ConvertDType(x, dtypes.Int32) }
	return []*graph.Node{b2i(ok), feature, bin, b2i(ml), gain, bestLeft, totV}
}

// Learner and Predictor plug into package forest's Train and PredictData.
var (
	_ forest.Learner   = Learner{}
	_ forest.Predictor = (*Predictor)(nil)
)
