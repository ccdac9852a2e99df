package gemm

import (
	"sync"
	"unsafe"
)

// workspace holds one goroutine's packing buffers for one kernel.
type workspace struct {
	ap  []float32 // packed block of A: mc/mr micro-panels of kc×mr
	bp  []float32 // packed block of B: nc/nr micro-panels of kc×nr
	tmp []float32 // mr×nr tile for edges
}

// getWorkspace returns a workspace from kr's pool, allocating one on first use.
func (kr *kernel) getWorkspace() *workspace {
	if ws, ok := kr.pool.Get().(*workspace); ok {
		return ws
	}
	return &workspace{
		ap:  alignedFloats(kr.mc * kr.kc),
		bp:  alignedFloats(kr.nc * kr.kc),
		tmp: alignedFloats(kr.mr * kr.nr),
	}
}

// alignedFloats returns n zeroed float32s starting on a 64-byte boundary.
func alignedFloats(n int) []float32 {
	s := make([]float32, n+16)
	off := 0
	if r := uintptr(unsafe.Pointer(&s[0])) % 64; r != 0 {
		off = int(64-r) / 4
	}
	return s[off : off+n : off+n]
}

// block computes rows [i0,i1) and columns [j0,j1) of one batch item of pr, whose
// A, B and C start at offsets oa, ob and oc: the GotoBLAS loop nest over NC
// columns, KC depth and MC rows, with packed blocks and the micro-kernel on
// every MR×NR tile. k is always walked in the same KC blocks from 0 upwards.
func (ws *workspace) block(pr *problem, oa, ob, oc, i0, i1, j0, j1 int) {
	ldc := pr.ldc
	c := pr.c[oc:]
	// With beta = 0 the first depth block overwrites C (no clearing pass, and
	// NaNs in C are never read); otherwise C is scaled first and accumulated.
	overwrite := pr.beta == 0 && pr.k > 0 && pr.alpha != 0
	if !overwrite {
		scaleC(c, ldc, i0, i1, j0, j1, pr.beta)
	}
	if pr.k == 0 || pr.alpha == 0 {
		return
	}
	kr := pr.kr
	mr, nr := kr.mr, kr.nr
	a, b := pr.a[oa:], pr.b[ob:]
	ncMax := kr.nc
	if pr.shared != nil {
		ncMax = pr.n // the shared packed B spans all columns
	}
	for jc := j0; jc < j1; jc += ncMax {
		nc := min(ncMax, j1-jc)
		for pc := 0; pc < pr.k; pc += kr.kc {
			kc := min(kr.kc, pr.k-pc)
			first := overwrite && pc == 0
			bp := ws.bp
			if pr.shared != nil {
				bp = pr.shared.block(pc, kc)[jc*kc:] // panels from column jc on
			} else {
				packB(kr, bp, b, pr.ldb, pr.transB, pc, kc, jc, nc, nr)
			}
			for ic := i0; ic < i1; ic += kr.mc {
				mc := min(kr.mc, i1-ic)
				packA(kr, ws.ap, a, pr.lda, pr.transA, ic, mc, pc, kc, mr)
				for jr := 0; jr < nc; jr += nr {
					bpan := &bp[jr*kc]
					w := min(nr, nc-jr)
					for ir := 0; ir < mc; ir += mr {
						apan := &ws.ap[ir*kc]
						h := min(mr, mc-ir)
						ci := (ic+ir)*ldc + jc + jr
						if h == mr && w == nr {
							kr.fn(kc, apan, bpan, &c[ci], ldc, pr.alpha, first)
							continue
						}
						if w == nr && h < len(kr.rows) {
							kr.rows[h](kc, apan, bpan, &c[ci], ldc, pr.alpha, first)
							continue
						}
						// Edge tile: compute a full tile into tmp, then add (or
						// copy) the part inside C.
						t := ws.tmp
						kr.fn(kc, apan, bpan, &t[0], nr, pr.alpha, true)
						for r := 0; r < h; r++ {
							row := c[ci+r*ldc : ci+r*ldc+w]
							src := t[r*nr : r*nr+w]
							if first {
								copy(row, src)
								continue
							}
							for j, v := range src {
								row[j] += v
							}
						}
					}
				}
			}
		}
	}
}

// scaleC sets C[i0:i1, j0:j1] to beta·C; beta = 0 stores zeros without reading C.
func scaleC(c []float32, ldc, i0, i1, j0, j1 int, beta float32) {
	if beta == 1 {
		return
	}
	for i := i0; i < i1; i++ {
		row := c[i*ldc+j0 : i*ldc+j1]
		if beta == 0 {
			clear(row)
			continue
		}
		for j := range row {
			row[j] *= beta
		}
	}
}

// packA packs op(A)[ic:ic+mc, pc:pc+kc] into mr-row micro-panels, each kc steps
// of mr consecutive values, padding the last panel's missing rows with zeros.
func packA(kr *kernel, dst, a []float32, lda int, trans bool, ic, mc, pc, kc, mr int) {
	start := 0
	if trans {
		start = packARows(kr, dst, a, lda, ic, mc, pc, kc)
	}
	for ir := start; ir < mc; ir += mr {
		h := min(mr, mc-ir)
		pan := dst[ir*kc : ir*kc+kc*mr]
		if trans && packPanel(kr, pan, a, pc*lda+ic+ir, lda, kc, h, mr, true) {
			continue
		}
		if !trans && packPanel(kr, pan, a, (ic+ir)*lda+pc, lda, kc, h, mr, false) {
			continue
		}
		if trans {
			// op(A)[i,p] = a[p·lda+i]: each step is a contiguous run of h values.
			if h == 6 && mr == 6 {
				// The AVX2 kernel's full panels: six floats a step, moved
				// as one array (a copy call per step cost more than the move).
				base := pc*lda + ic + ir
				_ = a[base+(kc-1)*lda+5]
				for p := 0; p < kc; p++ {
					d := (*[3]uint64)(unsafe.Pointer(&pan[p*6]))
					s := (*[3]uint64)(unsafe.Pointer(&a[base+p*lda]))
					d[0], d[1], d[2] = s[0], s[1], s[2]
				}
				continue
			}
			for p := 0; p < kc; p++ {
				src := a[(pc+p)*lda+ic+ir:]
				d := pan[p*mr : p*mr+mr]
				copy(d, src[:h])
				if h < mr {
					clear(d[h:])
				}
			}
			continue
		}
		// op(A)[i,p] = a[i·lda+p]: each row is scattered with stride mr.
		if mr == 6 && h == 6 {
			off := (ic+ir)*lda + pc
			done := packAcrossAVX2(kr, pan, a, off, lda, kc, 6)
			packRows6(pan[done*6:], a, off+done, lda, kc-done)
			continue
		}
		for r := 0; r < h; r++ {
			src := a[(ic+ir+r)*lda+pc:]
			src = src[:kc]
			for p, v := range src {
				pan[p*mr+r] = v
			}
		}
		for r := h; r < mr; r++ {
			for p := 0; p < kc; p++ {
				pan[p*mr+r] = 0
			}
		}
	}
}

// packRows6 packs six rows of kc values (the first at a[off:], the next
// lda apart) into kc steps of six: step p holds the rows' p-th values. It
// reads the six rows side by side and writes the panel in order, which the
// row-by-row loop of packA (stores six floats apart) did about three times
// slower for the AVX2 kernel's 6-row panels.
func packRows6(pan, a []float32, off, lda, kc int) {
	r0 := a[off : off+kc]
	r1 := a[off+lda : off+lda+kc]
	r2 := a[off+2*lda : off+2*lda+kc]
	r3 := a[off+3*lda : off+3*lda+kc]
	r4 := a[off+4*lda : off+4*lda+kc]
	r5 := a[off+5*lda : off+5*lda+kc]
	pan = pan[:6*kc]
	for p := range r0 {
		d := pan[6*p : 6*p+6 : 6*p+6]
		d[0], d[1], d[2], d[3], d[4], d[5] = r0[p], r1[p], r2[p], r3[p], r4[p], r5[p]
	}
}

// packB packs op(B)[pc:pc+kc, jc:jc+nc] into nr-column micro-panels, each kc
// steps of nr consecutive values, padding the last panel's missing columns with zeros.
func packB(kr *kernel, dst, b []float32, ldb int, trans bool, pc, kc, jc, nc, nr int) {
	start := 0
	if !trans {
		start = packBRows(kr, dst, b, ldb, pc, kc, jc, nc)
	}
	for jr := start; jr < nc; jr += nr {
		w := min(nr, nc-jr)
		pan := dst[jr*kc : jr*kc+kc*nr]
		if !trans && packPanel(kr, pan, b, pc*ldb+jc+jr, ldb, kc, w, nr, true) {
			continue
		}
		if trans && packPanel(kr, pan, b, (jc+jr)*ldb+pc, ldb, kc, w, nr, false) {
			continue
		}
		if !trans {
			// op(B)[p,j] = b[p·ldb+j]: each step is a contiguous run of w values.
			if w == 16 && nr == 16 {
				// The AVX2 kernel's full panels, as packA's six-float steps.
				base := pc*ldb + jc + jr
				_ = b[base+(kc-1)*ldb+15]
				for p := 0; p < kc; p++ {
					d := (*[8]uint64)(unsafe.Pointer(&pan[p*16]))
					s := (*[8]uint64)(unsafe.Pointer(&b[base+p*ldb]))
					d[0], d[1], d[2], d[3], d[4], d[5], d[6], d[7] = s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7]
				}
				continue
			}
			for p := 0; p < kc; p++ {
				src := b[(pc+p)*ldb+jc+jr:]
				d := pan[p*nr : p*nr+nr]
				copy(d, src[:w])
				if w < nr {
					clear(d[w:])
				}
			}
			continue
		}
		// op(B)[p,j] = b[j·ldb+p]: each stored row is scattered with stride nr.
		done := 0
		if w == nr {
			done = packAcrossAVX2(kr, pan, b, (jc+jr)*ldb+pc, ldb, kc, nr)
		}
		for j := 0; j < w; j++ {
			src := b[(jc+jr+j)*ldb+pc:]
			src = src[done:kc]
			for p, v := range src {
				pan[(done+p)*nr+j] = v
			}
		}
		for j := w; j < nr; j++ {
			for p := 0; p < kc; p++ {
				pan[p*nr+j] = 0
			}
		}
	}
}

// sharedB is op(B) packed once, before the chunks start, for a call that
// splits the rows of C: the threads then only read it, instead of each packing
// all of B. Depth block pc (kc deep) starts at pc·nPad and holds nPad/nr
// panels of kc×nr. Packing before the workers start means that no thread ever
// waits for another one's packing (which, on a loaded machine, can be
// descheduled for a whole time slice).
type sharedB struct {
	buf  []float32
	nPad int // columns rounded up to the register block
}

// maxSharedB bounds the floats of a shared packed B (16 MiB: k·n up to 2048², so
// that many concurrent calls do not pin much memory; larger products pack per
// chunk, where the repeated packing is small next to the arithmetic).
const maxSharedB = 4 << 20

var sharedPool = sync.Pool{New: func() any { return new(sharedB) }}

// packSharedB packs all of op(B) for pr into a pooled sharedB.
func packSharedB(pr *problem) *sharedB {
	kr := pr.kr
	sh := sharedPool.Get().(*sharedB)
	sh.nPad = pr.tilesN * kr.nr
	if need := pr.k * sh.nPad; cap(sh.buf) < need {
		sh.buf = alignedFloats(need)
	} else {
		sh.buf = sh.buf[:need]
	}
	pr.shared = sh
	// Each depth block is packed in column parts (whole panels), one per
	// thread, on the caller and the helpers, before the chunks start.
	pr.packParts = max(1, min(threads, pr.tilesN))
	if pr.k*pr.n < minSharedSplit {
		pr.packParts = 1
	}
	parallel(sharedPacking{pr}, pr.packParts*((pr.k+kr.kc-1)/kr.kc), pr.packParts)
	return sh
}

// minSharedSplit is the size (floats) from which a shared B is packed by
// several threads: 784×512 took 80 µs on one core of the AVX2 machine.
const minSharedSplit = 1 << 16

// sharedPacking packs pr.shared: task t is column part t mod packParts of
// depth block t / packParts.
type sharedPacking struct{ pr *problem }

// Task packs part t of the shared B.
func (sp sharedPacking) Task(t int) {
	pr := sp.pr
	kr := pr.kr
	pc := t / pr.packParts * kr.kc
	kc := min(kr.kc, pr.k-pc)
	part := t % pr.packParts
	j0 := pr.tilesN * part / pr.packParts * kr.nr
	j1 := min(pr.n, pr.tilesN*(part+1)/pr.packParts*kr.nr)
	if j0 < j1 {
		packB(kr, pr.shared.buf[pc*pr.shared.nPad+j0*kc:], pr.b, pr.ldb, pr.transB, pc, kc, j0, j1-j0, kr.nr)
	}
}

// block returns the packed depth block starting at pc, kc deep.
func (sh *sharedB) block(pc, kc int) []float32 {
	return sh.buf[pc*sh.nPad : pc*sh.nPad+kc*sh.nPad]
}
