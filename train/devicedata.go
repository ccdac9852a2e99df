package train

import (
	"fmt"
	"math"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/pkg/core/dtypes"
	"github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/shapes"
	"github.com/gomlx/gomlx/pkg/core/tensors"

	"github.com/gotrain/gotrain/rng/rnggraph"
)

// deviceData is a Dataset's copy on a device: the whole of x and y,
// uploaded once, the data position (epoch and offset, uint64 scalars) kept
// on the device, and per batch size a graph that advances the position and
// gathers the batch's rows, computing the epoch's permutation on the device.
type deviceData struct {
	backend backends.Backend
	x, y    *tensors.Tensor
	batch   map[int]*graph.Exec // by batch size

	// epoch and offset are the device-resident position; they hold pos
	// when valid. The graph's outputs replace them after every batch, so
	// they are uploaded only by PlaceOnDevice and after SetPosition.
	epoch, offset *tensors.Tensor
	pos           DataPosition
	valid         bool

	uploads int                          // host-to-device copies made (for tests)
	onExec  func(args []*tensors.Tensor) // called with a batch graph's arguments (for tests)
}

// Bytes is the memory the examples take (float32 x and y).
func (d *Dataset) Bytes() int64 { return 4 * int64(d.n) * int64(d.xDim+d.yDim) }

// OnDevice tells whether batches are gathered from a device-resident copy
// (PlaceOnDevice).
func (d *Dataset) OnDevice() bool { return d.dev != nil }

// PlaceOnDevice uploads the whole data set to backend's default device once
// if it takes at most budget bytes, and reports whether it did. Afterwards
// Next runs, for each batch, a GoMLX graph that advances a data position
// kept on the device (epoch and offset), computes the batch's rows with the
// same per-epoch permutation as the host path (rng.Permute, built with
// package rng/rnggraph from integer ops) and gathers them: nothing is copied
// from the host per batch (the position is uploaded once more only after
// SetPosition). Batches are therefore identical, in the same order, to the
// host path's, and DataPosition, checkpoints and resume work the same. A
// data set larger than budget (or a budget <= 0) stays on the host,
// streamed batch by batch. Calling it again with the same backend is a
// no-op.
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
	dev := &deviceData{backend: backend, batch: make(map[int]*graph.Exec)}
	var err error
	if dev.x, err = dev.upload(tensors.FromFlatDataAndDimensions(d.x, d.n, d.xDim)); err == nil {
		dev.y, err = dev.upload(tensors.FromFlatDataAndDimensions(d.y, d.n, d.yDim))
	}
	if err != nil {
		return false, fmt.Errorf("train: dataset: uploading %d examples (%d bytes) to %s: %w", d.n, d.Bytes(), backend.Name(), err)
	}
	d.dev = dev
	return true, nil
}

// upload copies a host tensor to the device.
func (dev *deviceData) upload(t *tensors.Tensor) (*tensors.Tensor, error) {
	var out *tensors.Tensor
	err := Catch(func() {
		var err error
		if out, err = t.OnDeviceClone(dev.backend, 0); err != nil {
			panic(err)
		}
	})
	if err != nil {
		return nil, err
	}
	dev.uploads++
	return out, nil
}

// syncPosition makes the device-resident position hold pos, uploading it
// if it holds another one (after SetPosition or a failed batch).
func (dev *deviceData) syncPosition(pos DataPosition) error {
	if dev.valid && dev.pos == pos {
		return nil
	}
	e, err := dev.upload(tensors.FromScalar(uint64(pos.Epoch)))
	if err != nil {
		return err
	}
	o, err := dev.upload(tensors.FromScalar(uint64(pos.Offset)))
	if err != nil {
		return err
	}
	dev.replacePosition(e, o, pos)
	return nil
}

// replacePosition makes epoch and offset the device-resident position.
func (dev *deviceData) replacePosition(epoch, offset *tensors.Tensor, pos DataPosition) {
	for _, t := range []*tensors.Tensor{dev.epoch, dev.offset} {
		if t != nil {
			_ = t.FinalizeAll()
		}
	}
	dev.epoch, dev.offset, dev.pos, dev.valid = epoch, offset, pos, true
}

// batchGraph builds the graph of a batch of size rows: from the position
// (epoch, offset) it moves to the next epoch when fewer than size examples
// are left, gathers the rows of offsets start … start+size-1 of that epoch's
// order, and returns them with the new position.
func (d *Dataset) batchGraph(size int) func([]*graph.Node) []*graph.Node {
	n, seed, shuffle := uint64(d.n), d.seed, d.shuffle
	return func(in []*graph.Node) []*graph.Node {
		x, y, epoch, offset := in[0], in[1], in[2], in[3]
		g := x.Graph()
		sz := graph.Const(g, uint64(size))
		wrap := graph.GreaterThan(graph.Add(offset, sz), graph.Const(g, n))
		epoch = graph.Where(wrap, graph.Add(epoch, graph.Const(g, uint64(1))), epoch)
		start := graph.Where(wrap, graph.Const(g, uint64(0)), offset)
		rows := graph.Add(graph.Iota(g, shapes.Make(dtypes.Uint64, size), 0), start)
		if shuffle {
			key, err := rnggraph.PermutationKey(seed, epoch)
			if err != nil {
				panic(err) // inside graph building: Exec returns it as an error
			}
			if rows, err = rnggraph.Permute(rows, n, key); err != nil {
				panic(err)
			}
		}
		idx := graph.Reshape(graph.ConvertDType(rows, dtypes.Int32), size, 1)
		return []*graph.Node{graph.Gather(x, idx), graph.Gather(y, idx), epoch, graph.Add(start, sz)}
	}
}

// nextOnDevice returns the size rows from start (the position the host
// computed for this batch) gathered on the device, and advances the
// device-resident position.
func (d *Dataset) nextOnDevice(start DataPosition, size int) (x, y *tensors.Tensor, err error) {
	dev := d.dev
	err = Catch(func() {
		if err := dev.syncPosition(d.pos); err != nil {
			panic(err)
		}
		e := dev.batch[size]
		if e == nil {
			var err error
			if e, err = graph.NewExec(dev.backend, d.batchGraph(size)); err != nil {
				panic(err)
			}
			dev.batch[size] = e
		}
		args := []*tensors.Tensor{dev.x, dev.y, dev.epoch, dev.offset}
		if dev.onExec != nil {
			dev.onExec(args)
		}
		out, err := e.Exec(dev.x, dev.y, dev.epoch, dev.offset)
		if err != nil {
			panic(err)
		}
		if len(out) != 4 {
			panic(fmt.Errorf("the batch graph returned %d tensors, want 4", len(out)))
		}
		x, y = out[0], out[1]
		dev.replacePosition(out[2], out[3], DataPosition{Epoch: start.Epoch, Offset: start.Offset + size})
	})
	if err != nil {
		dev.valid = false
		return nil, nil, fmt.Errorf("train: dataset: gathering a batch of %d on %s: %w", size, dev.backend.Name(), err)
	}
	return x, y, nil
}
