package train

import (
	"math"
	"testing"

	"github.com/gomlx/gomlx/pkg/ml/train/losses"

	"github.com/gotrain/gotrain/device"
)

// TestCPUBackendTrainsLikeSimpleGo trains the same small MLP with Adam for
// 30 steps on gotrain's cpu backend and on simplego: the loss curves agree
// within float32 tolerance (they differ only by the rounding of the SGEMM's
// summation order), and both fall.
func TestCPUBackendTrainsLikeSimpleGo(t *testing.T) {
	curves := map[string][]float64{}
	for _, d := range []device.Device{
		{Name: "cpu", Kind: device.Native, Class: "cpu"},
		{Name: "go", Kind: device.SimpleGo, Class: "cpu"},
	} {
		_, be, err := device.Open(d.Name)
		if err != nil {
			t.Fatal(err)
		}
		if !IsPureGo(be) || IsAccelerator(be) {
			t.Fatalf("%s: opened %q", d.Name, be.Name())
		}
		cfg := testConfig(func(c *Config) { c.Steps, c.BatchSize = 30, 16 })
		h, err := New(be, cfg, mlp, losses.MeanSquaredError, synthData(t, 256, false))
		if err != nil {
			t.Fatal(err)
		}
		for range cfg.Steps {
			l, err := h.TrainStep()
			if err != nil {
				t.Fatalf("%s: %v", d.Name, err)
			}
			curves[d.Name] = append(curves[d.Name], l)
		}
		be.Finalize()
	}
	c, g := curves["cpu"], curves["go"]
	for i := range c {
		if d := math.Abs(c[i] - g[i]); d > 1e-4*(1+math.Abs(g[i])) {
			t.Fatalf("step %d: loss %g on cpu, %g on simplego", i, c[i], g[i])
		}
	}
	if !(c[len(c)-1] < 0.7*c[0]) {
		t.Errorf("loss did not fall on cpu: %g → %g", c[0], c[len(c)-1])
	}
}
