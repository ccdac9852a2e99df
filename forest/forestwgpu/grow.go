package forestwgpu

import (
	"errors"
	"time"

	"github.com/gotrain/gotrain/data"
	"github.com/gotrain/gotrain/forest"
	"github.com/gotrain/gotrain/forest/internal/core"
	"github.com/gotrain/gotrain/forest/internal/level"
)

// prepared is the host-side preparation forest.Fit shares with Fit.
type prepared = level.Prepared

// kernels are the device's stages of a fit (kernels_js.go runs them as
// WGSL on WebGPU), as the level-wise host (forest/internal/level) takes
// them, and their release.
type kernels interface {
	level.Kernels
	Close()
}

// Report describes a WebGPU fit.
type Report = level.Report

// errCategorical is the refusal of categorical features.
var errCategorical = errors.New("forestwgpu: fit: categorical features are refused on WebGPU: a categorical split orders each node's categories by their statistics, a per-node sort the WebGPU learner's histogram scan does not do; use the native learner")

// fitWith grows a forest with the device stages newK returns, the split
// search and every float64 on the host (level.Grow). It equals
// forest.Fit(d, opt) node for node. window > 0 sets the frontier nodes
// the host searches at once (tests); 0 takes the host's default.
func fitWith(d *data.Dataset, opt forest.Options, newK func(pr *prepared, trees int) (kernels, int, error), window int) (*forest.Forest, *Report, error) {
	start := time.Now()
	if d == nil {
		return nil, nil, errors.New("forestwgpu: fit: nil data set")
	}
	if d.HasCategories() {
		return nil, nil, errCategorical
	}
	pr, err := core.Prepare[forest.Options, *forest.Forest](d, opt)
	if err != nil {
		return nil, nil, err
	}
	if d.HasCategories() { // found while reading the columns
		return nil, nil, errCategorical
	}
	k, trees, err := newK(pr, pr.Options.Trees)
	if err != nil {
		return nil, nil, err
	}
	defer k.Close()
	rep := &Report{}
	f, err := level.Grow("forestwgpu: fit", pr, k, trees, window, rep)
	if err != nil {
		return nil, nil, err
	}
	rep.Seconds = time.Since(start).Seconds()
	return f, rep, nil
}
