package forest

import (
	"testing"

	"github.com/gotrain/gotrain/internal/cpufeat/cpufeattest"
)

// startAVX512 and startVBMI2 are useAVX512 and useVBMI2 as the
// package started (tests change them).
var startAVX512, startVBMI2 = useAVX512, useVBMI2

// TestKernelPathFollowsGOTRAIN_CPU checks that the AVX-512 kernels (the
// tree walk's: AVX-512 F and DQ; the compress gather's: VBMI2) are on
// exactly when the build, the CPU and GOTRAIN_CPU allow them, in this
// process and under every setting.
func TestKernelPathFollowsGOTRAIN_CPU(t *testing.T) {
	w := cpufeattest.Current()
	if want := kernelsBuilt && w.AVX512DQ; startAVX512 != want {
		t.Errorf("GOTRAIN_CPU=%q: AVX-512 walk %v, want %v", w.Setting, startAVX512, want)
	}
	if want := kernelsBuilt && w.AVX512VBMI2; startVBMI2 != want {
		t.Errorf("GOTRAIN_CPU=%q: compress gather %v, want %v", w.Setting, startVBMI2, want)
	}
	cpufeattest.EachSetting(t)
}
