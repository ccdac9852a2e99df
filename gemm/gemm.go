// Package gemm multiplies float32 (and bfloat16: GemmBF16) matrices fast on the CPU: a BLIS/GotoBLAS-style
// SGEMM with packed, cache-sized blocks of A and B, register-blocked micro-kernels
// in Go assembly for AVX-512 (14x32) and AVX2+FMA (6x16), and a portable Go
// micro-kernel (2x4), chosen at run time from the CPU's features, which the
// GOTRAIN_CPU environment variable can cap (avx2, generic: package
// internal/cpufeat).
//
// Matrices are row-major with BLAS semantics:
//
//	C = alpha·op(A)·op(B) + beta·C
//
// where op(A) is m×k (A is stored k×m when transA is set), op(B) is k×n (B is
// stored n×k when transB is set) and C is m×n; lda, ldb and ldc are the distances
// in elements between consecutive rows. With beta = 0 the previous contents of C
// are ignored (NaNs included); with alpha = 0 or k = 0, A and B are not read.
//
// Large products run on the caller and the helper goroutines of package
// internal/parallel (GOMAXPROCS in all, as read at the first call), split over blocks of rows or columns of C, or, when C is
// small and k long, over slices of k whose number depends on the sizes alone
// (partial products summed in slice order), never over anything that depends
// on the thread count, so every element is summed in the same order whatever
// the number of threads: results are bit-identical for any thread count. Small products run on the calling
// goroutine. Calls are safe from many goroutines at once; in steady state they
// allocate nothing.
//
// C must not overlap A or B: C is written while A and B are still read.
package gemm

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"sync"
	"unsafe"
)

// ErrBadArgs is wrapped by every error about dimensions, leading dimensions,
// strides or slice lengths.
var ErrBadArgs = errors.New("gemm: invalid arguments")

// kernel is a micro-kernel with the cache blocking it runs under.
type kernel struct {
	name   string
	mr, nr int // register block: rows of A, columns of B per call
	kc     int // depth of a packed block
	mc     int // rows of A per packed block (multiple of mr)
	nc     int // columns of B per packed block (multiple of nr)
	// fn computes C[0:mr, 0:nr] += alpha·A·B from packed micro-panels, or
	// C = alpha·A·B without reading C when overwrite is set.
	fn func(kc int, a, b, c *float32, ldc int, alpha float32, overwrite bool)
	// rows[h], when set, computes only the first h rows of a tile (h < mr),
	// for the last rows of C; it sums each element exactly as fn does.
	rows    []func(kc int, a, b, c *float32, ldc int, alpha float32, overwrite bool)
	asmPack bool // pack with the AVX-512 routines
	// avx2Pack packs the panels read across rows (A's 6-row panels, a
	// transposed B's 16-column panels) with the AVX2 transposes.
	avx2Pack bool
	pool     sync.Pool // *workspace
}

// kernelGo is the portable micro-kernel.
var kernelGo = &kernel{name: "go", mr: 2, nr: 4, kc: 256, mc: 128, nc: 2048, fn: kernGo2x4}

// active is the micro-kernel in use: the fastest the CPU supports.
var active = defaultKernel()

func defaultKernel() *kernel {
	if ks := asmKernels(); len(ks) > 0 {
		return ks[0]
	}
	return kernelGo
}

// Path names the micro-kernel in use: "avx512", "avx2" or "go".
func Path() string { return active.name }

// setPath forces a micro-kernel by name (tests and benchmarks); it fails if the
// CPU or the build does not support it.
func setPath(name string) error {
	for _, k := range append(asmKernels(), kernelGo) {
		if k.name == name {
			active = k
			return nil
		}
	}
	return fmt.Errorf("gemm: path %q is not available on this CPU or build", name)
}

// paths lists the micro-kernels available here, fastest first.
func paths() []string {
	var names []string
	for _, k := range append(asmKernels(), kernelGo) {
		names = append(names, k.name)
	}
	return names
}

// kernGo2x4 is the portable 2x4 micro-kernel: its 8 accumulators and 6 inputs
// fit the 15 float registers Go allocates on amd64 (a 4x4 block spills), and
// the panels are walked by reslicing so that the loop carries no bounds checks.
func kernGo2x4(kc int, ap, bp, cp *float32, ldc int, alpha float32, overwrite bool) {
	a := unsafe.Slice(ap, kc*2)
	b := unsafe.Slice(bp, kc*4)
	var c00, c01, c02, c03, c10, c11, c12, c13 float32
	for len(a) >= 2 && len(b) >= 4 {
		a0, a1 := a[0], a[1]
		b0, b1, b2, b3 := b[0], b[1], b[2], b[3]
		c00 += a0 * b0
		c01 += a0 * b1
		c02 += a0 * b2
		c03 += a0 * b3
		c10 += a1 * b0
		c11 += a1 * b1
		c12 += a1 * b2
		c13 += a1 * b3
		a, b = a[2:], b[4:]
	}
	c := unsafe.Slice(cp, ldc+4)
	r0 := c[0:4:4]
	r1 := c[ldc : ldc+4 : ldc+4]
	if overwrite {
		r0[0], r0[1], r0[2], r0[3] = alpha*c00, alpha*c01, alpha*c02, alpha*c03
		r1[0], r1[1], r1[2], r1[3] = alpha*c10, alpha*c11, alpha*c12, alpha*c13
		return
	}
	r0[0] += alpha * c00
	r0[1] += alpha * c01
	r0[2] += alpha * c02
	r0[3] += alpha * c03
	r1[0] += alpha * c10
	r1[1] += alpha * c11
	r1[2] += alpha * c12
	r1[3] += alpha * c13
}

// problem is one validated call.
type problem struct {
	transA, transB   bool
	m, n, k          int
	alpha, beta      float32
	a, b, c          []float32
	lda, ldb, ldc    int
	batch            int
	strideA, strideB int
	strideC          int
	offA, offB       []int    // where each item's A and B start (SgemmBatchAt), else nil: i·strideA, i·strideB
	splitN           bool     // chunks split columns (else rows) of C
	chunks           int      // chunks per batch item
	tilesM, tilesN   int      // register tiles along m and n
	shared           *sharedB // B packed once for all chunks, or nil
	prePacked        bool     // shared is the caller's (SgemmPackedB): keep it
	packParts        int      // column parts of each depth block of a shared B being packed
	kr               *kernel
}

// Sgemm computes C = alpha·op(A)·op(B) + beta·C for row-major matrices: op(A) is
// m×k (stored k×m if transA), op(B) is k×n (stored n×k if transB), C is m×n. It
// returns an error wrapping ErrBadArgs for negative sizes, leading dimensions
// smaller than a row or slices too short; C is then left untouched.
func Sgemm(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) error {
	return SgemmBatch(transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, 1, 0, 0, 0)
}

// SgemmBatch computes batch independent products C_i = alpha·op(A_i)·op(B_i) +
// beta·C_i with A_i = a[i·strideA:], B_i = b[i·strideB:] and C_i = c[i·strideC:]
// (the strided batches of DotGeneral). A stride of 0 for A or B reuses the same
// matrix for every item; the items of C must not overlap. Errors wrap ErrBadArgs.
func SgemmBatch(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int, batch int, strideA, strideB, strideC int) error {
	if err := checkArgs(transA, transB, m, n, k, len(a), lda, len(b), ldb, len(c), ldc, batch, strideA, strideB, strideC); err != nil {
		return err
	}
	if batch == 0 || m == 0 || n == 0 {
		return nil
	}
	if batch == 1 && alpha != 0 {
		if s := kSlices(m, n, k); s > 1 {
			sgemmSplitK(s, transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
			return nil
		}
	}
	runProblem(problem{
		transA: transA, transB: transB, m: m, n: n, k: k, alpha: alpha, beta: beta,
		a: a, b: b, c: c, lda: lda, ldb: ldb, ldc: ldc,
		batch: batch, strideA: strideA, strideB: strideB, strideC: strideC,
		kr: active,
	})
	return nil
}

// runProblem runs a validated problem with a pooled problem value.
func runProblem(p problem) {
	pr := problemPool.Get().(*problem)
	*pr = p
	run(pr)
	*pr = problem{}
	problemPool.Put(pr)
}

// kSlices returns the number of slices k is split into for a product whose
// C is small and k long (the weight gradients of convolutions and dense
// layers: C of a few thousand elements, k of the batch times the length),
// 1 for no split. Splitting C's rows or columns there leaves a thread little
// to do or repacks the long operands once per chunk; slices of k are
// independent products whose partial C are then summed. It depends on the
// sizes alone, never on the number of threads, so results stay the same for
// any thread count.
func kSlices(m, n, k int) int {
	const minSlice = 4096
	if k < 2*minSlice || m*n > 1<<15 || k < 16*max(m, n) {
		return 1
	}
	return min(8, k/minSlice)
}

// tiled rounds n up to a multiple of the tile size t.
func tiled(n, t int) int { return (n + t - 1) / t * t }

// splitBufs recycles the partial products of sgemmSplitK.
var splitBufs = sync.Pool{New: func() any { return new([]float32) }}

// sgemmSplitK computes C = alpha·op(A)·op(B) + beta·C as the sum of s
// products over consecutive slices of k (the last one takes the remainder),
// each into its own m×n buffer, run in parallel as a batch; the partial
// products are then added in slice order, the same order for any thread
// count.
func sgemmSplitK(s int, transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	l := k / s
	rem := k - s*l
	parts := s
	if rem > 0 {
		parts++
	}
	bp := splitBufs.Get().(*[]float32)
	if cap(*bp) < parts*m*n {
		*bp = make([]float32, parts*m*n)
	}
	tmp := (*bp)[:parts*m*n]
	// Where slice i of k starts in A (k×m rows when transposed, else
	// columns) and in B (n×k columns when transposed, else rows).
	offA, offB := lda, 1
	if !transA {
		offA = 1
	}
	if !transB {
		offB = ldb
	}
	kr := active
	// The partial products are C or, when the register tiles cover C^T with
	// less padding, C^T = op(B)^T·op(A)^T (n×m): the tiny partial products
	// are then read transposed when they are added.
	swap := tiled(n, kr.mr)*tiled(m, kr.nr) < tiled(m, kr.mr)*tiled(n, kr.nr)
	p := problem{transA: transA, transB: transB, m: m, n: n, alpha: 1, a: a, b: b, lda: lda, ldb: ldb, kr: kr}
	if swap {
		p.transA, p.transB, p.m, p.n, p.a, p.b, p.lda, p.ldb = !transB, !transA, n, m, b, a, ldb, lda
		offA, offB = offB, offA
	}
	p.ldc = p.n
	full := p
	full.k, full.c, full.batch = l, tmp, s
	full.strideA, full.strideB, full.strideC = l*offA, l*offB, m*n
	runProblem(full)
	if rem > 0 {
		last := p
		last.k, last.c, last.batch = rem, tmp[s*m*n:], 1
		last.a, last.b = p.a[s*l*offA:], p.b[s*l*offB:]
		runProblem(last)
	}
	// Element (i, j) of a partial product: at i·n+j, or j·m+i when swapped.
	si, sj := n, 1
	if swap {
		si, sj = 1, m
	}
	for i := range m {
		row := c[i*ldc : i*ldc+n]
		for j := range row {
			e := i*si + j*sj
			sum := tmp[e]
			for p := 1; p < parts; p++ {
				sum += tmp[p*m*n+e]
			}
			if beta == 0 {
				row[j] = alpha * sum
			} else {
				row[j] = alpha*sum + beta*row[j]
			}
		}
	}
	splitBufs.Put(bp)
}

var problemPool = sync.Pool{New: func() any { return new(problem) }}

// checkMatrix checks a stored rows×cols matrix with leading dimension ld, repeated
// batch times every stride elements, against the length of s.
func checkMatrix(name string, s []float32, rows, cols, ld, batch, stride int) error {
	return checkMatrixLen(name, len(s), rows, cols, ld, batch, stride)
}

// checkMatrixLen is checkMatrix for a slice of length n, of any element type.
func checkMatrixLen(name string, n, rows, cols, ld, batch, stride int) error {
	if ld < max(1, cols) {
		return fmt.Errorf("%w: ld%s=%d is smaller than its %d columns", ErrBadArgs, name, ld, cols)
	}
	if rows == 0 || cols == 0 || batch == 0 {
		return nil
	}
	// need = (rows-1)·ld + cols + (batch-1)·stride, refused before it overflows.
	if rows > 1 && ld > (math.MaxInt-cols)/(rows-1) {
		return fmt.Errorf("%w: %s of %dx%d with ld %d is too large", ErrBadArgs, name, rows, cols, ld)
	}
	need := (rows-1)*ld + cols
	if batch > 1 {
		if stride > (math.MaxInt-need)/(batch-1) {
			return fmt.Errorf("%w: %s batch %d with stride %d is too large", ErrBadArgs, name, batch, stride)
		}
		need += (batch - 1) * stride
	}
	if n < need {
		return fmt.Errorf("%w: %s has %d elements, needs %d (%dx%d, ld %d, batch %d, stride %d)",
			ErrBadArgs, name, n, need, rows, cols, ld, batch, stride)
	}
	return nil
}

// Work below parallelThreshold multiply-adds (m·n·k summed over the batch) runs
// on the calling goroutine. With goroutines woken per call, BenchmarkSgemmSmall
// measured two threads slower than one at 96³ and faster from 128³ on; with
// package parallel's spinning helpers two threads are faster from 96³ on
// (51 → 46 µs), and the MLP's 256×512×10 products took 103 → 70 µs and
// 512×10×256 158 → 98 µs. Tasks are not made smaller than minTaskWork.
var (
	parallelThreshold = 2 * 32 * 32 * 256
	minTaskWork       = 32 * 32 * 256
)

// threads is the number of goroutines a call may use (tests change it).
var threads = runtime.GOMAXPROCS(0)

// run splits pr into tasks and executes them on the pool.
func run(pr *problem) {
	kr := pr.kr
	pr.tilesM = (pr.m + kr.mr - 1) / kr.mr
	pr.tilesN = (pr.n + kr.nr - 1) / kr.nr
	// Multiply-adds per item, saturated (lengths bound m·n, not m·n·k).
	work := pr.m * pr.n
	if k := max(pr.k, 1); work > math.MaxInt/k/max(pr.batch, 1) {
		work = math.MaxInt / max(pr.batch, 1)
	} else {
		work *= k
	}
	nt := threads
	pr.chunks = 1
	pr.splitN = pr.tilesN >= pr.tilesM
	shareB := false
	if nt > 1 && work*pr.batch >= parallelThreshold && pr.batch < 2*nt {
		// Few items: split each over rows or columns of C. Two chunks per
		// thread let a thread that is slowed down hand work to the other.
		// Splitting columns, every chunk packs all of A again; splitting rows,
		// either every chunk packs all of B again or, for a single item, the
		// caller packs B once before the chunks start (serial, but only once).
		// Pick the cheapest in wall time. The AVX-512 and AVX2 packing runs at
		// about the same speed either way; the Go code packs panels read across
		// rows (A unless transposed, B if transposed) about 3x slower than
		// copies.
		want := min(2*nt, max(1, work/minTaskWork))
		costA, costB := 1, 1
		if !kr.asmPack && !kr.avx2Pack { // the Go code packs across rows about 3x slower
			if !pr.transA {
				costA = 3
			}
			if pr.transB {
				costB = 3
			}
		}
		costN := (want - 1) * pr.m * costA // ×k/nt: repeated packing of A
		costM := (want - 1) * pr.n * costB // ×k/nt: repeated packing of B
		canShare := pr.batch == 1 && pr.k > 0 && pr.alpha != 0 && pr.k*pr.tilesN*kr.nr <= maxSharedB
		if canShare {
			costM = (nt - 1) * pr.n * costB // ×k/nt: B packed by one thread
		}
		if pr.prePacked {
			// B is packed already: splitting rows costs nothing, splitting
			// columns repacks A per chunk; the side with more tiles balances
			// the chunks better, and few rows make A cheap to repack.
			costM, costN = 0, 0
		}
		switch {
		case pr.prePacked && pr.tilesM < 2*want && pr.tilesN >= pr.tilesM:
			pr.splitN = true
		default:
			pr.splitN = splitColumns(pr.tilesM, pr.tilesN, want, costN < costM)
		}
		tiles := pr.tilesM
		if pr.splitN {
			tiles = pr.tilesN
		}
		pr.chunks = max(1, min(want, tiles))
		shareB = canShare && !pr.splitN && pr.chunks > 1
	}
	tasks := pr.batch * pr.chunks
	if nt <= 1 || tasks == 1 || work*pr.batch < parallelThreshold {
		ws := kr.getWorkspace()
		for t := 0; t < tasks; t++ {
			pr.task(ws, t)
		}
		kr.pool.Put(ws)
		return
	}
	if shareB && !pr.prePacked {
		pr.shared = packSharedB(pr)
	}
	parallel(pr, tasks, min(nt, tasks))
	if pr.shared != nil && !pr.prePacked {
		sharedPool.Put(pr.shared)
		pr.shared = nil
	}
}

// splitColumns tells whether want chunks of a product with tilesM×tilesN
// register tiles split C's columns: when only the columns have want
// tiles; not when only the rows do; the side with more tiles when neither
// does; cheaper otherwise (both have enough).
func splitColumns(tilesM, tilesN, want int, cheaper bool) bool {
	switch {
	case tilesM < want && tilesN < want:
		return tilesN >= tilesM
	case tilesM < want:
		return true
	case tilesN < want:
		return false
	}
	return cheaper
}

// task runs chunk t%chunks of batch item t/chunks.
func (pr *problem) task(ws *workspace, t int) {
	item, ch := t/pr.chunks, t%pr.chunks
	i0, i1, j0, j1 := 0, pr.m, 0, pr.n
	if pr.chunks > 1 {
		// Chunk boundaries fall on register tiles, so the tiling of C, and with
		// it the result, does not depend on the number of chunks.
		if pr.splitN {
			j0 = min(pr.n, (pr.tilesN*ch/pr.chunks)*pr.kr.nr)
			j1 = min(pr.n, (pr.tilesN*(ch+1)/pr.chunks)*pr.kr.nr)
		} else {
			i0 = min(pr.m, (pr.tilesM*ch/pr.chunks)*pr.kr.mr)
			i1 = min(pr.m, (pr.tilesM*(ch+1)/pr.chunks)*pr.kr.mr)
		}
	}
	if i0 >= i1 || j0 >= j1 {
		return
	}
	oa, ob := item*pr.strideA, item*pr.strideB
	if pr.offA != nil {
		oa, ob = pr.offA[item], pr.offB[item]
	}
	ws.block(pr, oa, ob, item*pr.strideC, i0, i1, j0, j1)
}
