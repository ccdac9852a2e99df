//go:build !(js && wasm)

package forestwgpu

import (
	"bytes"
	"testing"

	"github.com/gotrain/gotrain/forest"
)

// TestHostMatchesNative grows forests with the host side of the WebGPU
// learner (its split search, growth order, subtraction and chunking) over
// the reference kernels (the device stages computed on the CPU by their
// definitions) and checks them against forest.Fit node for node and by
// the model file's bytes. The WGSL kernels are checked against the same
// reference under WebGPU (gpu_test.go, web/ npm test).
func TestHostMatchesNative(t *testing.T) {
	seeds := []uint64{1, 7}
	if testing.Short() {
		seeds = seeds[:1]
	}
	for _, c := range growCases(t, seeds) {
		t.Run(c.name, func(t *testing.T) {
			want, err := forest.Fit(c.ds, c.opt)
			if err != nil {
				t.Fatal(err)
			}
			var ref *refKernels
			got, rep, err := fitWith(c.ds, c.opt, func(pr *prepared, trees int) (kernels, int, error) {
				ref = newRefKernels(pr, c.maxScatter)
				return ref, max(1, trees/2), nil
			}, c.window)
			if err != nil {
				t.Fatal(err)
			}
			if d := diffTrees(want, got); d != "" {
				t.Fatal(d)
			}
			var wb, gb bytes.Buffer
			if err := want.Save(&wb); err != nil {
				t.Fatal(err)
			}
			if err := got.Save(&gb); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(wb.Bytes(), gb.Bytes()) {
				t.Fatal("model files differ")
			}
			if rep.Levels == 0 || rep.ScatteredNodes == 0 || rep.DerivedNodes == 0 || ref.calls["histogram"] == 0 {
				t.Fatalf("report %+v, calls %v: no level grown", rep, ref.calls)
			}
			if (c.maxScatter > 0 || c.window > 0) && rep.HistogramCalls <= rep.Levels {
				t.Fatalf("%d histogram passes for %d levels with at most %d slots a pass: no level was chunked", rep.HistogramCalls, rep.Levels, c.maxScatter)
			}
		})
	}
}
