package train

import (
	"math/rand/v2"
	"testing"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/pkg/core/tensors"

	"github.com/gotrain/gotrain/device"
)

func testBackend(t *testing.T) backends.Backend {
	t.Helper()
	e, b, err := device.Open("go")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	if !IsSimpleGo(b) {
		t.Fatalf("device go opened %q", b.Name())
	}
	return b
}

func randTensor(r *rand.Rand, dims ...int) *tensors.Tensor {
	n := 1
	for _, d := range dims {
		n *= d
	}
	data := make([]float64, n)
	for i := range data {
		data[i] = r.NormFloat64()
	}
	return tensors.FromFlatDataAndDimensions(data, dims...)
}
