package cpubackend

import (
	"sync"
	"sync/atomic"

	"github.com/gomlx/gomlx/backends"

	"github.com/gotrain/gotrain/gemm"
)

// Packed weights.
//
// A recurrent network multiplies the same weight at every step: 100 float32
// DotGenerals with one rhs node per layer and direction in the char-LSTM's
// train step. SGEMM packs its B operand in every call, which for products
// with few rows (the batch) costs a large share of the call. At Compile,
// groupPackedOperands gives the GEMM DotGenerals that share an rhs node (and
// its layout) a group; at run time the first product of a group packs the
// rhs once (gemm.PackB) and every product of the group reads that packing
// (gemm.SgemmPackedB, the same bits as gemm.Sgemm). The packings live until
// the execution ends. Values are immutable within an execution, so the rhs
// cannot change between the products of a group (a buffer reused in place
// is reused only by its last consumer).

// packGroupsFormed counts the groups formed since the process started (tests).
var packGroupsFormed atomic.Int64

// groupPackedOperands assigns pack groups to the reachable single-item
// GEMM DotGenerals whose rhs node is shared with another one.
func groupPackedOperands(b *Builder) {
	if !b.backend.useGEMM {
		return
	}
	_, _, seen := countUses(b)
	type key struct {
		rhs    int
		layout gemmLayout
	}
	members := map[key][]*dotGeneralNodeData{}
	var order []key
	for i, n := range b.nodes {
		if !seen[i] || n.opType != backends.OpTypeDotGeneral || n.fused != nil || len(n.inputs) != 2 {
			continue
		}
		p, ok := n.data.(*dotGeneralNodeData)
		if !ok {
			continue
		}
		l, ok := dotGeneralGEMM(p, n.inputs[0].shape, n.inputs[1].shape)
		if !ok || l.batch != 1 {
			continue
		}
		k := key{n.inputs[1].builderIdx, gemmLayout{transB: l.transB, batch: 1, n: l.n, k: l.k}}
		if members[k] == nil {
			order = append(order, k)
		}
		members[k] = append(members[k], p)
	}
	for _, k := range order {
		if ps := members[k]; len(ps) >= 2 {
			b.packGroups++
			packGroupsFormed.Add(1)
			for _, p := range ps {
				p.packGroup = b.packGroups
			}
		}
	}
}

// packedOperands holds one execution's packings, by group.
type packedOperands struct {
	mu sync.Mutex
	b  []*gemm.PackedB
}

// get returns group g's packing of rhs, packing it on the first call.
func (po *packedOperands) get(groups, g int, l gemmLayout, rhs []float32, ldb int) (*gemm.PackedB, error) {
	po.mu.Lock()
	defer po.mu.Unlock()
	if len(po.b) < groups {
		po.b = append(po.b, make([]*gemm.PackedB, groups-len(po.b))...)
	}
	if pb := po.b[g]; pb != nil {
		return pb, nil
	}
	pb, err := gemm.PackB(l.transB, l.k, l.n, rhs, ldb)
	if err != nil {
		return nil, err
	}
	po.b[g] = pb
	return pb, nil
}

// release returns every packing to gemm's pool.
func (po *packedOperands) release() {
	po.mu.Lock()
	defer po.mu.Unlock()
	for i, pb := range po.b {
		if pb != nil {
			pb.Release()
			po.b[i] = nil
		}
	}
}

// execDotGeneralPacked runs a DotGeneral of pack group p.packGroup with the
// execution's packing of its rhs.
func execDotGeneralPacked(backend *Backend, node *Node, inputs []*Buffer, po *packedOperands, groups int) (*Buffer, error) {
	p := node.data.(*dotGeneralNodeData)
	lhs, rhs := inputs[0], inputs[1]
	l, _ := dotGeneralGEMM(p, lhs.shape, rhs.shape)
	lda, ldb := l.k, l.n
	if l.transA {
		lda = l.m
	}
	if l.transB {
		ldb = l.k
	}
	pb, err := po.get(groups, p.packGroup-1, l, rhs.flat.([]float32), ldb)
	if err != nil {
		return nil, err
	}
	out := backend.getBufferForShape(node.shape)
	if err := gemm.SgemmPackedB(l.transA, l.m, 1, lhs.flat.([]float32), lda, pb, 0, out.flat.([]float32), l.n); err != nil {
		backend.putBuffer(out)
		return nil, err
	}
	return out, nil
}
