// Package forestgraph runs parts of the random-forest learner of package
// forest as GoMLX graphs, so that they run on any GoMLX backend (an XLA GPU
// or TPU, XLA's CPU plugin, or the pure-Go simplego) and give the same bits
// as the native CPU code:
//
//   - Bootstrap computes the bootstrap sample counts of a batch of trees in
//     one graph, from the same counter-based stream as
//     forest.BootstrapCounts (package rng, as graph operations in package
//     rng/rnggraph): the counts are identical for the same seed and tree
//     index. The draws are 64-bit integer arithmetic and the counts an
//     integer scatter-add, so the result cannot depend on the backend or on
//     the order in which it adds.
//   - Predictor is batch inference: a tensorised traversal of a fitted
//     forest's trees whose predictions equal forest.Forest.PredictValues and
//     Predict bit for bit.
//
// Growing trees on graphs (histograms and split search) is not built yet.
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
package forestgraph
