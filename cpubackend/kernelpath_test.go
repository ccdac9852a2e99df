package cpubackend

import (
	"testing"

	"github.com/gomlx/gomlx/backends"

	"github.com/gotrain/gotrain/internal/cpufeat/cpufeattest"
)

// startFastmath and startVec are the AVX-512 switches as the package
// started, and the AVX2 ones after them (tests change them).
var startFastmath, startVec, startVecAVX2 = hasFastmathAVX512, hasVecAVX512, hasVecAVX2
var startFastmathAVX2, startTranspose, startSum = hasFastmathAVX2, hasTransposeAVX2, hasSumAVX2

// TestKernelPathFollowsGOTRAIN_CPU checks that the AVX-512 and AVX2 loops
// are on exactly when the build, the CPU and GOTRAIN_CPU allow them, and
// that an element-wise Add then takes a vector loop, in this process and
// under every setting.
func TestKernelPathFollowsGOTRAIN_CPU(t *testing.T) {
	w := cpufeattest.Current()
	if want := kernelsBuilt && w.AVX512DQ; startFastmath != want {
		t.Errorf("GOTRAIN_CPU=%q: AVX-512 Exp/Logistic/Tanh %v, want %v", w.Setting, startFastmath, want)
	}
	want := kernelsBuilt && w.AVX512F
	if startVec != want {
		t.Errorf("GOTRAIN_CPU=%q: AVX-512 vector operations %v, want %v", w.Setting, startVec, want)
	}
	want2 := kernelsBuilt && w.AVX2FMA
	for _, k := range []struct {
		name string
		on   bool
	}{{"vector operations", startVecAVX2}, {"Exp/Logistic/Tanh", startFastmathAVX2}, {"transpose tiles", startTranspose}, {"running sums", startSum}} {
		if k.on != want2 {
			t.Errorf("GOTRAIN_CPU=%q: AVX2 %s %v, want %v", w.Setting, k.name, k.on, want2)
		}
	}
	defer func(v, v2 bool) { hasVecAVX512, hasVecAVX2 = v, v2 }(hasVecAVX512, hasVecAVX2)
	hasVecAVX512, hasVecAVX2 = startVec, startVecAVX2
	want = want || kernelsBuilt && w.AVX2FMA
	a, b, dst := make([]float32, 16), make([]float32, 16), make([]float32, 16)
	if vec := vecBinary(backends.OpTypeAdd, dst, a, nil, false, b, nil, false) == 16; vec != want {
		t.Errorf("GOTRAIN_CPU=%q: Add of 16 elements ran the vector loop %v, want %v", w.Setting, vec, want)
	}
	cpufeattest.EachSetting(t)
}
