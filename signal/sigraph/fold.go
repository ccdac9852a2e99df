package sigraph

import (
	"math"

	. "github.com/gomlx/gomlx/pkg/core/graph" //nolint:revive // graph code reads better unqualified
)

// foldedFourStep is the four-step transform with the twiddles folded into
// the second matrix product: the parts are stacked on a component axis,
// the length-n1 DFT over a is one DotGeneral contracting (component, a),
// and the second product, batched over k1, contracts (component, b) with
// W_n^{b·(k1 + n1·k2)} — the twiddle and the length-n2 DFT in one matrix.
// One transpose brings bin k1 + n1·k2 in order. Both factors must be at
// most directMax (no recursion).
func foldedFourStep(x cnode, nIn, n, nOut int, sign float64) cnode {
	lg := 0
	for 1<<lg < n {
		lg++
	}
	n1 := 1 << (lg / 2)
	n2 := n / n1
	if r := nIn % n2; r != 0 {
		x = cnode{padLast(x.re, n2-r), padOpt(x.im, n2-r)}
		nIn += n2 - r
	}
	rows := nIn / n2
	dims := x.re.Shape().Dimensions
	lead := dims[:len(dims)-1]
	nl := len(lead)
	comps := 1
	shape := append(append([]int{}, lead...), 1, rows, n2)
	stack := Reshape(x.re, shape...)
	if x.im != nil {
		comps = 2
		stack = Concatenate([]*Node{stack, Reshape(x.im, shape...)}, nl)
	}
	// Step 1: M1[c, a, c', k1], contract (c, a) → [lead..., b, c', k1].
	m1 := make([]float64, comps*rows*2*n1)
	for c := range comps {
		for a := range rows {
			for k := range n1 {
				th := 2 * math.Pi * float64((a*k)%n1) / float64(n1)
				co, si := math.Cos(th), sign*math.Sin(th)
				base := (c*rows + a) * 2 * n1
				if c == 0 { // re → (re, im)
					m1[base+k], m1[base+n1+k] = co, si
				} else { // im → (re, im)
					m1[base+k], m1[base+n1+k] = -si, co
				}
			}
		}
	}
	w1 := Reshape(constMatrix(stack, m1, comps*rows, 2*n1), comps, rows, 2, n1)
	y := DotGeneral(stack, []int{nl, nl + 1}, nil, w1, []int{0, 1}, nil) // [lead..., b, c', k1]
	// Step 2: M2[k1, c', b, c'', k2], batch k1, contract (c', b) → [k1, lead..., c'', k2].
	k2n := (nOut + n1 - 1) / n1
	m2 := make([]float64, n1*2*n2*2*k2n)
	for k1 := range n1 {
		for b := range n2 {
			for k2 := range k2n {
				th := 2 * math.Pi * float64((b*(k1+n1*k2))%n) / float64(n)
				co, si := math.Cos(th), sign*math.Sin(th)
				at := func(c, cc int) int { return (((k1*2+c)*n2+b)*2+cc)*k2n + k2 }
				m2[at(0, 0)], m2[at(0, 1)] = co, si
				m2[at(1, 0)], m2[at(1, 1)] = -si, co
			}
		}
	}
	w2 := Reshape(constMatrix(y, m2, n1, 2*n2*2*k2n), n1, 2, n2, 2, k2n)
	z := DotGeneral(y, []int{nl + 1, nl}, []int{nl + 2}, w2, []int{1, 2}, []int{0}) // [k1, lead..., c'', k2]
	// → [lead..., c'', k2, k1] and flatten the bins.
	perm := make([]int, 0, nl+3)
	for i := range nl + 2 {
		perm = append(perm, i+1)
	}
	perm = append(perm, 0)
	z = TransposeAllAxes(z, perm...)
	z = Reshape(z, append(append([]int{}, lead...), 2, k2n*n1)...)
	re := Reshape(SliceAxis(z, nl, AxisRange(0, 1)), append(append([]int{}, lead...), k2n*n1)...)
	im := Reshape(SliceAxis(z, nl, AxisRange(1, 2)), append(append([]int{}, lead...), k2n*n1)...)
	if k2n*n1 > nOut {
		re, im = sliceLast(re, 0, nOut), sliceLast(im, 0, nOut)
	}
	return cnode{re, im}
}
