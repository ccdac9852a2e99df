package sigraph

import (
	"fmt"
	"math"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/pkg/core/dtypes"
	. "github.com/gomlx/gomlx/pkg/core/graph" //nolint:revive // graph code reads better unqualified, as GoMLX's own examples do
	"github.com/gomlx/gomlx/pkg/core/shapes"
	"github.com/gomlx/gomlx/pkg/core/tensors"
)

// cnode is a complex tensor carried as two real tensors of one shape (the
// real and imaginary parts): simplego has no complex dtype. A nil im means
// an imaginary part of zero (real input).
type cnode struct{ re, im *Node }

// FFT designs for backends without a native FFT op.
const (
	// DefaultDirectMax is the largest length the graph FFT computes as one
	// DFT matrix product; longer transforms use the four-step split, with
	// the twiddles folded into the second product while both factors are
	// at most DirectMax. It is the fastest design measured on simplego at
	// the lengths the features use (docs/SIGNAL.md, "Graph path").
	DefaultDirectMax = 64
)

// fftPlan says how the graph builds its FFTs.
type fftPlan struct {
	// native uses the backend's FFT op on complex tensors.
	native bool
	// directMax is the largest length done as one DFT matrix product;
	// longer ones are split n = n1·n2 (four-step Cooley–Tukey) with the
	// sub-transforms done the same way.
	directMax int
	// folded uses foldedFourStep where both factors are direct (the
	// default; Options.SeparateTwiddles turns it off).
	folded bool
}

// nativeFFT tells whether backend b has an FFT op and the complex dtype
// that goes with float dtype dt.
func nativeFFT(b backends.Backend, dt dtypes.DType) bool {
	caps := b.Capabilities()
	cdt := dtypes.Complex64
	if dt == dtypes.Float64 {
		cdt = dtypes.Complex128
	}
	for _, op := range []backends.OpType{backends.OpTypeFFT, backends.OpTypeComplex, backends.OpTypeReal, backends.OpTypeImag} {
		if !caps.Operations[op] {
			return false
		}
	}
	return caps.DTypes[cdt]
}

// fft transforms x along its last axis. The input's last axis holds the
// first nIn samples of a length-n sequence (the rest are zero); the result
// holds bins 0..nOut−1 of its DFT, forward (e^{−2πijk/n}) or inverse
// (e^{+2πijk/n}, scaled by 1/n as signal/fft's Inverse). n must be a power
// of two, 1 ≤ nIn ≤ n and 1 ≤ nOut ≤ n.
func (p fftPlan) fft(x cnode, nIn, n, nOut int, inverse bool) cnode {
	if n < 1 || n&(n-1) != 0 || nIn < 1 || nIn > n || nOut < 1 || nOut > n {
		panic(fmt.Sprintf("sigraph: bad FFT sizes in %d, n %d, out %d", nIn, n, nOut))
	}
	sign := -1.0
	if inverse {
		sign = 1
	}
	var y cnode
	switch {
	case p.native:
		y = nativeTransform(x, nIn, n, nOut, inverse)
		return y // XLA's inverse FFT already scales by 1/n
	case n <= max(p.directMax, 1):
		y = dftAxis(x, -1, nIn, n, nOut, sign)
	case p.folded && n <= p.directMax*p.directMax:
		y = foldedFourStep(x, nIn, n, nOut, sign)
	default:
		y = p.fourStep(x, nIn, n, nOut, sign)
	}
	if inverse {
		y.re = MulScalar(y.re, 1/float64(n))
		y.im = MulScalar(y.im, 1/float64(n))
	}
	return y
}

// nativeTransform uses the backend's complex FFT.
func nativeTransform(x cnode, nIn, n, nOut int, inverse bool) cnode {
	re, im := x.re, x.im
	if im == nil {
		im = ZerosLike(re)
	}
	if nIn < n {
		re, im = padLast(re, n-nIn), padLast(im, n-nIn)
	}
	c := Complex(re, im)
	if inverse {
		c = InverseFFT(c)
	} else {
		c = FFT(c)
	}
	out := cnode{Real(c), Imag(c)}
	if nOut < n {
		out.re, out.im = sliceLast(out.re, 0, nOut), sliceLast(out.im, 0, nOut)
	}
	return out
}

// fourStep computes the transform with n = n1·n2, sample j = n2·a + b and
// bin k = k1 + n1·k2:
//
//	X[k1 + n1·k2] = Σ_b W_n^{b·k1} · W_{n2}^{b·k2} · Σ_a x[n2·a + b] · W_{n1}^{a·k1}
//
// (W_m = e^{sign·2πi/m}): a length-n1 DFT over a for every b, a twiddle
// multiply, a length-n2 DFT over b for every k1, and one transpose. The
// zero tail (a ≥ nIn/n2) is skipped; only the k2 that reach bin nOut−1 are
// computed.
func (p fftPlan) fourStep(x cnode, nIn, n, nOut int, sign float64) cnode {
	lg := 0
	for 1<<lg < n {
		lg++
	}
	n1 := 1 << (lg / 2)
	n2 := n / n1
	if r := nIn % n2; r != 0 { // pad to whole rows
		x = cnode{padLast(x.re, n2-r), padOpt(x.im, n2-r)}
		nIn += n2 - r
	}
	rows := nIn / n2
	dims := x.re.Shape().Dimensions
	lead := dims[:len(dims)-1]
	shape := append(append([]int{}, lead...), rows, n2)
	x = cnode{Reshape(x.re, shape...), reshapeOpt(x.im, shape...)}
	// Step 1: DFT over a (axis −2) → [..., b, k1].
	var y cnode
	if n1 <= p.directMax {
		y = dftAxis(x, -2, rows, n1, n1, sign)
	} else {
		y = p.fftSign(cnode{swapLast(x.re), swapOpt(x.im)}, rows, n1, n1, sign)
	}
	// Twiddles W_n^{b·k1}, shape [n2, n1].
	tr, ti := make([]float64, n2*n1), make([]float64, n2*n1)
	for b := range n2 {
		for k1 := range n1 {
			th := 2 * math.Pi * float64((b*k1)%n) / float64(n)
			tr[b*n1+k1], ti[b*n1+k1] = math.Cos(th), sign*math.Sin(th)
		}
	}
	rank := y.re.Rank()
	twr := ExpandLeftToRank(constMatrix(y.re, tr, n2, n1), rank)
	twi := ExpandLeftToRank(constMatrix(y.re, ti, n2, n1), rank)
	y = cmul(y, cnode{twr, twi})
	// Step 2: DFT over b → [..., k1, k2].
	k2n := (nOut + n1 - 1) / n1
	if n2 <= p.directMax {
		y = dftAxis(y, -2, n2, n2, k2n, sign)
	} else {
		y = p.fftSign(cnode{swapLast(y.re), swapLast(y.im)}, n2, n2, k2n, sign)
	}
	// Bin k1 + n1·k2 → transpose to [..., k2, k1] and flatten.
	flat := append(append([]int{}, lead...), k2n*n1)
	out := cnode{Reshape(swapLast(y.re), flat...), Reshape(swapLast(y.im), flat...)}
	if k2n*n1 > nOut {
		out = cnode{sliceLast(out.re, 0, nOut), sliceLast(out.im, 0, nOut)}
	}
	return out
}

// fftSign is fft without the inverse scaling, for the sub-transforms.
func (p fftPlan) fftSign(x cnode, nIn, n, nOut int, sign float64) cnode {
	if n <= max(p.directMax, 1) {
		return dftAxis(x, -1, nIn, n, nOut, sign)
	}
	return p.fourStep(x, nIn, n, nOut, sign)
}

// dftAxis computes a length-n DFT along axis (−1 or −2) of x, whose axis
// holds the first nIn samples, as one matrix product: the real and
// imaginary parts are concatenated on that axis and contracted with the
// real block matrix [[C, S'], [−S', C]] (C = cos, S' = sign·sin of
// 2π·j·k/n), giving [re | im] of bins 0..nOut−1 on a new last axis.
func dftAxis(x cnode, axis, nIn, n, nOut int, sign float64) cnode {
	rowsIn := nIn
	lhs := x.re
	if x.im != nil {
		rowsIn = 2 * nIn
		lhs = Concatenate([]*Node{x.re, x.im}, axis)
	}
	m := make([]float64, rowsIn*2*nOut)
	cols := 2 * nOut
	for j := range nIn {
		for k := range nOut {
			th := 2 * math.Pi * float64((j*k)%n) / float64(n)
			c, s := math.Cos(th), sign*math.Sin(th)
			m[j*cols+k] = c
			m[j*cols+nOut+k] = s
			if x.im != nil {
				m[(nIn+j)*cols+k] = -s
				m[(nIn+j)*cols+nOut+k] = c
			}
		}
	}
	w := constMatrix(lhs, m, rowsIn, cols)
	ax := axis
	if ax < 0 {
		ax += lhs.Rank()
	}
	out := DotGeneral(lhs, []int{ax}, nil, w, []int{0}, nil)
	return cnode{sliceLast(out, 0, nOut), sliceLast(out, nOut, 2*nOut)}
}

// cmul multiplies two complex tensors (b must have both parts).
func cmul(a, b cnode) cnode {
	if a.im == nil {
		return cnode{Mul(a.re, b.re), Mul(a.re, b.im)}
	}
	return cnode{
		Sub(Mul(a.re, b.re), Mul(a.im, b.im)),
		Add(Mul(a.re, b.im), Mul(a.im, b.re)),
	}
}

// constMatrix returns v as a rows×cols constant of like's dtype.
func constMatrix(like *Node, v []float64, rows, cols int) *Node {
	g := like.Graph()
	if like.DType() == dtypes.Float32 {
		f := make([]float32, len(v))
		for i, x := range v {
			f[i] = float32(x)
		}
		return ConstTensor(g, tensors.FromFlatDataAndDimensions(f, rows, cols))
	}
	return ConstTensor(g, tensors.FromFlatDataAndDimensions(append([]float64(nil), v...), rows, cols))
}

// constVector returns v as a constant vector of like's dtype.
func constVector(like *Node, v []float64) *Node {
	return Reshape(constMatrix(like, v, 1, len(v)), len(v))
}

// sliceLast returns x[..., lo:hi].
func sliceLast(x *Node, lo, hi int) *Node {
	return SliceAxis(x, x.Rank()-1, AxisRange(lo, hi))
}

// padLast appends k zeros to x's last axis (simplego has no Pad op).
func padLast(x *Node, k int) *Node {
	dims := append([]int{}, x.Shape().Dimensions...)
	dims[len(dims)-1] = k
	z := Zeros(x.Graph(), shapes.Make(x.DType(), dims...))
	return Concatenate([]*Node{x, z}, -1)
}

func padOpt(x *Node, k int) *Node {
	if x == nil {
		return nil
	}
	return padLast(x, k)
}

func reshapeOpt(x *Node, dims ...int) *Node {
	if x == nil {
		return nil
	}
	return Reshape(x, dims...)
}

// swapLast transposes the last two axes.
func swapLast(x *Node) *Node { return Transpose(x, x.Rank()-2, x.Rank()-1) }

func swapOpt(x *Node) *Node {
	if x == nil {
		return nil
	}
	return swapLast(x)
}
