package train

import (
	"math"
	"strings"
	"testing"

	"github.com/gomlx/gomlx/pkg/core/tensors"

	"github.com/gotrain/gotrain/device"
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
		be, err := OpenBackend(device.Device{Name: "go", Kind: device.SimpleGo, Class: "cpu"})
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
