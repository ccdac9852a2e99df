package gemm

import (
	"slices"
	"testing"

	"github.com/gotrain/gotrain/internal/cpufeat/cpufeattest"
)

// startPath is the micro-kernel in use when the package started.
var startPath = Path()

// TestKernelPathFollowsGOTRAIN_CPU checks that the micro-kernels on offer
// and the one in use at start-up are those the build, the CPU and
// GOTRAIN_CPU allow, in this process and under every setting.
func TestKernelPathFollowsGOTRAIN_CPU(t *testing.T) {
	w := cpufeattest.Current()
	var want []string
	if kernelsBuilt && w.AVX512F {
		want = append(want, "avx512")
	}
	if kernelsBuilt && w.AVX2FMA {
		want = append(want, "avx2")
	}
	want = append(want, "go")
	if got := paths(); !slices.Equal(got, want) {
		t.Errorf("GOTRAIN_CPU=%q: paths %v, want %v", w.Setting, got, want)
	}
	if startPath != want[0] {
		t.Errorf("GOTRAIN_CPU=%q: path %q at start-up, want %q", w.Setting, startPath, want[0])
	}
	cpufeattest.EachSetting(t)
}
