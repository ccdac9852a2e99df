package cpubackend

// Provenance and changes.
//
// The files of this package, other than doc.go, generate.go, dotgeneral_gemm.go,
// fusion.go, fastmath*.go, reduce_fast.go, broadcast_fast.go, opstats.go,
// rewrite*.go, vecops*.go, gen_vecops.go, dotgeneral_packed.go, transpose_*.go, sum_*.go,
// dotgeneral_transpose.go, dotgeneral_inplace.go, slice_fast.go, scatter_fast.go, panicf.go,
// bf16vec*.go, fusion_bf16.go, logistic_bf16.go, fill_*.go and gotrain's tests, are GoMLX v0.26.0's
// backends/simplego (github.com/gomlx/gomlx, Apache License 2.0; the
// license is in LICENSE beside this file), and its tests; the gen_*.go
// files are written by forks of its generators (internal/cmd, run by
// go generate). UPSTREAM.md lists every file, the upstream commit and how
// to regenerate; scripts/forkdiff.sh shows the diff, in which every changed
// region carries a "gotrain:" comment. The changes:
//
//   - package name cpubackend, backend name "cpu", Name() "gotrain CPU (cpu)";
//   - float32 DotGenerals whose operands are batches of row-major matrices
//     (batch axes leading, contracting axes one block in matching order, in
//     either operand orientation) run as one strided-batch SGEMM of package
//     gemm, without copies (dotgeneral_gemm.go); those whose batch axes
//     sit among the others (attention heads) read in place, each item at
//     its own start (dotgeneral_inplace.go); other float32 DotGenerals
//     (stacks of expert weights) after a transposing copy of the operands
//     (dotgeneral_transpose.go); bfloat16 DotGenerals on gemm's bfloat16
//     products (VDPBF16PS, or widened to float32: exact), summed in float32
//     as simplego does and narrowed as simplego narrows; other dtypes, and all of them under the
//     config "no_gemm", use simplego's code; float32
//     Transpose copies output rows instead of walking elements, and where
//     the contiguous axis moves transposes 8x8 tiles in AVX2 registers
//     (transpose_amd64.s; 16x16 tiles of Go loops without AVX2), large
//     ones (and large row copies) split over the CPUs by rows;
//   - operations schedule their sub-tasks with workersPool.RunNowOrInline,
//     which never blocks a caller holding a worker slot: simplego's
//     WaitToStart there deadlocked graphs with several parallel ops on a
//     small pool (TestParallelOpsDoNotDeadlock reproduces it); the hot
//     paths (fused chains, transposes, the contiguous ScatterSum, and
//     gemm) split their work over internal/parallel's helpers instead,
//     goroutines that spin for a while between calls (a sleeping one took
//     60-120 µs to wake on a 2-vCPU virtual machine);
//   - float32 Sign without branches, and float32 Exp, Logistic and Tanh
//     with an inlined exp (fastmath.go), eight float64 lanes at a time with AVX-512
//     (fastmath_amd64.s, the Go loop's bits), else four with AVX2 (the
//     same bits: the float64 to int64 conversion AVX2 lacks read from the
//     rounding constant's bits): within one unit in the last place of
//     simplego's float64-math results (tested), about 2.5x faster in Go,
//     2.2-2.7x faster again with AVX2 and 4-5x with AVX-512;
//   - fused programs, unfused float32 element-wise operations of same-size
//     or one-element operands (vecops_exec.go) and row sums of reductions
//     run Add, Sub, Mul, Div, Max, Min, Sqrt and Sign with AVX-512 or AVX2
//     loops (vecops_amd64.s, written by gen_vecops.go): the same IEEE
//     operations as the Go loops, tested bit for bit with specials (Max and
//     Min give a NaN where Go does, whose payload Go leaves open); fused
//     programs read a bias broadcast along the leading axes in place, take
//     in intermediates every reader of which is in the chain, write graph
//     outputs read only there as side outputs (an Adam update in one pass),
//     share temporary slots by liveness, and run the chain of a sum over
//     all axes chunk by chunk in the reduction's order (fusion.go); they
//     read a row statistic repeated along trailing axes (a BroadcastInDim
//     or an implicit [b, t, 1] operand) through its operand; bfloat16
//     chains, and mixed ones holding float32<->bfloat16 conversions, widen
//     per chunk and truncate each bfloat16 result, the unfused bits
//     (fusion_bf16.go; one-operation programs and inputs read only by
//     Add/Sub/Mul/Div in single passes with AVX-512);
//   - float32 sums of contiguous elements (and fused sums) take 32
//     running sums, lane l the elements i ≡ l mod 32 in order, combined
//     pairwise (reduce_fast.go; AVX2 in sum_amd64.s, the same additions):
//     simplego sums in order, an addition's latency per element;
//   - float32 ScatterSum of contiguous windows (col2im) a window at a time,
//     in parallel with each element's updates in index order
//     (scatter_fast.go), other scatters a last-axis row at a time;
//   - DotGenerals that multiply the same rhs node (a recurrent weight at
//     every step) read one packing of it per execution
//     (dotgeneral_packed.go, gemm.PackB/SgemmPackedB: the same bits);
//   - at Compile, before fusion, one-hot selections (ReduceSum of a
//     multiply by a one-hot constant, and the sum of their gradients) become
//     block copies and a Concatenate (rewrite.go), and a sum of per-step
//     weight-gradient products Σ_t x_tᵀ·d_t becomes one SGEMM over the
//     stacked operands (rewrite_dotsum.go), and a Transpose of a product's
//     matrix (a weight gradient) becomes the product of the operands
//     swapped (rewrite_transpose.go, the same bits); config "no_rewrite"
//     turns them off;
//   - contiguous reductions, broadcasting binary operations,
//     BroadcastInDim (a value repeated along trailing axes filled eight
//     stores at a time), unit-stride Slices and Gathers (contiguous runs at a
//     time) without per-element index iterators, and released
//     buffers kept in free lists that garbage collections do not empty;
//   - optional per-operation timings (SetOpStats, OpStats, WriteOpStats);
//   - GoMLX's internal exceptions.Panicf replaced by panicf; a vet-reported
//     format argument order fixed; the parallelism option no longer prints.
