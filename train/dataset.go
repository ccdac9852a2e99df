package train

import (
	"fmt"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/pkg/core/dtypes"
	"github.com/gomlx/gomlx/pkg/core/shapes"
	"github.com/gomlx/gomlx/pkg/core/tensors"

	"github.com/gotrain/gotrain/rng"
)

// DataPosition is where a Dataset is in its stream of batches.
type DataPosition struct {
	// Epoch is the number of completed passes.
	Epoch int `json:"epoch"`
	// Offset is the index, in this epoch's shuffled order, of the next example.
	Offset int `json:"offset"`
}

// Dataset is an in-memory float32 data set of N examples that yields
// shuffled batches. The order of epoch e depends only on the seed and e: its
// j-th example is row rng.Permute(j, N, rng.PermutationKey(seed, e)) (row j
// without shuffling), so a position (DataPosition) is enough to resume the
// exact stream, and the device path (PlaceOnDevice) computes the same order
// on the device. A last partial batch of an epoch is dropped.
type Dataset struct {
	x, y       []float32
	xDim, yDim int
	n          int
	seed       uint64
	shuffle    bool
	pos        DataPosition
	perm       rng.Permutation // the permutation of epoch permEpoch
	permEpoch  int
	dev        *deviceData // nil: batches are copied from the host
}

// NewDataset returns a Dataset of the rows of x (n × xDim) and y (n × yDim),
// stored row-major. shuffle reorders the examples every epoch with seed.
func NewDataset(x []float32, xDim int, y []float32, yDim int, seed int64, shuffle bool) (*Dataset, error) {
	if xDim < 1 || yDim < 1 || len(x)%xDim != 0 || len(y)%yDim != 0 || len(x)/xDim != len(y)/yDim || len(x) == 0 {
		return nil, fmt.Errorf("train: dataset: x has %d values for width %d, y has %d for width %d: want the same positive number of rows",
			len(x), xDim, len(y), yDim)
	}
	return &Dataset{x: x, y: y, xDim: xDim, yDim: yDim, n: len(x) / xDim, seed: uint64(seed), shuffle: shuffle, permEpoch: -1}, nil
}

// Len is the number of examples.
func (d *Dataset) Len() int { return d.n }

// Position returns the current position.
func (d *Dataset) Position() DataPosition { return d.pos }

// SetPosition moves to p (as read from a checkpoint).
func (d *Dataset) SetPosition(p DataPosition) error {
	if p.Epoch < 0 || p.Offset < 0 || p.Offset > d.n {
		return fmt.Errorf("train: dataset: invalid position %+v for %d examples", p, d.n)
	}
	d.pos = p
	return nil
}

// row returns the row of the example at offset j of epoch's order.
func (d *Dataset) row(epoch, j int) int {
	if !d.shuffle {
		return j
	}
	if d.permEpoch != epoch {
		d.perm = rng.NewPermutation(uint64(d.n), rng.PermutationKey(d.seed, uint64(epoch)))
		d.permEpoch = epoch
	}
	return int(d.perm.Index(uint64(j)))
}

// Next returns the next batch of size examples as tensors of shape
// [size, xDim] and [size, yDim], and whether it started a new epoch.
func (d *Dataset) Next(size int) (x, y *tensors.Tensor, newEpoch bool, err error) {
	return d.NextPart(size, 0, 1)
}

// NextPart is Next for one of parts ranks that share each batch: it moves
// past the next batch of size examples (a multiple of parts), as Next does,
// and returns the part-th of its parts equal slices, size/parts examples,
// in the batch's order. Every rank calling NextPart with its own part
// gets the whole batch between them. Data placed on the device
// (PlaceOnDevice) is read whole only (parts 1).
func (d *Dataset) NextPart(size, part, parts int) (x, y *tensors.Tensor, newEpoch bool, err error) {
	return d.nextPart(size, part, parts, nil)
}

// nextPart is NextPart; with a backend whose buffers the host shares (gotrain's
// cpu backend, simplego), a batch streamed from the host is gathered straight
// into two of its buffers, the tensors holding them on the device: one copy of
// the rows instead of three (into a slice, into the tensor, into the buffer),
// and no allocation once the backend's buffer pool holds them. The tensors are
// meant for the step's inputs: reading them on the host copies them back.
func (d *Dataset) nextPart(size, part, parts int, shared backends.Backend) (x, y *tensors.Tensor, newEpoch bool, err error) {
	if parts < 1 || part < 0 || part >= parts || size%parts != 0 {
		return nil, nil, false, fmt.Errorf("train: dataset: part %d of %d of a batch of %d: want 0 <= part < parts and a batch that is a multiple of parts", part, parts, size)
	}
	if parts > 1 && d.dev != nil {
		return nil, nil, false, fmt.Errorf("train: dataset: a batch split in %d parts: the data set is placed on the device, which serves whole batches only", parts)
	}
	if size < 1 || size > d.n {
		return nil, nil, false, fmt.Errorf("train: dataset: batch size %d: want 1..%d (the number of examples)", size, d.n)
	}
	start := d.pos
	if start.Offset+size > d.n {
		start = DataPosition{Epoch: start.Epoch + 1}
		newEpoch = true
	}
	if d.dev != nil {
		x, y, err = d.nextOnDevice(start, size)
		if err != nil {
			return nil, nil, false, err
		}
		d.pos = DataPosition{Epoch: start.Epoch, Offset: start.Offset + size}
		return x, y, newEpoch, nil
	}
	share := size / parts
	if shared != nil && shared.HasSharedBuffers() {
		if x, y, err = d.gatherShared(shared, start, part*share, share); err != nil {
			return nil, nil, false, err
		}
		d.pos = DataPosition{Epoch: start.Epoch, Offset: start.Offset + size}
		return x, y, newEpoch, nil
	}
	bx := make([]float32, 0, share*d.xDim)
	by := make([]float32, 0, share*d.yDim)
	for j := start.Offset + part*share; j < start.Offset+(part+1)*share; j++ {
		i := d.row(start.Epoch, j)
		bx = append(bx, d.x[i*d.xDim:(i+1)*d.xDim]...)
		by = append(by, d.y[i*d.yDim:(i+1)*d.yDim]...)
	}
	d.pos = DataPosition{Epoch: start.Epoch, Offset: start.Offset + size}
	return tensors.FromFlatDataAndDimensions(bx, share, d.xDim), tensors.FromFlatDataAndDimensions(by, share, d.yDim), newEpoch, nil
}

// gatherShared copies the n examples from offset start.Offset+first of
// start's epoch into new shared buffers of backend b and returns them as
// tensors [n, xDim] and [n, yDim].
func (d *Dataset) gatherShared(b backends.Backend, start DataPosition, first, n int) (x, y *tensors.Tensor, err error) {
	bufX, flatX, err := b.NewSharedBuffer(0, shapes.Make(dtypes.Float32, n, d.xDim))
	if err != nil {
		return nil, nil, fmt.Errorf("train: dataset: a batch buffer on %s: %w", b.Name(), err)
	}
	bufY, flatY, err := b.NewSharedBuffer(0, shapes.Make(dtypes.Float32, n, d.yDim))
	if err != nil {
		_ = b.BufferFinalize(bufX)
		return nil, nil, fmt.Errorf("train: dataset: a batch buffer on %s: %w", b.Name(), err)
	}
	bx, by := flatX.([]float32), flatY.([]float32)
	for k := range n {
		i := d.row(start.Epoch, start.Offset+first+k)
		copy(bx[k*d.xDim:(k+1)*d.xDim], d.x[i*d.xDim:(i+1)*d.xDim])
		copy(by[k*d.yDim:(k+1)*d.yDim], d.y[i*d.yDim:(i+1)*d.yDim])
	}
	if x, err = tensors.FromBuffer(b, bufX); err == nil {
		y, err = tensors.FromBuffer(b, bufY)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("train: dataset: a batch on %s: %w", b.Name(), err)
	}
	return x, y, nil
}
