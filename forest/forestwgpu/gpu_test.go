//go:build js && wasm

// These tests run the WGSL kernels on a WebGPU adapter: under Node with
// the npm package webgpu (see web/scripts/go-test-exec.mjs),
//
//	GOOS=js GOARCH=wasm go test -exec "node $PWD/web/scripts/go-test-exec.mjs" ./forest/forestwgpu
//
// and fail, with the reason, where there is none.
package forestwgpu

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"

	"github.com/gotrain/gotrain/forest"
	"github.com/gotrain/gotrain/forest/internal/core"
	"github.com/gotrain/gotrain/internal/webgpu"
)

var (
	devOnce sync.Once
	dev     *webgpu.Device
	devErr  error
)

func device(t *testing.T) *webgpu.Device {
	t.Helper()
	devOnce.Do(func() {
		dev, devErr = webgpu.Open()
		if devErr == nil {
			fmt.Printf("adapter: %s\n", dev.Info)
		}
	})
	if devErr != nil {
		t.Fatal(devErr)
	}
	return dev
}

func prep(t *testing.T, c growCase) *prepared {
	t.Helper()
	pr, err := core.Prepare[forest.Options, *forest.Forest](c.ds, c.opt)
	if err != nil {
		t.Fatal(err)
	}
	return pr
}

// TestBootstrapMatchesCore: the WGSL bootstrap (64-bit mixing in u32
// pairs) gives core.BootstrapCounts's counts.
func TestBootstrapMatchesCore(t *testing.T) {
	d := device(t)
	pr := prep(t, growCase{ds: synthetic(50, 3, false, 1), opt: forest.Options{Task: forest.Regression, Trees: 1}})
	k, _, err := newGPUKernels(d, pr, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer k.Close()
	for _, c := range []struct {
		seed            uint64
		t0, trees, n, m int
	}{{0, 0, 3, 442, 442}, {1, 5, 4, 1000, 700}, {0xFEDCBA9876543210, 1000, 2, 77777, 123457}, {42, 99, 1, 3, 10}} {
		got, err := k.Bootstrap(c.seed, c.t0, c.trees, c.n, c.m)
		if err != nil {
			t.Fatal(err)
		}
		want := make([]int32, c.n)
		for tr := 0; tr < c.trees; tr++ {
			core.BootstrapCounts(c.seed, c.t0+tr, c.m, want)
			for i, w := range want {
				if got[tr*c.n+i] != uint32(w) {
					t.Fatalf("seed %#x tree %d row %d: count %d, want %d", c.seed, c.t0+tr, i, got[tr*c.n+i], w)
				}
			}
		}
	}
}

// TestHistogramsMatchReference: the WGSL histograms (64-bit statistics in
// u32 pairs with carries) equal the int64 sums, weights near 2^32 and
// negative target sums included, and the partition moves rows as the
// reference does.
func TestHistogramsMatchReference(t *testing.T) {
	d := device(t)
	for _, c := range []growCase{
		{name: "regression", ds: synthetic(300, 7, false, 3), opt: forest.Options{Task: forest.Regression, Trees: 3}},
		{name: "classification", ds: synthetic(300, 7, true, 4), opt: forest.Options{Task: forest.Classification, Trees: 3}},
		{name: "digits", ds: embedded(t, "digits"), opt: forest.Options{Task: forest.Classification, Trees: 2}},
	} {
		t.Run(c.name, func(t *testing.T) {
			pr := prep(t, c)
			k, _, err := newGPUKernels(d, pr, 3)
			if err != nil {
				t.Fatal(err)
			}
			defer k.Close()
			ref := newRefKernels(pr, 0)
			r := rand.New(rand.NewPCG(7, 7))
			const T, slots = 3, 11
			n := pr.Rows
			weight := make([]uint32, T*n)
			slot := make([]int32, T*n)
			for i := range weight {
				switch r.IntN(4) {
				case 0: // out of the bag
				case 1: // the low word overflows after two such rows
					weight[i] = 0xF0000000 + uint32(r.IntN(1000))
				default:
					weight[i] = uint32(1 + r.IntN(5))
				}
				slot[i] = -1
				if weight[i] > 0 {
					slot[i] = int32(r.IntN(slots))
				}
			}
			if pr.Class == nil {
				// Weights near 2^32 times the fixed-point target would
				// overflow int64; both sides wrap alike, but keep them real.
				for i := range weight {
					weight[i] &= 0xFFFF
				}
			}
			for _, kk := range []kernels{k, ref} {
				if err := kk.SetBatch(T, weight, slot); err != nil {
					t.Fatal(err)
				}
			}
			hmap := make([]int32, slots)
			for s := range hmap {
				hmap[s] = int32(s) - 2 // slots 0 and 1 are not scattered
			}
			for _, ch := range [][2]int{{0, slots - 2}, {3, 7}} {
				got, err := k.Histograms(hmap, ch[0], ch[1])
				if err != nil {
					t.Fatal(err)
				}
				want, _ := ref.Histograms(hmap, ch[0], ch[1])
				if i := firstDiff(got, want); i >= 0 {
					t.Fatalf("chunk %v: statistic %d (slot %d, entry %d, component %d) = %d, want %d", ch, i, i/(pr.Entries*pr.Stride()), i/pr.Stride()%pr.Entries, i%pr.Stride(), got[i], want[i])
				}
				big := false
				for _, v := range want {
					big = big || v > 1<<32 || v < -(1<<32)
				}
				if !big {
					t.Fatalf("chunk %v: no statistic beyond 32 bits: the carries are not exercised", ch)
				}
			}
			// A partition: slot s splits on feature s mod p at bin 2, missing
			// values left for odd s; slot 3 is not split, children of slot 5
			// are leaves.
			dec := make([]int32, 4*slots)
			for s := 0; s < slots; s++ {
				dec[4*s], dec[4*s+1], dec[4*s+2], dec[4*s+3] = int32(s%pr.Cols), 2|int32(s%2)<<8, int32(2*s), int32(2*s+1)
			}
			dec[4*3] = -1
			dec[4*5+2], dec[4*5+3] = -1, -1
			for _, kk := range []kernels{k, ref} {
				if err := kk.Move(dec); err != nil {
					t.Fatal(err)
				}
			}
			raw, err := k.slot.ReadUint32(0, T*n)
			if err != nil {
				t.Fatal(err)
			}
			for i, v := range raw {
				if int32(v) != ref.slot[i] {
					t.Fatalf("row %d: slot %d after the partition, want %d", i, int32(v), ref.slot[i])
				}
			}
			if !slices.Contains(ref.slot, 21) || !slices.Contains(ref.slot, -1) {
				t.Fatal("the partition test moves no row to a right child or out")
			}
		})
	}
}

func firstDiff(a, b []int64) int {
	if len(a) != len(b) {
		return 0
	}
	for i := range a {
		if a[i] != b[i] {
			return i
		}
	}
	return -1
}

// TestFitMatchesNative grows forests on WebGPU and checks them against
// forest.Fit node for node and by the model file's bytes.
func TestFitMatchesNative(t *testing.T) {
	d := device(t)
	seeds := []uint64{1}
	for _, c := range growCases(t, seeds) {
		t.Run(c.name, func(t *testing.T) {
			want, err := forest.Fit(c.ds, c.opt)
			if err != nil {
				t.Fatal(err)
			}
			got, rep, err := fitWith(c.ds, c.opt, func(pr *prepared, trees int) (kernels, int, error) {
				k, tr, err := newGPUKernels(d, pr, trees)
				if err == nil && c.maxScatter > 0 {
					k.maxS = c.maxScatter
				}
				return k, tr, err
			}, c.window)
			if err != nil {
				t.Fatal(err)
			}
			if dt := diffTrees(want, got); dt != "" {
				t.Fatal(dt)
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
			if rep.Levels == 0 || rep.ScatteredNodes == 0 {
				t.Fatalf("report %+v: no level grown", rep)
			}
		})
	}
}

// TestPredictMatchesNative: the traversal kernel and the host's sums give
// forest.Forest.PredictValues's and Predict's bits, for rows with missing
// values and values outside the training range, in one batch of rows and
// in several.
func TestPredictMatchesNative(t *testing.T) {
	d := device(t)
	for _, c := range []growCase{
		{name: "synthetic-reg", ds: synthetic(300, 7, false, 3), opt: forest.Options{Task: forest.Regression, Trees: 5, Seed: 3}},
		{name: "synthetic-cls", ds: synthetic(300, 7, true, 4), opt: forest.Options{Task: forest.Classification, Trees: 5, Seed: 4}},
		{name: "digits", ds: embedded(t, "digits"), opt: forest.Options{Task: forest.Classification, Trees: 4, Seed: 2}},
	} {
		t.Run(c.name, func(t *testing.T) {
			f, err := forest.Fit(c.ds, c.opt)
			if err != nil {
				t.Fatal(err)
			}
			x := append([]float64(nil), c.ds.X...)
			r := rand.New(rand.NewPCG(1, 2))
			for i := range x {
				if r.IntN(10) == 0 {
					x[i] = x[i]*3 + 100*r.NormFloat64() // outside the range, or not
				}
			}
			rows := c.ds.Rows
			want, err := f.PredictValues(x, rows)
			if err != nil {
				t.Fatal(err)
			}
			wantP, err := f.Predict(x, rows)
			if err != nil {
				t.Fatal(err)
			}
			p, err := NewPredictor(d, f)
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			for _, rowsMax := range []int{p.rowsMax, 37} {
				p.rowsMax = rowsMax
				got, err := p.PredictValues(x, rows)
				if err != nil {
					t.Fatal(err)
				}
				for i := range want {
					if !sameFloat(got[i], want[i]) {
						t.Fatalf("rows %d a batch: value %d = %v, want %v", rowsMax, i, got[i], want[i])
					}
				}
				gotP, err := p.Predict(x, rows)
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(gotP, wantP) {
					t.Fatalf("rows %d a batch: Predict differs", rowsMax)
				}
			}
		})
	}
}
