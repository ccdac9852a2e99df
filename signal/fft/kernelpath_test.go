package fft

import (
	"testing"

	"github.com/gotrain/gotrain/internal/cpufeat/cpufeattest"
)

// TestKernelPathFollowsGOTRAIN_CPU checks that the AVX2 stage kernels were
// on at start-up (hasAVX2) exactly when the build, the CPU and GOTRAIN_CPU
// allow them, in this process and under every setting.
func TestKernelPathFollowsGOTRAIN_CPU(t *testing.T) {
	w := cpufeattest.Current()
	if want := kernelsBuilt && w.AVX2FMA; hasAVX2 != want {
		t.Errorf("GOTRAIN_CPU=%q: AVX2 stage kernels %v, want %v", w.Setting, hasAVX2, want)
	}
	cpufeattest.EachSetting(t)
}
