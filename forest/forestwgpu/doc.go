// Package forestwgpu grows and evaluates gotrain's random forests on
// WebGPU, from the GOOS=js GOARCH=wasm build (a browser tab, or Node with
// the npm package webgpu), with WGSL compute shaders, and gives the trees
// forest.Fit grows, node for node, and its predictions, bit for bit.
//
// The device runs the integer work (wgsl/):
//
//   - bootstrap counts (bootstrap.wgsl): one invocation per (tree, draw)
//     computes core.BootstrapCounts's counter-based draw — SplitMix64's
//     64-bit mixing emulated on pairs of u32 words (u64.wgsl: WGSL has no
//     64-bit integers) — and counts it with a 32-bit atomic add;
//   - node histograms (histogram.wgsl): per frontier node and (feature,
//     bin), the distinct rows n, the weight w and the sums (Σ w·yq, the
//     fixed-point target, or the weighted class counts), each a 64-bit
//     integer in two u32 words added with 32-bit atomics and an explicit
//     carry (the low word's atomicAdd returns the value before it, so a
//     wrap is seen once and carried). The totals are the CPU's int64 sums
//     exactly, in any order of the additions;
//   - the row partition (partition.wgsl): every (tree, row) moves to its
//     child's frontier slot;
//   - prediction's batched traversal (traverse.wgsl): one invocation per
//     (row, tree) walks to its leaf.
//
// The host — the wasm module, in Go — does every float64: the split
// search over the histograms read back (features in the node's
// counter-based order, the scores and their argmax by forest.Fit's
// expressions and tie rules, the gain test), the node values, the OOB
// score, and the predictions' sums of leaf values in tree order. Of two
// sibling nodes that both split further, the device builds the histogram
// of the one with fewer rows and the host derives the other as the
// parent's minus it, in int64 (exact).
//
// Categorical features are refused with the reason, as by the graph
// learner. The entropy criterion is not refused: its logarithms are Go's
// math.Log, computed on the host.
//
// The host side is package forest/internal/level, which the data-parallel
// learner (forest/forestdist) shares. Only the documentation, the host's
// adapter and the WGSL sources build outside js/wasm; the host side is
// tested there against forest.Fit with
// the device stages computed on the CPU (host_test.go), and the kernels
// under Node on WebGPU (gpu_test.go; docs/WEBGPU.md).
package forestwgpu
