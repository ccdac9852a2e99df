package train

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"github.com/gomlx/gomlx/pkg/core/tensors"
	"github.com/gomlx/gomlx/pkg/ml/train/losses"

	"github.com/gotrain/gotrain/device"
	"github.com/gotrain/gotrain/rng"
)

func TestDeviceDataSameBatchesAsHost(t *testing.T) {
	tests := []struct {
		name   string
		budget int64
		onDev  bool
	}{
		{"fits", 1 << 20, true},
		{"exactly-fits", 64 * 5 * 4, true},
		{"too-large", 64*5*4 - 1, false},
		{"off", 0, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			host, dev := synthData(t, 64, false), synthData(t, 64, false)
			placed, err := dev.PlaceOnDevice(testBackend(t), tc.budget)
			if err != nil {
				t.Fatal(err)
			}
			if placed != tc.onDev || dev.OnDevice() != tc.onDev {
				t.Fatalf("placed %v, OnDevice %v; want %v", placed, dev.OnDevice(), tc.onDev)
			}
			// 24 per batch over 64 examples: crosses two epoch boundaries.
			for i := range 7 {
				hx, hy, hNew, err := host.Next(24)
				if err != nil {
					t.Fatal(err)
				}
				dx, dy, dNew, err := dev.Next(24)
				if err != nil {
					t.Fatal(err)
				}
				if tc.onDev && (!dx.IsOnDevice(0) || !dy.IsOnDevice(0)) {
					t.Fatalf("batch %d: the device path returned host tensors", i)
				}
				if hNew != dNew || host.Position() != dev.Position() {
					t.Fatalf("batch %d: new epoch %v/%v, position %+v/%+v", i, hNew, dNew, host.Position(), dev.Position())
				}
				for _, pair := range [][2]*tensors.Tensor{{hx, dx}, {hy, dy}} {
					if !pair[0].Shape().Equal(pair[1].Shape()) {
						t.Fatalf("batch %d: shape %s vs %s", i, pair[0].Shape(), pair[1].Shape())
					}
					a, b := tensors.MustCopyFlatData[float32](pair[0]), tensors.MustCopyFlatData[float32](pair[1])
					for j := range a {
						if math.Float32bits(a[j]) != math.Float32bits(b[j]) {
							t.Fatalf("batch %d value %d: host %g, device %g", i, j, a[j], b[j])
						}
					}
				}
			}
		})
	}
}

func TestDeviceDataRunMatchesHostRun(t *testing.T) {
	run := func(budgetMiB int) *Harness {
		h := newHarness(t, testConfig(func(c *Config) {
			c.Steps, c.BatchSize, c.DeviceDataBudgetMiB, c.Progress = 6, 16, budgetMiB, ProgressOff
		}), synthData(t, 64, false))
		if _, err := h.Run(); err != nil {
			t.Fatal(err)
		}
		return h
	}
	host, dev := run(0), run(1)
	if host.Data().OnDevice() || !dev.Data().OnDevice() {
		t.Fatalf("OnDevice: host run %v, device run %v", host.Data().OnDevice(), dev.Data().OnDevice())
	}
	if !strings.Contains(dev.Perf().Summary(), "data: device-resident") {
		t.Errorf("summary does not say where the data lives:\n%s", dev.Perf().Summary())
	}
	for _, name := range trainables {
		a, b := floats(t, host, name), floats(t, dev, name)
		for i := range a {
			if d := math.Abs(float64(a[i] - b[i])); d > 1e-6 {
				t.Fatalf("%s[%d]: host %g, device %g", name, i, a[i], b[i])
			}
		}
	}
	if host.Data().Position() != dev.Data().Position() {
		t.Errorf("position %+v vs %+v", host.Data().Position(), dev.Data().Position())
	}
}

// sameBatch fails the test unless the host and device batches are equal bit
// for bit.
func sameBatch(t *testing.T, what string, host, dev []*tensors.Tensor) {
	t.Helper()
	for k := range host {
		if !host[k].Shape().Equal(dev[k].Shape()) {
			t.Fatalf("%s: shape %s vs %s", what, host[k].Shape(), dev[k].Shape())
		}
		a, b := tensors.MustCopyFlatData[float32](host[k]), tensors.MustCopyFlatData[float32](dev[k])
		for j := range a {
			if math.Float32bits(a[j]) != math.Float32bits(b[j]) {
				t.Fatalf("%s value %d: host %g, device %g", what, j, a[j], b[j])
			}
		}
	}
}

func TestDeviceDataNoPerBatchUpload(t *testing.T) {
	// Steps: batch sizes and, where set, a SetPosition (a resume) first.
	type step struct {
		size int
		seek *DataPosition
	}
	tests := []struct {
		name    string
		shuffle bool
		steps   []step
	}{
		{"shuffled, epoch boundaries", true, []step{{size: 24}, {size: 24}, {size: 24}, {size: 24}, {size: 24}, {size: 24}, {size: 24}}},
		{"shuffled, sizes change", true, []step{{size: 16}, {size: 24}, {size: 16}, {size: 7}, {size: 24}, {size: 16}}},
		{"shuffled, resume", true, []step{{size: 24}, {size: 24, seek: &DataPosition{Epoch: 5, Offset: 40}}, {size: 24}, {size: 24}, {size: 24}}},
		{"resume at the end of an epoch", true, []step{{size: 16, seek: &DataPosition{Epoch: 2, Offset: 64}}, {size: 16}}},
		{"in order", false, []step{{size: 24}, {size: 24}, {size: 24}, {size: 24, seek: &DataPosition{Epoch: 1, Offset: 10}}, {size: 24}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			host, dev := synthData(t, 64, false), synthData(t, 64, false)
			host.shuffle, dev.shuffle = tc.shuffle, tc.shuffle
			if ok, err := dev.PlaceOnDevice(testBackend(t), 1<<20); err != nil || !ok {
				t.Fatalf("PlaceOnDevice: %v, %v", ok, err)
			}
			d := dev.dev
			// What the batch graph is called with, checked when it is called
			// (the position tensors are freed after the call).
			var (
				args    []*tensors.Tensor
				onDev   []bool
				batchSh []bool
				size    int
			)
			d.onExec = func(a []*tensors.Tensor) {
				args, onDev, batchSh = a, nil, nil
				for _, t := range a {
					onDev = append(onDev, t.IsOnDevice(0))
					batchSh = append(batchSh, t.Shape().Rank() > 0 && t.Shape().Dimensions[0] == size)
				}
			}
			uploads := d.uploads // x and y
			for i, st := range tc.steps {
				prevEpoch, prevOffset := d.epoch, d.offset
				size = st.size
				if st.seek != nil {
					for _, ds := range []*Dataset{host, dev} {
						if err := ds.SetPosition(*st.seek); err != nil {
							t.Fatal(err)
						}
					}
				}
				hx, hy, hNew, err := host.Next(st.size)
				if err != nil {
					t.Fatal(err)
				}
				dx, dy, dNew, err := dev.Next(st.size)
				if err != nil {
					t.Fatal(err)
				}
				// Only the first batch, and the first after a SetPosition, upload
				// the position (two scalars); no batch uploads anything else.
				want := uploads
				if i == 0 || st.seek != nil {
					want += 2
				}
				if d.uploads != want {
					t.Fatalf("batch %d: %d uploads so far, want %d", i, d.uploads, want)
				}
				uploads = d.uploads
				// The batch graph's arguments are the resident data and the
				// position the previous batch's graph returned: no per-batch host tensor.
				if len(args) != 4 || args[0] != d.x || args[1] != d.y {
					t.Fatalf("batch %d: the graph's arguments are not the resident data", i)
				}
				if i > 0 && st.seek == nil && (args[2] != prevEpoch || args[3] != prevOffset) {
					t.Fatalf("batch %d: the position argument is not the previous batch's output", i)
				}
				for k := range args {
					if !onDev[k] {
						t.Fatalf("batch %d: argument %d is not on the device", i, k)
					}
					if batchSh[k] {
						t.Fatalf("batch %d: argument %d has the batch's size", i, k)
					}
				}
				if !dx.IsOnDevice(0) || !dy.IsOnDevice(0) {
					t.Fatalf("batch %d: the device path returned host tensors", i)
				}
				if hNew != dNew || host.Position() != dev.Position() {
					t.Fatalf("batch %d: new epoch %v/%v, position %+v/%+v", i, hNew, dNew, host.Position(), dev.Position())
				}
				// The device-resident position is the host's.
				e, o := tensors.ToScalar[uint64](d.epoch), tensors.ToScalar[uint64](d.offset)
				if p := host.Position(); e != uint64(p.Epoch) || o != uint64(p.Offset) {
					t.Fatalf("batch %d: device position (%d, %d), host %+v", i, e, o, p)
				}
				sameBatch(t, "batch", []*tensors.Tensor{hx, hy}, []*tensors.Tensor{dx, dy})
			}
		})
	}
}

func TestShuffleOrderIsPermute(t *testing.T) {
	// The host order of epoch e is rng.Permute(j, n, rng.PermutationKey(seed, e)):
	// checked for every row of epochs 0 and 1 of synthData (seed 3), each
	// batch row identified by its x values.
	d := synthData(t, 64, false)
	rowOf := func(b *tensors.Tensor) []int {
		flat := tensors.MustCopyFlatData[float32](b)
		var rows []int
		for k := 0; k < len(flat); k += 4 {
			for i := range 64 {
				if bytes.Equal(f32bytes(flat[k:k+4]), f32bytes(d.x[4*i:4*i+4])) {
					rows = append(rows, i)
				}
			}
		}
		return rows
	}
	for epoch := range 2 {
		x, _, _, err := d.Next(64)
		if err != nil {
			t.Fatal(err)
		}
		got := rowOf(x)
		for j, i := range got {
			if want := int(rng.Permute(uint64(j), 64, rng.PermutationKey(3, uint64(epoch)))); i != want {
				t.Fatalf("epoch %d offset %d: row %d, want %d", epoch, j, i, want)
			}
		}
		if len(got) != 64 {
			t.Fatalf("epoch %d: %d rows identified", epoch, len(got))
		}
	}
}

func f32bytes(v []float32) []byte {
	b := make([]byte, 0, 4*len(v))
	for _, f := range v {
		u := math.Float32bits(f)
		b = append(b, byte(u), byte(u>>8), byte(u>>16), byte(u>>24))
	}
	return b
}

func TestDeviceDataResumeMatchesHostRun(t *testing.T) {
	// 7 steps of 16 over 64 examples cross an epoch boundary; the device run
	// stops after 3 and resumes in a new harness with a new Dataset.
	const total, k = 7, 3
	cfg := func(dir string, steps, budget int, resume bool) Config {
		return testConfig(func(c *Config) {
			c.BatchSize, c.Steps, c.NoCheckpoint, c.CheckpointDir, c.CheckpointEvery, c.Resume = 16, steps, false, dir, 100, resume
			c.DeviceDataBudgetMiB, c.Progress = budget, ProgressOff
		})
	}
	run := func(c Config) *Harness {
		h, err := New(testBackend(t), c, noisyMLP, losses.MeanSquaredError, synthData(t, 64, false))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := h.Run(); err != nil {
			t.Fatal(err)
		}
		return h
	}
	host := run(cfg(t.TempDir(), total, 0, false))
	dir := t.TempDir()
	run(cfg(dir, k, 1, false))
	dev := run(cfg(dir, total, 1, true))
	if host.Data().OnDevice() || !dev.Data().OnDevice() {
		t.Fatalf("OnDevice: host run %v, device run %v", host.Data().OnDevice(), dev.Data().OnDevice())
	}
	if host.Data().Position() != dev.Data().Position() || host.Data().Position().Epoch != 1 {
		t.Errorf("position %+v vs %+v, want epoch 1", host.Data().Position(), dev.Data().Position())
	}
	wh, wd := weights(t, host), weights(t, dev)
	if len(wh) != len(wd) {
		t.Fatalf("%d variables on the host run, %d on the device run", len(wh), len(wd))
	}
	for name, b := range wh {
		if !bytes.Equal(b, wd[name]) {
			t.Errorf("variable %s differs between the host run and the resumed device run", name)
		}
	}
}

// benchmarkNext times Dataset.Next for an MNIST-like set (4096 × 784, batch 256).
func benchmarkNext(b *testing.B, onDevice bool) {
	const n, xDim, batch = 4096, 784, 256
	x := make([]float32, n*xDim)
	for i := range x {
		x[i] = float32(i % 251)
	}
	d, err := NewDataset(x, xDim, make([]float32, n), 1, 1, true)
	if err != nil {
		b.Fatal(err)
	}
	if onDevice {
		_, be, err := device.Open("go")
		if err != nil {
			b.Fatal(err)
		}
		if ok, err := d.PlaceOnDevice(be, 1<<30); err != nil || !ok {
			b.Fatal(ok, err)
		}
	}
	b.ResetTimer()
	for range b.N {
		bx, by, _, err := d.Next(batch)
		if err != nil {
			b.Fatal(err)
		}
		bx.FinalizeAll()
		by.FinalizeAll()
	}
}

func BenchmarkDatasetNextHost(b *testing.B)   { benchmarkNext(b, false) }
func BenchmarkDatasetNextDevice(b *testing.B) { benchmarkNext(b, true) }
