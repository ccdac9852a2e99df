package gctarget

import (
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"testing"
	"time"
)

// gogc reads the target in force.
func gogc() int {
	s := []metrics.Sample{{Name: "/gc/gogc:percent"}}
	metrics.Read(s)
	return int(s[0].Value.Uint64())
}

// TestApplyKeepsGOGC: a target chosen with GOGC stays (these cases run
// before the tuner starts, which the next test does).
func TestApplyKeepsGOGC(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100)) // restore the test binary's
	for _, tc := range []struct {
		name  string
		gogc  string
		start int // the target before Apply
	}{
		{"GOGC set", "200", 200}, // the runtime read it at start; Apply keeps it
		{"GOGC=off", "off", -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("GOGC", tc.gogc)
			debug.SetGCPercent(tc.start)
			if got := Apply(); got != tc.start {
				t.Errorf("Apply() = %d, want %d", got, tc.start)
			}
			if now := debug.SetGCPercent(tc.start); now != tc.start {
				t.Errorf("target in force %d, want %d", now, tc.start)
			}
		})
	}
}

func TestTarget(t *testing.T) {
	const mib = 1 << 20
	for _, tc := range []struct {
		live uint64
		want int
	}{
		{0, MaxPercent},
		{1 * mib, MaxPercent}, // 400 % would be the headroom's
		{2 * mib, MaxPercent},
		{5 * mib, 80},
		{8 * mib, 50},
		{12*mib + 1, 34}, // rounded up: at least the headroom
		{16*mib - 1, 26},
		{16 * mib, Percent},
		{1 << 30, Percent},
	} {
		if got := Target(tc.live); got != tc.want {
			t.Errorf("Target(%d) = %d, want %d", tc.live, got, tc.want)
		}
	}
}

// waitFor runs collections until ok holds for the target in force.
func waitFor(t *testing.T, ok func(int) bool, what string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !ok(gogc()) {
		if time.Now().After(deadline) {
			t.Fatalf("%s: target %d", what, gogc())
		}
		runtime.GC()
		time.Sleep(5 * time.Millisecond) // the finalizer goroutine retargets
	}
}

// TestTargetFollowsLiveHeap: without GOGC, more than Percent while the live
// heap is small, Percent once it is large, and more again when it falls
// back.
func TestTargetFollowsLiveHeap(t *testing.T) {
	t.Setenv("GOGC", "")
	os.Unsetenv("GOGC")
	if got := Apply(); got != Percent {
		t.Fatalf("Apply() = %d, want %d", got, Percent)
	}
	small := func(p int) bool { return p > Percent }
	large := func(p int) bool { return p == Percent }
	waitFor(t, small, "small heap")
	big := make([]byte, 64<<20)
	waitFor(t, large, "large live heap")
	runtime.KeepAlive(big)
	big = nil
	waitFor(t, small, "heap freed")
	// The tuner keeps running: the switch happens again.
	big = make([]byte, 64<<20)
	waitFor(t, large, "large again")
	runtime.KeepAlive(big)
}
