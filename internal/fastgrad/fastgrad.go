// Package fastgrad replaces GoMLX's gradients of Dot and DotGeneral by
// gradients written as DotGenerals, as JAX does: GoMLX writes them as
// broadcast, multiply and reduce-sum, which XLA fuses and the pure-Go
// backends materialise (an MLP step 17x slower on simplego). Package device
// registers them when it opens a pure-Go backend; package train re-exports
// Register as RegisterFastDotGradients.
package fastgrad

import (
	"reflect"
	"sort"
	"sync"

	"github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/shapes"
)

var (
	fastDotMu   sync.Mutex
	stockDotVJP = graph.VJPRegistration[graph.NodeTypeDot]
	stockDGVJP  = graph.VJPRegistration[graph.NodeTypeDotGeneral]
)

// Register replaces GoMLX's gradients of Dot and DotGeneral
// (broadcast, multiply, reduce-sum: fast on XLA, which fuses them, and slow on
// simplego, which materialises the broadcast) by gradients written as
// DotGenerals, as JAX does. The values are the same up to rounding. It
// changes graph.VJPRegistration, a process-wide table, so it affects graphs
// built afterwards on every backend; it is safe to call more than once.
func Register() {
	fastDotMu.Lock()
	defer fastDotMu.Unlock()
	graph.VJPRegistration[graph.NodeTypeDot] = fastDotVJP
	graph.VJPRegistration[graph.NodeTypeDotGeneral] = fastDotGeneralVJP
}

// RestoreStock undoes Register (for tests and benchmarks).
func RestoreStock() {
	fastDotMu.Lock()
	defer fastDotMu.Unlock()
	graph.VJPRegistration[graph.NodeTypeDot] = stockDotVJP
	graph.VJPRegistration[graph.NodeTypeDotGeneral] = stockDGVJP
}

// fastDotVJP is the gradient of graph.Dot expressed with DotGeneral.
func fastDotVJP(node *graph.Node, vjps []*graph.Node, outShape shapes.Shape) []*graph.Node {
	in := node.Inputs()
	if len(in) != 2 || len(vjps) != 1 {
		return stockDotVJP(node, vjps, outShape)
	}
	lhs, rhs, v := in[0], in[1], vjps[0]
	switch {
	case lhs.Rank() == 2 && rhs.Rank() == 2: // [i,j]·[j,k] -> [i,k]
		return []*graph.Node{
			graph.DotGeneral(v, []int{1}, nil, rhs, []int{1}, nil), // [i,j]
			graph.DotGeneral(lhs, []int{0}, nil, v, []int{0}, nil), // [j,k]
		}
	case lhs.Rank() == 2 && rhs.Rank() == 1: // [i,j]·[j] -> [i]
		return []*graph.Node{
			graph.DotGeneral(v, nil, nil, rhs, nil, nil),           // [i,j]
			graph.DotGeneral(lhs, []int{0}, nil, v, []int{0}, nil), // [j]
		}
	}
	return stockDotVJP(node, vjps, outShape)
}

// dotGeneralParams reads the axes of a DotGeneral node. GoMLX v0.26 keeps
// them in unexported fields, which reflect can read.
func dotGeneralParams(node *graph.Node) (lc, lb, rc, rb []int, ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	inputs := reflect.ValueOf(node).Elem().FieldByName("inputs")
	if !inputs.IsValid() || inputs.IsNil() {
		return nil, nil, nil, nil, false
	}
	p := inputs.Elem()
	if p.Kind() == reflect.Pointer {
		p = p.Elem()
	}
	ints := func(name string) []int {
		f := p.FieldByName(name)
		out := make([]int, f.Len())
		for i := range out {
			out[i] = int(f.Index(i).Int())
		}
		return out
	}
	return ints("lhsContractingAxes"), ints("lhsBatchAxes"),
		ints("rhsContractingAxes"), ints("rhsBatchAxes"), true
}

// freeAxes lists, ascending, the axes of a rank-r operand that are neither
// contracting nor batch.
func freeAxes(rank int, contracting, batch []int) []int {
	used := make([]bool, rank)
	for _, a := range contracting {
		used[a] = true
	}
	for _, a := range batch {
		used[a] = true
	}
	var out []int
	for a := range rank {
		if !used[a] {
			out = append(out, a)
		}
	}
	return out
}

// fastDotGeneralVJP is the gradient of graph.DotGeneral expressed with
// DotGeneral and a transpose. The output axes of DotGeneral are
// [batch..., lhs free..., rhs free...].
func fastDotGeneralVJP(node *graph.Node, vjps []*graph.Node, outShape shapes.Shape) []*graph.Node {
	in := node.Inputs()
	lc, lb, rc, rb, ok := dotGeneralParams(node)
	if !ok || len(in) != 2 || len(vjps) != 1 {
		return stockDGVJP(node, vjps, outShape)
	}
	lhs, rhs, v := in[0], in[1], vjps[0]
	nb := len(lb)
	lf := freeAxes(lhs.Rank(), lc, lb)
	rf := freeAxes(rhs.Rank(), rc, rb)
	vBatch := make([]int, nb)
	for i := range vBatch {
		vBatch[i] = i
	}
	vLhsFree := make([]int, len(lf))
	for i := range vLhsFree {
		vLhsFree[i] = nb + i
	}
	vRhsFree := make([]int, len(rf))
	for i := range vRhsFree {
		vRhsFree[i] = nb + len(lf) + i
	}
	grad := func(this *graph.Node, thisBatch, thisFree, thisContr []int,
		vContract []int, other *graph.Node, otherBatch, otherFree, otherContr []int) *graph.Node {
		// Result axes: [batch..., this free..., other's contracting axes in ascending order].
		r := graph.DotGeneral(v, vContract, vBatch, other, otherFree, otherBatch)
		sortedOther := append([]int(nil), otherContr...)
		sort.Ints(sortedOther)
		rankIn := make(map[int]int, len(sortedOther))
		for i, a := range sortedOther {
			rankIn[a] = i
		}
		perm := make([]int, this.Rank())
		for i, a := range thisBatch {
			perm[a] = i
		}
		for i, a := range thisFree {
			perm[a] = nb + i
		}
		for c, a := range thisContr {
			perm[a] = nb + len(thisFree) + rankIn[otherContr[c]]
		}
		identity := true
		for i, p := range perm {
			identity = identity && i == p
		}
		if identity {
			return r
		}
		return graph.TransposeAllAxes(r, perm...)
	}
	return []*graph.Node{
		grad(lhs, lb, lf, lc, vRhsFree, rhs, rb, rf, rc),
		grad(rhs, rb, rf, rc, vLhsFree, lhs, lb, lf, lc),
	}
}
