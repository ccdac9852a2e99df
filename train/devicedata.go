package train

import (
	"fmt"
	"math"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/tensors"
)

// deviceData is a Dataset's copy on a device: the whole of x and y,
// uploaded once, and a graph that gathers a batch's rows from them.
type deviceData struct {
	backend backends.Backend
	x, y    *tensors.Tensor
	gather  *graph.Exec
}

// Bytes is the memory the examples take (float32 x and y).
func (d *Dataset) Bytes() int64 { return 4 * int64(d.n) * int64(d.xDim+d.yDim) }

// OnDevice tells whether batches are gathered from a device-resident copy
// (PlaceOnDevice).
func (d *Dataset) OnDevice() bool { return d.dev != nil }

// PlaceOnDevice uploads the whole data set to backend's default device once
// if it takes at most budget bytes, and reports whether it did. Afterwards
// Next gathers each batch's rows on the device with a GoMLX graph, from
// indices taken from the same per-epoch permutation as the host path (a
// PCG shuffle seeded by the seed and the epoch, computed on the host: only
// the batch's indices, 4 bytes per example, travel per batch). Batches are
// therefore identical, in the same order, to the host path's, and
// DataPosition, checkpoints and resume work the same. A data set larger
// than budget (or a budget <= 0) stays on the host, streamed batch by
// batch. Calling it again with the same backend is a no-op.
func (d *Dataset) PlaceOnDevice(backend backends.Backend, budget int64) (bool, error) {
	if backend == nil {
		return false, fmt.Errorf("train: dataset: PlaceOnDevice needs a backend")
	}
	if d.dev != nil && d.dev.backend == backend {
		return true, nil
	}
	if budget <= 0 || d.Bytes() > budget || d.n > math.MaxInt32 {
		d.dev = nil
		return false, nil
	}
	dev := &deviceData{backend: backend}
	err := catch(func() {
		var err error
		host := tensors.FromFlatDataAndDimensions(d.x, d.n, d.xDim)
		if dev.x, err = host.OnDeviceClone(backend, 0); err != nil {
			panic(err)
		}
		host = tensors.FromFlatDataAndDimensions(d.y, d.n, d.yDim)
		if dev.y, err = host.OnDeviceClone(backend, 0); err != nil {
			panic(err)
		}
		dev.gather, err = graph.NewExec(backend, func(x, y, idx *graph.Node) (*graph.Node, *graph.Node) {
			return graph.Gather(x, idx), graph.Gather(y, idx)
		})
		if err != nil {
			panic(err)
		}
	})
	if err != nil {
		return false, fmt.Errorf("train: dataset: uploading %d examples (%d bytes) to %s: %w", d.n, d.Bytes(), backend.Name(), err)
	}
	d.dev = dev
	return true, nil
}

// gatherOnDevice returns the rows idx of the device-resident x and y.
func (d *Dataset) gatherOnDevice(idx []int32) (x, y *tensors.Tensor, err error) {
	it := tensors.FromFlatDataAndDimensions(idx, len(idx), 1)
	err = catch(func() {
		var execErr error
		x, y, execErr = d.dev.gather.Exec2(d.dev.x, d.dev.y, it)
		if execErr != nil {
			panic(execErr)
		}
	})
	if err != nil {
		return nil, nil, fmt.Errorf("train: dataset: gathering a batch of %d on %s: %w", len(idx), d.dev.backend.Name(), err)
	}
	return x, y, nil
}
