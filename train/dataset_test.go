package train

import (
	"slices"
	"testing"

	"github.com/gomlx/gomlx/pkg/core/tensors"

	"github.com/gotrain/gotrain/cpubackend"
)

// TestNextPartSharedBuffers checks that batches gathered straight into a
// backend's shared buffers hold the rows NextPart returns, across an
// epoch's end and its reshuffle.
func TestNextPartSharedBuffers(t *testing.T) {
	const n, xd, yd = 37, 5, 3
	x, y := make([]float32, n*xd), make([]float32, n*yd)
	for i := range x {
		x[i] = float32(i)
	}
	for i := range y {
		y[i] = -float32(i)
	}
	plain, err := NewDataset(x, xd, y, yd, 7, true)
	if err != nil {
		t.Fatal(err)
	}
	viaBuffers, err := NewDataset(x, xd, y, yd, 7, true)
	if err != nil {
		t.Fatal(err)
	}
	be, err := cpubackend.New("")
	if err != nil {
		t.Fatal(err)
	}
	defer be.Finalize()
	for step := range 9 {
		wx, wy, wNew, err := plain.NextPart(8, 0, 1)
		if err != nil {
			t.Fatal(err)
		}
		gx, gy, gNew, err := viaBuffers.nextPart(8, 0, 1, be)
		if err != nil {
			t.Fatal(err)
		}
		if wNew != gNew || !slices.Equal(tensors.MustCopyFlatData[float32](gx), tensors.MustCopyFlatData[float32](wx)) ||
			!slices.Equal(tensors.MustCopyFlatData[float32](gy), tensors.MustCopyFlatData[float32](wy)) {
			t.Fatalf("step %d: the batch from shared buffers differs from NextPart's", step)
		}
		if !gx.IsOnDevice(0) {
			t.Fatalf("step %d: the batch is not on the device", step)
		}
	}
}
