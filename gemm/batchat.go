package gemm

import "fmt"

// Batches whose items are not evenly spaced.
//
// The heads of an attention layer are batch items of its products, but in a
// [batch, time, heads, dim] tensor they are not one stride apart: head h of
// sequence b starts at b·time·heads·dim + h·dim, and each head's [time, dim]
// matrix has rows heads·dim apart. SgemmBatchAt and GemmBF16BatchTo16At take
// each item's start in A and B instead of a stride, so that such operands are
// read where they are rather than copied into a strided batch first. The
// items are computed exactly as SgemmBatch and GemmBF16BatchTo16 compute
// theirs (the same tiles, blocks and order of sums), so the results are the
// same bits as a copy followed by the strided call.

// SgemmBatchAt computes len(offA) independent products C_i =
// alpha·op(A_i)·op(B_i) + beta·C_i as SgemmBatch does, with A_i =
// a[offA[i]:], B_i = b[offB[i]:] and C_i = c[i·strideC:]. offA and offB
// have the same length, the batch. The items of C must not overlap; A's and
// B's may. Errors wrap ErrBadArgs and leave C untouched.
func SgemmBatchAt(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, offA []int, b []float32, ldb int, offB []int, beta float32, c []float32, ldc, strideC int) error {
	if err := checkArgsAt(transA, transB, m, n, k, len(a), lda, offA, len(b), ldb, offB, len(c), ldc, strideC); err != nil {
		return err
	}
	batch := len(offA)
	if batch == 0 || m == 0 || n == 0 {
		return nil
	}
	if batch == 1 {
		return SgemmBatch(transA, transB, m, n, k, alpha, from(a, offA[0]), lda, from(b, offB[0]), ldb, beta, c, ldc, 1, 0, 0, 0)
	}
	runProblem(problem{
		transA: transA, transB: transB, m: m, n: n, k: k, alpha: alpha, beta: beta,
		a: a, b: b, c: c, lda: lda, ldb: ldb, ldc: ldc,
		batch: batch, offA: offA, offB: offB, strideC: strideC,
		kr: active,
	})
	return nil
}

// GemmBF16BatchTo16At is GemmBF16BatchTo16 with A_i = a[offA[i]:] and B_i =
// b[offB[i]:], as SgemmBatchAt: C_i = c[i·strideC:], in bfloat16.
func GemmBF16BatchTo16At(transA, transB bool, m, n, k int, a []uint16, lda int, offA []int, b []uint16, ldb int, offB []int, c []uint16, ldc, strideC int) error {
	if err := checkArgsAt(transA, transB, m, n, k, len(a), lda, offA, len(b), ldb, offB, len(c), ldc, strideC); err != nil {
		return err
	}
	batch := len(offA)
	if batch == 0 || m == 0 || n == 0 {
		return nil
	}
	if batch == 1 || k == 0 {
		for i := range batch {
			err := GemmBF16BatchTo16(transA, transB, m, n, k, from(a, offA[i]), lda, from(b, offB[i]), ldb, c[i*strideC:], ldc, 1, 0, 0, 0)
			if err != nil {
				return err
			}
		}
		return nil
	}
	if bf16Active != "avx512bf16" {
		// float32 copies of the parts the items read, SgemmBatchAt into a
		// float32 C, then truncated row by row: GemmBF16BatchTo16's path.
		af, bf := widenBF16(a[:extentAt(transA, m, k, lda, offA)]), widenBF16(b[:extentAt(!transB, n, k, ldb, offB)])
		cs := widenPool.Get().(*[]float32)
		if cap(*cs) < batch*m*n {
			*cs = make([]float32, batch*m*n)
		}
		cf := (*cs)[:batch*m*n]
		err := SgemmBatchAt(transA, transB, m, n, k, 1, *af, lda, offA, *bf, ldb, offB, 0, cf, n, m*n)
		if err == nil {
			narrowItems(c, ldc, strideC, cf, batch, m, n)
		}
		widenPool.Put(af)
		widenPool.Put(bf)
		widenPool.Put(cs)
		return err
	}
	runBF16(bf16Problem{
		transA: transA, transB: transB, m: m, n: n, k: k,
		a: a, b: b, c16: c, lda: lda, ldb: ldb, ldc: ldc,
		batch: batch, offA: offA, offB: offB, strideC: strideC,
	})
	return nil
}

// from returns s[off:], or s[len(s):] when off is past the end (an operand
// with no elements, k = 0, may have any offsets).
func from[T any](s []T, off int) []T { return s[min(off, len(s)):] }

// extentAt returns how many elements of an operand its items read: an
// operand whose op is cross×k (trans: stored k×cross) with leading
// dimension ld, its items at offs (validated, not empty).
func extentAt(trans bool, cross, k, ld int, offs []int) int {
	rows, cols := cross, k
	if trans {
		rows, cols = k, cross
	}
	return maxInt(offs) + (rows-1)*ld + cols
}

// maxInt returns the largest of s (not empty).
func maxInt(s []int) int {
	v := s[0]
	for _, x := range s[1:] {
		v = max(v, x)
	}
	return v
}

// checkArgsAt validates the arguments of SgemmBatchAt and
// GemmBF16BatchTo16At (the lengths of a, b and c given): errors wrap
// ErrBadArgs.
func checkArgsAt(transA, transB bool, m, n, k, la, lda int, offA []int, lb, ldb int, offB []int, lc, ldc, strideC int) error {
	if len(offA) != len(offB) {
		return fmt.Errorf("%w: %d offsets of A and %d of B", ErrBadArgs, len(offA), len(offB))
	}
	batch := len(offA)
	// The sizes, leading dimensions and C as checkArgs checks them, A and
	// B as single items...
	if err := checkArgs(transA, transB, m, n, k, la, lda, lb, ldb, lc, ldc, batch, 0, 0, strideC); err != nil {
		return err
	}
	// ...then each item's start.
	ar, ac := m, k
	if transA {
		ar, ac = k, m
	}
	br, bc := k, n
	if transB {
		br, bc = n, k
	}
	if err := checkOffsets("A", la, ar, ac, lda, offA); err != nil {
		return err
	}
	return checkOffsets("B", lb, br, bc, ldb, offB)
}

// checkOffsets checks that a rows×cols matrix with leading dimension ld fits
// in n elements at each of offs.
func checkOffsets(name string, n, rows, cols, ld int, offs []int) error {
	if rows == 0 || cols == 0 {
		return nil
	}
	need := (rows-1)*ld + cols // checkArgs has ruled out overflow and need > n
	for i, o := range offs {
		if o < 0 || o > n-need {
			return fmt.Errorf("%w: %s item %d at %d needs %d elements, has %d", ErrBadArgs, name, i, o, need, max(0, n-o))
		}
	}
	return nil
}
