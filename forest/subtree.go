package forest

import (
	"errors"
	"fmt"

	"github.com/gotrain/gotrain/forest/internal/core"
)

func init() { core.RegisterSubtrees(newSubtrees) }

// subtrees grows subtrees for the level-wise learners (core.Subtrees): the
// data-parallel learner hands the small nodes of deep trees to Fit's own
// learner, which grows them with its row and sorted-list paths.
type subtrees struct {
	b *builder
}

func newSubtrees(pr *prepared) core.Subtrees {
	f := pr.NewForest(0)
	return &subtrees{b: newWorker(newBuilder(pr, f.Binner))}
}

func (s *subtrees) Grow(t int, rows []int32, weights []int64, key uint64, depth int, minW int64) ([]core.Node, error) {
	b := s.b
	if len(rows) != len(weights) || len(rows) == 0 {
		return nil, fmt.Errorf("forest: subtree of %d rows and %d weights", len(rows), len(weights))
	}
	if b.cat != nil {
		return nil, errors.New("forest: subtrees of categorical features are not grown for other learners")
	}
	b.tree = t
	b.nodes, b.values, b.sets = b.nodes[:0], b.values[:0], b.sets[:0]
	b.rows = append(b.rows[:0], rows...)
	tot := make([]int64, b.stride)
	for i, r := range rows {
		if r < 0 || int(r) >= b.n || weights[i] <= 0 || (i > 0 && r <= rows[i-1]) {
			return nil, fmt.Errorf("forest: subtree row %d (weight %d) out of order or range", r, weights[i])
		}
		b.rw[r] = weights[i]
		if b.wy != nil {
			b.wy[r] = weights[i] * b.yq[r]
		}
		b.addRow(tot, r)
	}
	b.minW = minW
	var hist []int64
	if b.dense && len(b.rows) > b.small {
		hist = b.getHist()
		b.accumulate(hist, b.rows)
	}
	b.grow(0, len(b.rows), depth, key, hist, -1, tot)
	// Breadth-first, children adjacent, as Tree keeps its nodes.
	d := b.stride - 2
	out := make([]core.Node, 0, len(b.nodes))
	queue := make([]int32, 1, len(b.nodes))
	for at := 0; at < len(queue); at++ {
		src := b.nodes[queue[at]]
		nd := core.Node{Feature: src.feature, N: src.n, W: src.w, Left: -1,
			Values: append([]float64(nil), b.values[int(queue[at])*d:int(queue[at]+1)*d]...)}
		if src.feature >= 0 {
			nd.Bin, nd.MissingLeft, nd.Gain = src.bin, src.missingLeft, src.gain
			nd.Left = int32(len(queue))
			queue = append(queue, src.left, src.right)
		}
		out = append(out, nd)
	}
	return out, nil
}
