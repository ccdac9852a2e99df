//go:build js && wasm

package forestwgpu

import (
	"errors"
	"fmt"
	"math"

	"github.com/gotrain/gotrain/forest"
	"github.com/gotrain/gotrain/internal/webgpu"
)

// Predictor evaluates a forest on a WebGPU device: the rows are binned
// here (forest.Binner), the traversal to each (row, tree)'s leaf runs as
// WGSL (traverse.wgsl), and the leaf values are added here in tree order
// and multiplied by 1/trees, as forest.Forest.PredictValues does, so the
// predictions are the same bits.
type Predictor struct {
	dev      *webgpu.Device
	f        *forest.Forest
	k        *webgpu.Kernel
	nodes    *webgpu.Buffer
	roots    *webgpu.Buffer
	miss     *webgpu.Buffer
	maxDepth int
	rowsMax  int
}

// NewPredictor uploads f's trees to dev. Forests with categorical
// features are refused.
func NewPredictor(dev *webgpu.Device, f *forest.Forest) (_ *Predictor, err error) {
	if dev == nil {
		return nil, errors.New("forestwgpu: predict: no WebGPU device")
	}
	if f == nil || len(f.Trees) == 0 {
		return nil, errors.New("forestwgpu: predict: no trees")
	}
	if f.Binner == nil || f.Binner.HasCategorical() {
		return nil, errors.New("forestwgpu: predict: categorical features are refused on WebGPU (a split on a category set is not part of the traversal kernel); predict on the CPU")
	}
	for t := range f.Trees {
		if err := f.Trees[t].Check(); err != nil {
			return nil, fmt.Errorf("forestwgpu: predict: tree %d: %w", t, err)
		}
	}
	pr := &Predictor{dev: dev, f: f}
	defer func() {
		if err != nil {
			pr.Close()
		}
	}()
	var nodes []uint32
	roots := make([]uint32, len(f.Trees))
	for t := range f.Trees {
		tr := &f.Trees[t]
		roots[t] = uint32(len(nodes) / 3)
		for i, feat := range tr.Feature {
			left, bm := int32(-1), uint32(0)
			if feat >= 0 {
				left, bm = tr.Left[i], uint32(tr.Bin(i))
				if tr.MissingLeft(i) {
					bm |= 1 << 8
				}
			}
			nodes = append(nodes, uint32(left), uint32(max(feat, 0)), bm)
		}
		pr.maxDepth = max(pr.maxDepth, tr.Depth())
	}
	if 4*len(nodes) > dev.MaxStorageBinding {
		return nil, fmt.Errorf("forestwgpu: predict: the trees take %d bytes, more than the device's storage binding of %d", 4*len(nodes), dev.MaxStorageBinding)
	}
	miss := make([]uint32, f.NumFeatures)
	for j := range miss {
		miss[j] = uint32(f.Binner.MissingCode(j))
	}
	if pr.k, err = dev.Compile("traverse", shader("traverse"), 4); err != nil {
		return nil, err
	}
	if pr.nodes, err = upload(dev, "nodes", nodes); err != nil {
		return nil, err
	}
	if pr.roots, err = upload(dev, "roots", roots); err != nil {
		return nil, err
	}
	if pr.miss, err = upload(dev, "missing codes", miss); err != nil {
		return nil, err
	}
	T, p := int64(len(f.Trees)), int64(max(f.NumFeatures, 1))
	bind := int64(dev.MaxStorageBinding)
	pr.rowsMax = int(min(bind/(4*T), bind/p, (math.MaxUint32-1)/T, (math.MaxUint32-1)/p))
	if pr.rowsMax < 1 {
		return nil, fmt.Errorf("forestwgpu: predict: %d trees of %d features: one row's leaves do not fit the device's storage binding", T, p)
	}
	return pr, nil
}

// Close frees the predictor's buffers.
func (p *Predictor) Close() {
	for _, b := range []*webgpu.Buffer{p.nodes, p.roots, p.miss} {
		b.Destroy()
	}
}

// Leaves returns the leaf index (within its tree) that each row of the
// row-major matrix x reaches in each tree, row after row.
func (p *Predictor) Leaves(x []float64, rows int) ([]uint32, error) {
	f := p.f
	if rows < 0 || len(x) != rows*f.NumFeatures {
		return nil, fmt.Errorf("forestwgpu: predict: %w: %d values for %d rows of %d features", forest.ErrShape, len(x), rows, f.NumFeatures)
	}
	T := len(f.Trees)
	out := make([]uint32, 0, rows*T)
	codes := f.Binner.Transform(x, rows, f.NumFeatures, nil)
	var cb, lb *webgpu.Buffer
	defer func() { cb.Destroy(); lb.Destroy() }()
	for lo := 0; lo < rows; lo += p.rowsMax {
		hi := min(rows, lo+p.rowsMax)
		m := hi - lo
		var err error
		if cb == nil {
			if cb, err = p.dev.NewBuffer("prediction codes", min(rows, p.rowsMax)*f.NumFeatures); err != nil {
				return nil, err
			}
			if lb, err = p.dev.NewBuffer("leaves", 4*min(rows, p.rowsMax)*T); err != nil {
				return nil, err
			}
		}
		if err := cb.WriteUint32(0, packCodes(codes[lo*f.NumFeatures:hi*f.NumFeatures])); err != nil {
			return nil, err
		}
		inv := m * T
		params := []uint32{uint32(m), uint32(T), uint32(f.NumFeatures), uint32(p.maxDepth)}
		if err := p.k.Dispatch((inv+workgroup-1)/workgroup, params, cb, p.miss, p.nodes, p.roots, lb); err != nil {
			return nil, err
		}
		leaves, err := lb.ReadUint32(0, inv)
		if err != nil {
			return nil, err
		}
		out = append(out, leaves...)
	}
	return out, nil
}

// PredictValues returns, for each row of x, the mean over trees of the
// leaf values: forest.Forest.PredictValues's result, bit for bit.
func (p *Predictor) PredictValues(x []float64, rows int) ([]float64, error) {
	leaves, err := p.Leaves(x, rows)
	if err != nil {
		return nil, err
	}
	f := p.f
	d, T := f.Outputs(), len(f.Trees)
	out := make([]float64, rows*d)
	for i := 0; i < rows; i++ {
		o := out[i*d : (i+1)*d]
		for t := 0; t < T; t++ {
			v := f.Trees[t].Value[int(leaves[i*T+t])*d:]
			for q := range o {
				o[q] += v[q]
			}
		}
	}
	inv := 1 / float64(T)
	for i := range out {
		out[i] *= inv
	}
	return out, nil
}

// Predict returns one prediction per row: the regression value, or the
// index of the most probable class (the first on a tie), as
// forest.Forest.Predict.
func (p *Predictor) Predict(x []float64, rows int) ([]float64, error) {
	v, err := p.PredictValues(x, rows)
	if err != nil || p.f.Options.Task == forest.Regression {
		return v, err
	}
	d := p.f.Outputs()
	out := make([]float64, rows)
	for i := range out {
		best := 0
		for k, x := range v[i*d : (i+1)*d] {
			if x > v[i*d+best] {
				best = k
			}
		}
		out[i] = float64(best)
	}
	return out, nil
}
