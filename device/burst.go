package device

import (
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/tensors"
)

// BurstSize is the side of the square float32 matrices Burst multiplies.
const BurstSize = 1024

// Burst multiplies two BurstSize×BurstSize float32 matrices on d (reducing
// the product to a scalar, which is copied back so every call has finished)
// again and again for about duration, after one untimed warm-up call, and
// returns the rate reached in GFLOP/s. At least one call is timed.
func Burst(d Device, duration time.Duration) (gflops float64, err error) {
	backend, err := open(d)
	if err != nil {
		return 0, fmt.Errorf("burst on %s: %w", d.Name, err)
	}
	defer backend.Finalize()
	defer func() {
		if r := recover(); r != nil {
			gflops, err = 0, fmt.Errorf("burst on %s: %v", d.Name, r)
		}
	}()
	e, err := graph.NewExec(backend, func(x, y *graph.Node) *graph.Node {
		return graph.ReduceAllSum(graph.MatMul(x, y))
	})
	if err != nil {
		return 0, fmt.Errorf("burst on %s: building graph: %w", d.Name, err)
	}
	defer e.Finalize()
	dev := backends.DeviceNum(d.Index)
	rng := rand.New(rand.NewPCG(3, 4))
	var inputs [2]*tensors.Tensor
	for i := range inputs {
		data := make([]float32, BurstSize*BurstSize)
		for j := range data {
			data[j] = float32(rng.Float64()*2-1) / BurstSize
		}
		t, err := tensors.FromFlatDataAndDimensions(data, BurstSize, BurstSize).OnDeviceClone(backend, dev)
		if err != nil {
			return 0, fmt.Errorf("burst on %s: copying inputs to the device: %w", d.Name, err)
		}
		defer func() { _ = t.FinalizeAll() }()
		inputs[i] = t
	}
	step := func() error {
		outs, _, err := e.ExecWithGraphOnDevice(dev, inputs[0], inputs[1])
		if err != nil {
			return fmt.Errorf("burst on %s: %w", d.Name, err)
		}
		_ = tensors.ToScalar[float32](outs[0]) // waits for the result
		return outs[0].FinalizeAll()
	}
	if err := step(); err != nil {
		return 0, err
	}
	start := time.Now()
	calls := 0
	for calls == 0 || time.Since(start) < duration {
		if err := step(); err != nil {
			return 0, err
		}
		calls++
	}
	const flops = 2 * BurstSize * BurstSize * BurstSize
	return float64(calls) * flops / time.Since(start).Seconds() / 1e9, nil
}
