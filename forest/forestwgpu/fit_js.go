//go:build js && wasm

package forestwgpu

import (
	"errors"

	"github.com/gotrain/gotrain/data"
	"github.com/gotrain/gotrain/forest"
	"github.com/gotrain/gotrain/internal/webgpu"
)

// Fit grows a forest on the WebGPU device dev: the bootstrap counts,
// every level's node histograms and the row partition run as WGSL
// kernels with exact integer results; the split search, the node values
// and every other float64 run here, in the wasm module, by forest.Fit's
// expressions. The forest equals forest.Fit(d, opt) node for node.
// Categorical features are refused.
func Fit(dev *webgpu.Device, d *data.Dataset, opt forest.Options) (*forest.Forest, *Report, error) {
	if dev == nil {
		return nil, nil, errors.New("forestwgpu: fit: no WebGPU device")
	}
	dev.ResetDispatches()
	f, rep, err := fitWith(d, opt, func(pr *prepared, trees int) (kernels, int, error) {
		return newGPUKernels(dev, pr, trees)
	}, 0)
	if err != nil {
		return nil, nil, err
	}
	rep.Adapter = dev.Info.String()
	rep.Stages, rep.Dispatches = dev.Dispatches()
	return f, rep, nil
}
