package forest

import (
	"testing"

	"github.com/gotrain/gotrain/internal/cpufeat/cpufeattest"
)

// startAVX512 is useAVX512 as the package started (tests change it).
var startAVX512 = useAVX512

// TestKernelPathFollowsGOTRAIN_CPU checks that the AVX-512 tree walk is on
// exactly when the build, the CPU (AVX-512 F and DQ) and GOTRAIN_CPU allow
// it, in this process and under every setting.
func TestKernelPathFollowsGOTRAIN_CPU(t *testing.T) {
	w := cpufeattest.Current()
	if want := kernelsBuilt && w.AVX512DQ; startAVX512 != want {
		t.Errorf("GOTRAIN_CPU=%q: AVX-512 walk %v, want %v", w.Setting, startAVX512, want)
	}
	cpufeattest.EachSetting(t)
}
