package gemm

import (
	"fmt"
	"math"
	"sync"
	"unsafe"
)

// bfloat16 products.
//
// GemmBF16Batch multiplies matrices of bfloat16 values (their bits, as
// uint16) into float32. On a CPU with AVX-512 BF16 (and GOTRAIN_CPU not
// lower than avx512) it runs a 14x32 micro-kernel of VDPBF16PS, which
// multiplies pairs of bfloat16 values exactly and adds both products to a
// float32 accumulator, at twice the multiply-adds per instruction of a
// float32 FMA; the panels hold A's and B's values in pairs along k (a
// 32-bit lane is A[i][2p], A[i][2p+1] or B[2p][j], B[2p+1][j]). Elsewhere
// it widens A and B to float32 and runs Sgemm: the same products, summed
// in another order (so the two paths agree to float32 rounding, not bit for
// bit). VDPBF16PS treats subnormal inputs as zero and flushes subnormal
// results to zero; the widening path keeps them.
//
// Both paths split work only on register tiles and walk k in the same
// blocks from 0 upwards, so each path gives bit-identical results for any
// number of threads.

// A depth block of 512 pairs (1,024 values) holds a transformer's weight
// gradients (k = the batch's 1,024 tokens) in one block, whose sums go
// straight from the registers to bfloat16: 256 pairs split them in two, the
// first block's sums went through a float32 tile of C, and the products ran
// at 730-850 GFLOP/s against 800-890 with one block (BenchmarkGemmBF16's
// tf-dw and the transformer's other weight-gradient shapes, alternated).
const (
	bf16MR = 14   // rows of a register tile
	bf16NR = 32   // columns of a register tile
	bf16KP = 512  // bfloat16 pairs along k in a packed block (1,024 values)
	bf16MC = 504  // rows of A in a packed block (36 tiles: 1 MiB)
	bf16NC = 2048 // columns of B in a packed block (4 MiB)
)

// BF16Path names the path GemmBF16Batch takes: "avx512bf16" (VDPBF16PS
// micro-kernel) or "widen" (float32 copies and Sgemm).
func BF16Path() string { return bf16Active }

// bf16Active is the path in use: the kernel when the CPU and GOTRAIN_CPU
// allow it.
var bf16Active = bf16DefaultPath()

func bf16DefaultPath() string {
	if bf16KernelOK() {
		return "avx512bf16"
	}
	return "widen"
}

// setBF16Path forces a path by name (tests and benchmarks); it fails if the
// CPU or the build does not support it.
func setBF16Path(name string) error {
	switch {
	case name == "widen", name == "avx512bf16" && bf16KernelOK():
		bf16Active = name
		return nil
	}
	return fmt.Errorf("gemm: bfloat16 path %q is not available on this CPU or build", name)
}

// bf16Paths lists the bfloat16 paths available here, fastest first.
func bf16Paths() []string {
	if bf16KernelOK() {
		return []string{"avx512bf16", "widen"}
	}
	return []string{"widen"}
}

// GemmBF16 computes C = op(A)·op(B) for row-major matrices of bfloat16
// values given as their bits: op(A) is m×k (stored k×m if transA), op(B) is
// k×n (stored n×k if transB) and C, float32 and m×n, is overwritten. The
// products of bfloat16 values are exact in float32; they are summed in
// float32. Errors wrap ErrBadArgs, as Sgemm's, and leave C untouched.
func GemmBF16(transA, transB bool, m, n, k int, a []uint16, lda int, b []uint16, ldb int, c []float32, ldc int) error {
	return GemmBF16Batch(transA, transB, m, n, k, a, lda, b, ldb, c, ldc, 1, 0, 0, 0)
}

// GemmBF16Batch computes batch independent products C_i = op(A_i)·op(B_i)
// as GemmBF16 does, with A_i = a[i·strideA:], B_i = b[i·strideB:] and C_i =
// c[i·strideC:], as SgemmBatch.
func GemmBF16Batch(transA, transB bool, m, n, k int, a []uint16, lda int, b []uint16, ldb int, c []float32, ldc int, batch int, strideA, strideB, strideC int) error {
	if err := checkArgs(transA, transB, m, n, k, len(a), lda, len(b), ldb, len(c), ldc, batch, strideA, strideB, strideC); err != nil {
		return err
	}
	if batch == 0 || m == 0 || n == 0 {
		return nil
	}
	if k == 0 {
		for i := range batch {
			for r := range m {
				clear(c[i*strideC+r*ldc : i*strideC+r*ldc+n])
			}
		}
		return nil
	}
	if bf16Active != "avx512bf16" {
		return gemmBF16Widen(transA, transB, m, n, k, a, lda, b, ldb, c, ldc, batch, strideA, strideB, strideC)
	}
	runBF16(bf16Problem{
		transA: transA, transB: transB, m: m, n: n, k: k,
		a: a, b: b, c: c, lda: lda, ldb: ldb, ldc: ldc,
		batch: batch, strideA: strideA, strideB: strideB, strideC: strideC,
	})
	return nil
}

// runBF16 runs a validated problem on the kernel path with a pooled
// problem value.
func runBF16(p bf16Problem) {
	pr := bf16ProblemPool.Get().(*bf16Problem)
	*pr = p
	pr.run()
	*pr = bf16Problem{}
	bf16ProblemPool.Put(pr)
}

// GemmBF16BatchTo16 is GemmBF16Batch with C in bfloat16: each float32 sum
// truncated to bfloat16 as GoMLX's bfloat16.FromFloat32 does (its top 16
// bits), written without a float32 copy of C where the kernel runs.
func GemmBF16BatchTo16(transA, transB bool, m, n, k int, a []uint16, lda int, b []uint16, ldb int, c []uint16, ldc int, batch int, strideA, strideB, strideC int) error {
	if err := checkArgs(transA, transB, m, n, k, len(a), lda, len(b), ldb, len(c), ldc, batch, strideA, strideB, strideC); err != nil {
		return err
	}
	if batch == 0 || m == 0 || n == 0 {
		return nil
	}
	if k == 0 || bf16Active != "avx512bf16" {
		// float32 C, then truncated row by row.
		cs := widenPool.Get().(*[]float32)
		need := (batch-1)*m*n + m*n
		if cap(*cs) < need {
			*cs = make([]float32, need)
		}
		cf := (*cs)[:need]
		err := GemmBF16Batch(transA, transB, m, n, k, a, lda, b, ldb, cf, n, batch, strideA, strideB, m*n)
		if err == nil {
			narrowItems(c, ldc, strideC, cf, batch, m, n)
		}
		widenPool.Put(cs)
		return err
	}
	runBF16(bf16Problem{
		transA: transA, transB: transB, m: m, n: n, k: k,
		a: a, b: b, c16: c, lda: lda, ldb: ldb, ldc: ldc,
		batch: batch, strideA: strideA, strideB: strideB, strideC: strideC,
	})
	return nil
}

// narrowItems narrows batch dense m×n float32 items of cf into the items
// of c (leading dimension ldc, strideC apart).
func narrowItems(c []uint16, ldc, strideC int, cf []float32, batch, m, n int) {
	for it := range batch {
		for r := range m {
			narrowRow(c[it*strideC+r*ldc:][:n], cf[it*m*n+r*n:][:n])
		}
	}
}

// narrowRow sets dst[j] to the top 16 bits of src[j]: 16 at a time with
// AVX-512 where the CPU has it (partial tiles and the float32 sums of
// products deeper than one block are narrowed here), the rest in Go.
func narrowRow(dst []uint16, src []float32) {
	dst = dst[:len(src)]
	k := vecNarrow(dst, src)
	for j, v := range src[k:] {
		dst[k+j] = uint16(math.Float32bits(v) >> 16)
	}
}

// checkArgs validates the arguments of a batch of products, SgemmBatch's
// or the bfloat16 ones' (the lengths of a, b and c given): errors wrap
// ErrBadArgs.
func checkArgs(transA, transB bool, m, n, k, la, lda, lb, ldb, lc, ldc, batch, strideA, strideB, strideC int) error {
	if m < 0 || n < 0 || k < 0 || batch < 0 {
		return fmt.Errorf("%w: negative size m=%d n=%d k=%d batch=%d", ErrBadArgs, m, n, k, batch)
	}
	if strideA < 0 || strideB < 0 || strideC < 0 {
		return fmt.Errorf("%w: negative stride A=%d B=%d C=%d", ErrBadArgs, strideA, strideB, strideC)
	}
	ar, ac := m, k
	if transA {
		ar, ac = k, m
	}
	br, bc := k, n
	if transB {
		br, bc = n, k
	}
	if err := checkMatrixLen("A", la, ar, ac, lda, batch, strideA); err != nil {
		return err
	}
	if err := checkMatrixLen("B", lb, br, bc, ldb, batch, strideB); err != nil {
		return err
	}
	if err := checkMatrixLen("C", lc, m, n, ldc, batch, strideC); err != nil {
		return err
	}
	if batch > 1 && m > 0 && n > 0 && strideC < (m-1)*ldc+n {
		return fmt.Errorf("%w: C stride %d overlaps items of %d elements", ErrBadArgs, strideC, (m-1)*ldc+n)
	}
	return nil
}

// gemmBF16Widen is the path without the kernel: A and B (the parts the
// products read) widened to float32, then SgemmBatch.
func gemmBF16Widen(transA, transB bool, m, n, k int, a []uint16, lda int, b []uint16, ldb int, c []float32, ldc int, batch int, strideA, strideB, strideC int) error {
	ar, ac := m, k
	if transA {
		ar, ac = k, m
	}
	br, bc := k, n
	if transB {
		br, bc = n, k
	}
	na := (ar-1)*lda + ac + (batch-1)*strideA
	nb := (br-1)*ldb + bc + (batch-1)*strideB
	af, bf := widenBF16(a[:na]), widenBF16(b[:nb])
	err := SgemmBatch(transA, transB, m, n, k, 1, *af, lda, *bf, ldb, 0, c, ldc, batch, strideA, strideB, strideC)
	widenPool.Put(af)
	widenPool.Put(bf)
	return err
}

var widenPool = sync.Pool{New: func() any { return new([]float32) }}

// widenBF16 returns a pooled float32 copy of the bfloat16 values s.
func widenBF16(s []uint16) *[]float32 {
	p := widenPool.Get().(*[]float32)
	if cap(*p) < len(s) {
		*p = make([]float32, len(s))
	}
	d := (*p)[:len(s)]
	for i, v := range s {
		d[i] = math.Float32frombits(uint32(v) << 16)
	}
	*p = d
	return p
}

// bf16Problem is a validated GemmBF16Batch call on the kernel path.
type bf16Problem struct {
	transA, transB   bool
	m, n, k          int
	a, b             []uint16
	c                []float32
	c16              []uint16 // C in bfloat16 (GemmBF16BatchTo16), c nil
	lda, ldb, ldc    int
	batch            int
	strideA, strideB int
	strideC          int
	offA, offB       []int // where each item's A and B start (GemmBF16BatchTo16At), else nil
	splitN           bool  // chunks split columns (else rows) of C
	chunks           int   // chunks per batch item
	tilesM, tilesN   int
	// sharedA and sharedB are A and B packed once for every chunk of a
	// single item (packShared), in sharedBuf; nil when each chunk packs
	// its own.
	sharedA, sharedB []uint32
	sharedBuf        *[]uint32
}

var bf16ProblemPool = sync.Pool{New: func() any { return new(bf16Problem) }}

// run splits pr into chunks of register tiles and runs them, on the
// calling goroutine when the work is small.
func (pr *bf16Problem) run() {
	pr.tilesM = (pr.m + bf16MR - 1) / bf16MR
	pr.tilesN = (pr.n + bf16NR - 1) / bf16NR
	work := pr.m * pr.n
	if work > math.MaxInt/pr.k/pr.batch {
		work = math.MaxInt / pr.batch
	} else {
		work *= pr.k
	}
	nt := threads
	pr.chunks = 1
	if nt > 1 && work*pr.batch >= 2*parallelThreshold && pr.batch < 2*nt {
		// Two chunks per thread, as Sgemm. Splitting columns repacks A in
		// every chunk, splitting rows B: split the side whose other
		// operand is the smaller, when it has the tiles to share out.
		want := min(2*nt, max(1, work/(2*minTaskWork)))
		pr.splitN = splitColumns(pr.tilesM, pr.tilesN, want, pr.m <= pr.n)
		tiles := pr.tilesM
		if pr.splitN {
			tiles = pr.tilesN
		}
		pr.chunks = max(1, min(want, tiles))
	}
	tasks := pr.batch * pr.chunks
	if nt <= 1 || tasks == 1 || work*pr.batch < 2*parallelThreshold {
		ws := bf16Workspaces.Get().(*bf16Workspace)
		for t := range tasks {
			pr.task(ws, t)
		}
		bf16Workspaces.Put(ws)
		return
	}
	if pr.batch == 1 {
		pr.packShared()
	}
	parallel(pr, tasks, min(nt, tasks))
	if pr.sharedBuf != nil {
		bf16SharedPool.Put(pr.sharedBuf)
	}
}

// Task runs task t of pr with a pooled workspace (package parallel).
func (pr *bf16Problem) Task(t int) {
	ws := bf16Workspaces.Get().(*bf16Workspace)
	pr.task(ws, t)
	bf16Workspaces.Put(ws)
}

// task runs chunk t%chunks of batch item t/chunks. Chunks end on register
// tiles, so that the tiling of C, and with it every sum, is the same for
// any number of chunks.
func (pr *bf16Problem) task(ws *bf16Workspace, t int) {
	item, ch := t/pr.chunks, t%pr.chunks
	i0, i1, j0, j1 := 0, pr.m, 0, pr.n
	if pr.chunks > 1 {
		if pr.splitN {
			j0 = min(pr.n, (pr.tilesN*ch/pr.chunks)*bf16NR)
			j1 = min(pr.n, (pr.tilesN*(ch+1)/pr.chunks)*bf16NR)
		} else {
			i0 = min(pr.m, (pr.tilesM*ch/pr.chunks)*bf16MR)
			i1 = min(pr.m, (pr.tilesM*(ch+1)/pr.chunks)*bf16MR)
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

// bf16Workspace holds one goroutine's packed blocks.
type bf16Workspace struct {
	ap  []uint32 // bf16MC/bf16MR panels of bf16KP steps of 14 pairs
	bp  []uint32 // bf16NC/bf16NR panels of bf16KP steps of 32 pairs
	tmp []float32
	cs  []float32 // float32 sums of a chunk of a bfloat16 C, over several depth blocks
}

// growFloats returns s if it holds n floats, else a new slice of n.
func growFloats(s []float32, n int) []float32 {
	if len(s) >= n {
		return s
	}
	return make([]float32, n)
}

// bf16Workspaces pools the workspaces; their blocks grow to the sizes
// used (a product with 10 columns packs 32 KiB of B, not 2 MiB).
var bf16Workspaces = sync.Pool{New: func() any {
	return &bf16Workspace{tmp: alignedFloats(bf16MR * bf16NR)}
}}

// grown returns s if it holds n lanes, else a new 64-byte aligned slice of n.
func grown(s []uint32, n int) []uint32 {
	if len(s) >= n {
		return s
	}
	return alignedUint32s(n)
}

// alignedUint32s returns n zeroed uint32s starting on a 64-byte boundary.
func alignedUint32s(n int) []uint32 {
	f := alignedFloats(n)
	return unsafe.Slice((*uint32)(unsafe.Pointer(&f[0])), n)
}

// block computes rows [i0,i1) and columns [j0,j1) of one item (A, B and C
// at offsets oa, ob, oc): GotoBLAS's loop nest, k in blocks of bf16KP
// pairs from 0 upwards, the first block overwriting C and the others
// adding to it. An operand packed before the chunks started (pr.sharedA,
// pr.sharedB) is read from there.
func (ws *bf16Workspace) block(pr *bf16Problem, oa, ob, oc, i0, i1, j0, j1 int) {
	a, b := pr.a[oa:], pr.b[ob:]
	var c []float32
	var c16 []uint16
	ldc := pr.ldc
	// cBase is where element (i0, j0) of C is: C is walked at (i, j) as
	// c[(i-i0)·ldc + j-j0 + cBase].
	cBase := oc + i0*ldc + j0
	oneBlock := pr.k <= 2*bf16KP
	switch {
	case pr.c16 == nil:
		c = pr.c
	case oneBlock:
		// One depth block: tiles go straight to bfloat16.
		c16 = pr.c16
	default:
		// Several depth blocks: float32 sums in a scratch tile of the chunk,
		// truncated at the end.
		ldc, cBase = j1-j0, 0
		ws.cs = growFloats(ws.cs, (i1-i0)*ldc)
		c = ws.cs
		defer func() {
			for r := range i1 - i0 {
				narrowRow(pr.c16[oc+(i0+r)*pr.ldc+j0:][:j1-j0], ws.cs[r*ldc:][:j1-j0])
			}
		}()
	}
	ncMax, mcMax := bf16NC, bf16MC
	if pr.sharedB != nil {
		ncMax = pr.n
	} else {
		ws.bp = grown(ws.bp, tiled(min(bf16NC, j1-j0), bf16NR)*min(bf16KP, (pr.k+1)/2))
	}
	if pr.sharedA != nil {
		mcMax = pr.m
	} else {
		ws.ap = grown(ws.ap, tiled(min(bf16MC, i1-i0), bf16MR)*min(bf16KP, (pr.k+1)/2))
	}
	for jc := j0; jc < j1; jc += ncMax {
		nc := min(ncMax, j1-jc)
		for pb := 0; pb*2*bf16KP < pr.k; pb++ {
			pc := pb * 2 * bf16KP
			kc := min(2*bf16KP, pr.k-pc)
			kp := (kc + 1) / 2
			bpan, bq0 := ws.bp, 0
			if pr.sharedB != nil {
				bpan, bq0 = pr.sharedB[pb*pr.tilesN*bf16NR*bf16KP:], jc/bf16NR
			} else {
				packBF16B(ws.bp, b, pr.ldb, pr.transB, pc, kc, jc, nc)
			}
			acc := pc > 0
			for ic := i0; ic < i1; ic += mcMax {
				mc := min(mcMax, i1-ic)
				apan, aq0 := ws.ap, 0
				if pr.sharedA != nil {
					apan, aq0 = pr.sharedA[pb*pr.tilesM*bf16MR*bf16KP:], ic/bf16MR
				} else {
					packBF16A(ws.ap, a, pr.lda, pr.transA, ic, mc, pc, kc)
				}
				for jr := 0; jr < nc; jr += bf16NR {
					bp := &bpan[(bq0+jr/bf16NR)*kp*bf16NR]
					w := min(bf16NR, nc-jr)
					for ir := 0; ir < mc; ir += bf16MR {
						ap := &apan[(aq0+ir/bf16MR)*kp*bf16MR]
						h := min(bf16MR, mc-ir)
						off := (ic+ir-i0)*ldc + jc + jr - j0 + cBase
						if c16 != nil {
							if h == bf16MR && w == bf16NR {
								bf16Kern14x32To16(kp, ap, bp, &c16[off], ldc)
								continue
							}
							if w == bf16NR && bf16KernRowsTo16[h] != nil {
								// A partial tile's h rows alone, straight to bfloat16.
								bf16KernRowsTo16[h](kp, ap, bp, &c16[off], ldc)
								continue
							}
							bf16Kern14x32(kp, ap, bp, &ws.tmp[0], bf16NR, false)
							for r := range h {
								narrowRow(c16[off+r*ldc:][:w], ws.tmp[r*bf16NR:][:w])
							}
							continue
						}
						if h == bf16MR && w == bf16NR {
							bf16Kern14x32(kp, ap, bp, &c[off], ldc, acc)
							continue
						}
						bf16Kern14x32(kp, ap, bp, &ws.tmp[0], bf16NR, false)
						for r := range h {
							dst := c[off+r*ldc : off+r*ldc+w]
							src := ws.tmp[r*bf16NR : r*bf16NR+w]
							if acc {
								for j, v := range src {
									dst[j] += v
								}
							} else {
								copy(dst, src)
							}
						}
					}
				}
			}
		}
	}
}

// maxBF16Shared bounds, in 32-bit lanes, an operand packed once for all
// chunks (16 MiB).
const maxBF16Shared = 4 << 20

var bf16SharedPool = sync.Pool{New: func() any { return new([]uint32) }}

// packShared packs, before a single item's chunks start, the operand every
// chunk would otherwise pack again (A when chunks split columns, B when
// they split rows), its panels shared out among the threads; it does
// nothing when that operand is too large.
func (pr *bf16Problem) packShared() {
	tiles, lanes := pr.tilesN, bf16NR
	if pr.splitN {
		tiles, lanes = pr.tilesM, bf16MR
	}
	kp := (pr.k + 1) / 2
	if tiles*lanes > maxBF16Shared/kp {
		return
	}
	buf := bf16SharedPool.Get().(*[]uint32)
	if cap(*buf) < tiles*lanes*kp {
		*buf = make([]uint32, tiles*lanes*kp)
	}
	pr.sharedBuf = buf
	sh := (*buf)[:tiles*lanes*kp]
	parallel(bf16SharedPacking{pr, sh}, tiles, min(threads, tiles))
	if pr.splitN {
		pr.sharedA = sh
	} else {
		pr.sharedB = sh
	}
}

// bf16SharedPacking packs panel t of the shared operand for every depth
// block (package parallel's task).
type bf16SharedPacking struct {
	pr  *bf16Problem
	dst []uint32
}

func (sp bf16SharedPacking) Task(q int) {
	pr := sp.pr
	for pb := 0; pb*2*bf16KP < pr.k; pb++ {
		pc := pb * 2 * bf16KP
		kc := min(2*bf16KP, pr.k-pc)
		kp := (kc + 1) / 2
		if pr.splitN {
			off := pb*pr.tilesM*bf16MR*bf16KP + q*kp*bf16MR
			packBF16A(sp.dst[off:], pr.a, pr.lda, pr.transA, q*bf16MR, min(bf16MR, pr.m-q*bf16MR), pc, kc)
		} else {
			off := pb*pr.tilesN*bf16NR*bf16KP + q*kp*bf16NR
			packBF16B(sp.dst[off:], pr.b, pr.ldb, pr.transB, pc, kc, q*bf16NR, min(bf16NR, pr.n-q*bf16NR))
		}
	}
}

// pair returns the 32-bit lane of the bfloat16 values lo and hi.
func pair(lo, hi uint16) uint32 { return uint32(lo) | uint32(hi)<<16 }

// packBF16B packs op(B)[pc:pc+kc, jc:jc+nc] into panels of 32 columns:
// step p of panel q holds, for its 32 columns j, the pair op(B)[pc+2p][j],
// op(B)[pc+2p+1][j]; values past k or n are zero. op(B)[kk][j] is
// b[kk·ldb+j], or b[j·ldb+kk] with trans.
func packBF16B(dst []uint32, b []uint16, ldb int, trans bool, pc, kc, jc, nc int) {
	packBF16Pairs(dst, b, ldb, trans, pc, kc, jc, nc, bf16NR)
}

// packBF16A packs op(A)[ic:ic+mc, pc:pc+kc] into panels of 14 rows: step p
// of panel q holds, for its 14 rows i, the pair op(A)[i][pc+2p],
// op(A)[i][pc+2p+1]; values past k or the rows are zero. op(A)[i][kk] is
// a[i·lda+kk], or a[kk·lda+i] with trans.
func packBF16A(dst []uint32, a []uint16, lda int, trans bool, ic, mc, pc, kc int) {
	packBF16Pairs(dst, a, lda, !trans, pc, kc, ic, mc, bf16MR)
}

// packBF16Pairs packs panels of lanes 32-bit lanes over the cross
// positions [c0, c0+cn) (B's columns, A's rows) and the depth [pc, pc+kc):
// step p of panel q, lane l holds the values at depths pc+2p and pc+2p+1
// of cross position c = c0+q·lanes+l, which are src[c·ld+kk] when adjacent
// (a pair is one 32-bit load), else src[kk·ld+c] (two rows interleaved).
// Values past kc or cn are zero.
func packBF16Pairs(dst []uint32, src []uint16, ld int, adjacent bool, pc, kc, c0, cn, lanes int) {
	kp := (kc + 1) / 2
	full := kc / 2
	for q := 0; q*lanes < cn; q++ {
		pan := dst[q*kp*lanes : (q+1)*kp*lanes]
		first := c0 + q*lanes
		w := min(lanes, cn-q*lanes)
		if !adjacent {
			p0 := 0
			if packPairsAsm(pan, src, pc*ld+first, ld, full, w, lanes) {
				p0 = full
			}
			for p := p0; p < kp; p++ {
				step := pan[p*lanes : (p+1)*lanes]
				r0 := src[(pc+2*p)*ld+first:][:w]
				if 2*p+1 < kc {
					r1 := src[(pc+2*p+1)*ld+first:][:w]
					for l, v := range r0 {
						step[l] = pair(v, r1[l])
					}
				} else {
					for l, v := range r0 {
						step[l] = uint32(v)
					}
				}
				clear(step[w:])
			}
			continue
		}
		if kc%2 == 0 && packDwordsAsm(pan, src, first*ld+pc, ld, kp, w, lanes) {
			continue
		}
		for l := range w {
			line := src[(first+l)*ld+pc:][:kc]
			for p := range full {
				pan[p*lanes+l] = *(*uint32)(unsafe.Pointer(&line[2*p]))
			}
			if kc%2 == 1 {
				pan[full*lanes+l] = uint32(line[kc-1])
			}
		}
		for p := range kp {
			clear(pan[p*lanes+w : (p+1)*lanes])
		}
	}
}
