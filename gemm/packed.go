package gemm

import "fmt"

// PackedB is op(B) packed once in the layout the micro-kernels read, for
// many products with the same B: a weight matrix multiplied at every step
// of a recurrent network, whose packing would otherwise cost about as much
// as a product with few rows. SgemmPackedB with it gives the same bits as
// Sgemm with the B it was packed from. A PackedB must not be used after
// Release; it may be read by several calls at once.
type PackedB struct {
	sh   *sharedB
	k, n int
	kr   *kernel
}

// PackB packs op(B) (k×n; stored n×k if transB) with leading dimension ldb.
// Errors wrap ErrBadArgs.
func PackB(transB bool, k, n int, b []float32, ldb int) (*PackedB, error) {
	if k < 0 || n < 0 {
		return nil, fmt.Errorf("%w: negative size k=%d n=%d", ErrBadArgs, k, n)
	}
	br, bc := k, n
	if transB {
		br, bc = n, k
	}
	if err := checkMatrix("B", b, br, bc, ldb, 1, 0); err != nil {
		return nil, err
	}
	kr := active
	pr := &problem{transB: transB, k: k, n: n, b: b, ldb: ldb, kr: kr, tilesN: (n + kr.nr - 1) / kr.nr}
	pb := &PackedB{k: k, n: n, kr: kr}
	if k > 0 && n > 0 {
		pb.sh = packSharedB(pr)
	}
	return pb, nil
}

// K and N return op(B)'s dimensions.
func (p *PackedB) K() int { return p.k }

// N returns the number of columns of op(B).
func (p *PackedB) N() int { return p.n }

// Release returns the packed buffer to a pool for later packings.
func (p *PackedB) Release() {
	if p.sh != nil {
		sharedPool.Put(p.sh)
		p.sh = nil
	}
}

// SgemmPackedB computes C = alpha·op(A)·op(B) + beta·C as Sgemm does, with
// op(B) from pb (m×K() times K()×N(); C is m×N()). Errors wrap ErrBadArgs.
func SgemmPackedB(transA bool, m int, alpha float32, a []float32, lda int, pb *PackedB, beta float32, c []float32, ldc int) error {
	if pb == nil || (pb.sh == nil && pb.k > 0 && pb.n > 0) {
		return fmt.Errorf("%w: B is not packed (nil or released)", ErrBadArgs)
	}
	k, n := pb.k, pb.n
	if m < 0 {
		return fmt.Errorf("%w: negative size m=%d", ErrBadArgs, m)
	}
	ar, ac := m, k
	if transA {
		ar, ac = k, m
	}
	if err := checkMatrix("A", a, ar, ac, lda, 1, 0); err != nil {
		return err
	}
	if err := checkMatrix("C", c, m, n, ldc, 1, 0); err != nil {
		return err
	}
	if m == 0 || n == 0 {
		return nil
	}
	pr := problemPool.Get().(*problem)
	*pr = problem{
		transA: transA, m: m, n: n, k: k, alpha: alpha, beta: beta,
		a: a, c: c, lda: lda, ldc: ldc, batch: 1,
		kr: pb.kr, shared: pb.sh, prePacked: true,
	}
	run(pr)
	*pr = problem{}
	problemPool.Put(pr)
	return nil
}
