package signal

import (
	"testing"

	"github.com/gotrain/gotrain/internal/cpufeat/cpufeattest"
)

// startAVX2 is useAVX2 as the package started (tests change it).
var startAVX2 = useAVX2

// TestKernelPathFollowsGOTRAIN_CPU checks that the AVX2 kernels are on
// exactly when the build, the CPU and GOTRAIN_CPU allow them, and that an
// extractor then takes the vector Welch path, in this process and under
// every setting.
func TestKernelPathFollowsGOTRAIN_CPU(t *testing.T) {
	w := cpufeattest.Current()
	want := kernelsBuilt && w.AVX2FMA
	if startAVX2 != want {
		t.Fatalf("GOTRAIN_CPU=%q: AVX2 kernels %v, want %v", w.Setting, startAVX2, want)
	}
	defer func(v bool) { useAVX2 = v }(useAVX2)
	useAVX2 = startAVX2
	e, err := NewExtractor(Config{SampleRate: 1e4, WelchSegment: 256, AutocorrLags: 200})
	if err != nil {
		t.Fatal(err)
	}
	if vec := e.welch.u0 != nil; vec != want {
		t.Errorf("GOTRAIN_CPU=%q: vector Welch accumulators %v, want %v", w.Setting, vec, want)
	}
	cpufeattest.EachSetting(t)
}
