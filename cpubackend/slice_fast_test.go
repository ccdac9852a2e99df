package cpubackend

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/gomlx/gomlx/pkg/core/dtypes"
	"github.com/gomlx/gomlx/pkg/core/shapes"
)

// TestSliceContiguousMatchesGeneric compares the run-copying Slice with
// simplego's element walk on random shapes, bounds and dtypes.
func TestSliceContiguousMatchesGeneric(t *testing.T) {
	r := rand.New(rand.NewPCG(6, 6))
	for _, dt := range []dtypes.DType{dtypes.Float32, dtypes.Float64, dtypes.Int32, dtypes.Bool, dtypes.BFloat16, dtypes.Int8} {
		for trial := 0; trial < 200; trial++ {
			rank := 1 + r.IntN(4)
			in := make([]int, rank)
			starts, limits, strides := make([]int, rank), make([]int, rank), make([]int, rank)
			out := make([]int, rank)
			for j := range in {
				in[j] = 1 + r.IntN(6)
				starts[j] = r.IntN(in[j])
				limits[j] = starts[j] + 1 + r.IntN(in[j]-starts[j])
				if r.IntN(3) == 0 { // full axis
					starts[j], limits[j] = 0, in[j]
				}
				strides[j] = 1
				out[j] = limits[j] - starts[j]
			}
			operand := &Buffer{shape: shapes.Make(dt, in...), flat: reflect.MakeSlice(reflect.SliceOf(dt.GoType()), shapes.Make(dt, in...).Size(), shapes.Make(dt, in...).Size()).Interface()}
			raw := operand.mutableBytes()
			for i := range raw {
				raw[i] = byte(r.IntN(256))
			}
			if dt == dtypes.Bool {
				for i := range raw {
					raw[i] &= 1
				}
			}
			outShape := shapes.Make(dt, out...)
			mk := func() *Buffer {
				return &Buffer{shape: outShape, flat: reflect.MakeSlice(reflect.SliceOf(dt.GoType()), outShape.Size(), outShape.Size()).Interface()}
			}
			p := &sliceNode{starts, limits, strides}
			got, want := mk(), mk()
			if !sliceContiguous(operand, got, p) {
				t.Fatalf("%s %v: not handled", dt, in)
			}
			sliceDTypeMap.Get(dt).(func(operand, output *Buffer, params *sliceNode))(operand, want, p)
			if !bytes.Equal(got.mutableBytes(), want.mutableBytes()) {
				t.Fatalf("%s in %v starts %v limits %v: %v, want %v", dt, in, starts, limits, fmt.Sprint(got.flat), fmt.Sprint(want.flat))
			}
		}
	}
	// Strides other than 1 are left to the element walk.
	b := &Buffer{shape: shapes.Make(dtypes.Float32, 4), flat: make([]float32, 4)}
	if sliceContiguous(b, &Buffer{shape: shapes.Make(dtypes.Float32, 2), flat: make([]float32, 2)}, &sliceNode{[]int{0}, []int{4}, []int{2}}) {
		t.Error("a stride of 2 was handled")
	}
}
