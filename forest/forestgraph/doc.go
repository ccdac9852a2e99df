// Package forestgraph runs parts of the random-forest learner of package
// forest as GoMLX graphs, so that they run on any GoMLX backend (an XLA GPU
// or TPU, XLA's CPU plugin, or the pure-Go simplego) and give the same bits
// as the native CPU code:
//
//   - Fit grows a whole forest as graphs, level by level, and returns the
//     trees forest.Fit grows, node for node (Feature, Bin, Threshold,
//     MissingLeft, Left, Value, Samples, Weight, Gain), for the same
//     *data.Dataset and options (the entropy criterion on simplego only,
//     see below), sample and class weights, min_weight_fraction_leaf and
//     the random splitter included: each row's weight in its tree, the
//     feature keys, the random splitter's draws and each tree's least
//     leaf weight come from the host. Learner is Fit as a forest.Learner,
//     for forest.Train.
//   - Predictor is batch inference: a tensorised traversal of a fitted
//     forest's trees whose predictions equal forest.Forest.PredictValues and
//     Predict bit for bit; it is a forest.Predictor, for
//     forest.Forest.PredictData.
//   - Bootstrap computes the bootstrap sample counts of a batch of trees in
//     one graph, from the same counter-based stream as the native learner
//     (package rng, as graph operations in package rng/rnggraph): the
//     counts are identical for the same seed and tree index. The draws are
//     64-bit integer arithmetic and the counts an integer scatter-add, so
//     the result cannot depend on the backend or on the order in which it
//     adds.
//
// The package does not choose a device: the caller passes a
// backends.Backend (from package device: device.Select, device.Open) and,
// in GrowOptions and Options, the device number. See the example of Fit.
// LearnerOn and PredictOn take the selected engine itself (Engine, which
// package device's *Engine satisfies): the native code of package forest
// on a native engine, this package's graphs on the others.
//
// # Growing trees on graphs
//
// The host-side preparation is forest.Fit's own (binning, the
// fixed-point target, class labels). The bootstrap counts of a batch of
// trees come from the Bootstrap graph. Then, per level, for the frontier
// nodes of every tree of the batch (a flat axis of node slots, padded to a
// power of two or 1.5 times one, and cut into chunks that fit
// GrowOptions.MaxDeviceBytes), one graph execution:
//
//   - builds the histograms [stride, feature, bin position, slot] (the
//     features in at most four groups of similar bin counts, every feature
//     of a group padded to the group's widest) of the
//     int64 statistics n (distinct rows), w (bootstrap weight) and the sums
//     (Σ w·yq, or weighted class counts) with one int64 ScatterSum of three
//     values per (tree, row, feature) — or, with OneHotHistogram, two float64
//     contractions that stay exact (integers below 2^53, the regression
//     sums split in 31-bit limbs);
//   - takes prefix sums over the bins (a pair-wise scan, exact in int64),
//     the missing-value statistics and the node totals;
//   - marks the candidate splits as forest.Fit does (bins where a row of the
//     node falls and a later one does too; MinSamplesLeaf on n on both
//     sides; missing values right and, when the node has some, left), picks
//     the first forest.Options.MaxFeatures non-constant features in the
//     node's order by (FeaturePriority>>16, j) (the keys are
//     computed on the host from the node keys, ChildKey; both in
//     forest/internal/core, as in forest.Fit), scores
//     every candidate, and keeps the best with forest.Fit's tie-breaking
//     (highest score, then lowest feature, lowest bin, missing right first)
//     as the minimum of an integer candidate index among the maxima;
//   - applies the gain test (gain > 1e-12·|parent proxy|) and the rule for
//     missing values in a node that saw none (the heavier side, left on a
//     tie).
//
// The host reads the decisions (a few numbers per node), applies the leaf
// rules (MaxDepth, MinSamplesSplit, 2·MinSamplesLeaf on distinct rows),
// computes node values as forest.Fit does and appends the children in
// breadth-first order — the order forest.Fit emits; a second graph moves
// each row to its child's slot for the next level. Shapes depend only on
// the padded slot count, so a forest compiles a handful of graphs (cached
// per shape), not one per level. GrowReport gives the compile time apart
// from the rest and the peak histogram and scatter buffer sizes.
//
// Which rows the scatter walks is GrowOptions.Subtract. SubtractOff walks
// every (tree, row) of the batch per chunk, rows in leaves and out of the
// bag adding zeros. SubtractCompact (the default) reads each row's slot
// back after the move and gives the graph the list of (tree, row) entries
// in the chunk's nodes, padded to a power of two or 1.5 times one (at most
// trees × rows; padding adds zeros at entry 0). SubtractOn is the
// parent-minus-sibling trick on top of that list: of two sibling frontier
// nodes only the one with fewer distinct rows (the left one on a tie, as
// forest.Fit) is scattered, and the other's histogram is its parent's, kept
// on the device from the previous level as an output [slots, stride·E],
// minus the sibling's — int64, so exact. A level's histograms are kept
// when they fit an eighth of MaxDeviceBytes; a node is derived when its
// sibling is in the same chunk and its parent in the kept chunk the most
// derivable nodes of the chunk use; the others are scattered.
// GrowReport.ScatterRows and DerivedNodes count the work. All three give
// the same trees; on simplego the subtraction's histogram-sized gathers and
// transposes cost more than the scatter it saves, so the compacted list
// without it is the default (docs/BENCHMARKS.md).
//
// # The grower's guarantee
//
// The trees are identical to forest.Fit's because every decision is taken
// from the same integers by the same float64 expressions:
//
//   - Histograms, prefix sums and totals are int64 sums: exact, so the
//     order of the additions (a GPU's atomics, a backend's reduction
//     order) cannot matter.
//   - Scores are float64 expressions of those integers, the ones the CPU
//     learner uses: squared error float64(fl·fl)·(1/w) + float64(fr·fr)·
//     (1/(tw−w)) with fl, fr converted from int64 (each product and the
//     reciprocal rounded, then one addition); Gini float64(Σc²)/w with Σc²
//     summed in int64; the parent's proxy float64(s·s)/w. Every operation
//     is a separate, correctly rounded IEEE operation on simplego. On XLA
//     this holds as long as XLA does not contract a multiply and an add
//     into a fused multiply-add nor reassociate (no fast-math options, e.g.
//     xla_cpu_enable_fast_math, and no FMA contraction of these float64
//     expressions) and does not rewrite x·(1/w) into x/w or the reverse
//     (an algebraic simplification that would change the rounding); none of
//     this has been checked on a GPU here.
//   - Ties are broken by integer candidate indices, and feature order by
//     integer keys.
//
// Entropy (Σ c·ln c − w·ln w, the class terms added one after the other in
// class order, as forest.Fit does) needs the backend's float64 Log to be
// Go's math.Log. simplego's is (it calls math.Log per element) and the
// tests show the same trees; on any other backend (XLA's Log is its own
// approximation) Fit refuses entropy with an error.
//
// Histogram memory per execution is slots × Σ_groups features × b ×
// stride × 8 bytes (b: a group's most bins plus the missing bin); the split
// search keeps about eight arrays of that size. The scatter's buffers
// take about trees × rows × features × 40 bytes (three int64 updates and
// their int32 indices per (tree, row, feature)).
//
// # The predictor's guarantee
//
// The predictions are identical to the CPU predictor's because the graph
// makes the same decisions and adds the same numbers in the same order:
//
//   - Decisions. The CPU predictor bins each value and compares bin codes;
//     the graph compares the raw float64 value with the split's bin edge
//     (code(x) <= b exactly when x <= Edges[j][b]), after rewriting −0 so
//     that float order matches the integer key order the CPU binner
//     searches in (see tables.go). NaN goes to the node's missing
//     direction. Both are comparisons of the same float64 values, exact on
//     every IEEE backend.
//   - Sums. The CPU adds each row's leaf values in tree order, starting
//     from 0, then multiplies by 1/trees. The graph gathers the leaf values
//     of all trees and adds them with an unrolled chain of element-wise
//     additions in tree order (tree 0's −0 values are stored as +0, which
//     is 0 + x), then multiplies by the same float64 constant. It uses no
//     ReduceSum, whose order of additions a backend may choose (simplego
//     walks in flat order; XLA may split a reduction into parallel partial
//     sums, as GPU reductions do).
//
// On XLA the chain holds as long as XLA does not reassociate floating-point
// additions, which it does only under fast-math options (off by default,
// e.g. xla_cpu_enable_fast_math); no addition takes a product, so no fused
// multiply-add can be formed, and the final multiply feeds no addition.
// float64 is used throughout, as on the CPU. The tests check the identity
// on simplego; it has not been checked on a GPU here.
//
// # The graphs on a device
//
// A batch of B rows × F features walks D levels (D: the deepest leaf). Per
// level, both strategies do two gathers of B·T elements (T trees): the
// node record (feature with its NaN direction, threshold and, for Gather,
// the right child; the left child is the next node, as in the CPU
// predictor's depth-first layout) and the row's value at that feature,
// then element-wise compares and a select. Perfect reads per-level tables
// and computes the next slot as 2k+right; Gather reads one node table of
// the whole forest. The leaf values are one gather of B·T·outputs values,
// then T−1 additions of B·outputs values. The tables are uploaded once and
// reused by every batch (TableBytes); a batch's intermediate values take
// about B·(16F + T·(56 + 8·outputs) + 16·outputs) bytes at the widest
// step (BatchBytes), so the batch size bounds device memory. Every
// operation is element-wise or a gather, which XLA on a GPU compiles into
// fused gather and element-wise kernels, level after level; nothing runs
// as a scatter or atomics (the bootstrap's counts are one integer
// scatter-add, exact in any order).
//
// Growth on an XLA GPU: the histogram is the one scatter — an int64
// ScatterSum that a GPU runs with atomic adds, exact in any order; the
// prefix sums, scores and arg-max are element-wise operations, slices and
// reductions over [features × bins × slots] that XLA fuses, and the row
// moves are gathers. Each level is two executions plus a few numbers per
// node to the host.
package forestgraph
