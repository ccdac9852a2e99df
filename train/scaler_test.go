package train

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"github.com/gomlx/gomlx/pkg/ml/train/losses"
	"github.com/gomlx/gomlx/pkg/ml/train/optimizers"
)

// TestLossScalingSkipsNonFiniteStep runs dynamic loss scaling in float32
// (simplego has no float16) with a non-finite value injected into the second
// batch: that step must change no variable, halve the scale and be logged.
func TestLossScalingSkipsNonFiniteStep(t *testing.T) {
	for _, bad := range []float32{float32(math.Inf(1)), float32(math.NaN())} {
		for _, opt := range []string{OptimizerSGD, OptimizerAdamW} {
			t.Run(opt, func(t *testing.T) {
				d := synthData(t, 64, false)
				d.shuffle = false
				for i := 16; i < 32; i++ {
					d.y[i] = bad // batch 2 of 16
				}
				cfg := testConfig(func(c *Config) { c.Optimizer, c.BatchSize, c.Steps, c.DynamicLossScaling = opt, 16, 3, true })
				h, err := New(testBackend(t), cfg, mlp, losses.MeanSquaredError, d)
				if err != nil {
					t.Fatal(err)
				}
				var logged []string
				h.SetLogger(func(m string) { logged = append(logged, m) })
				l1, err := h.TrainStep()
				if err != nil || h.Skipped() || h.Scaler().Scale != DefaultInitialScale {
					t.Fatalf("step 1: loss %g, err %v, skipped %v, scale %g", l1, err, h.Skipped(), h.Scaler().Scale)
				}
				before := weights(t, h)
				if _, err := h.TrainStep(); err != nil {
					t.Fatal(err)
				}
				if !h.Skipped() || h.Scaler().Scale != DefaultInitialScale/2 || h.Scaler().Skipped != 1 {
					t.Fatalf("step 2: skipped %v, scale %g; want a skip and scale 2^15", h.Skipped(), h.Scaler().Scale)
				}
				after := weights(t, h)
				for name, b := range before {
					if strings.HasPrefix(name, HarnessScope) || strings.HasPrefix(name, "/optimizers/") {
						continue // the harness's own records and the learning rate
					}
					if !bytes.Equal(b, after[name]) {
						t.Errorf("%s changed on a skipped step", name)
					}
				}
				if len(logged) != 1 || !strings.Contains(logged[0], "step 2 skipped") {
					t.Errorf("log %q", logged)
				}
				if g := optimizers.GetGlobalStep(h.Context()); g != 1 {
					t.Errorf("global step %d after a skipped step, want 1", g)
				}
				l3, err := h.TrainStep()
				if err != nil || h.Skipped() || math.IsNaN(l3) {
					t.Fatalf("step 3: loss %g, err %v, skipped %v", l3, err, h.Skipped())
				}
				if g := optimizers.GetGlobalStep(h.Context()); g != 2 {
					t.Errorf("global step %d, want 2", g)
				}
				// The reported loss is unscaled: compare with a run without scaling.
				ref := newHarness(t, testConfig(func(c *Config) { c.Optimizer, c.BatchSize, c.Steps = opt, 16, 3 }), synthData(t, 64, false))
				ref.data.shuffle = false
				lr, err := ref.TrainStep()
				if err != nil || math.Abs(lr-l1) > 1e-5*math.Abs(lr) {
					t.Errorf("step-1 loss with scaling %g, without %g (%v)", l1, lr, err)
				}
			})
		}
	}
}
