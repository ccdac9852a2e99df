// Package gctarget sets the garbage collector's target for the gotrain
// command: most of its heap is long-lived (data sets, their binned codes,
// models), and Go's default target (GOGC=100: collect when the heap has
// doubled since the last collection) lets the garbage of loading and
// building those add up to as much again at the peak. A target of 25
// measured the same fit times with a peak resident set 26 % lower on
// MNIST's forest (896 to 666 MiB) and 12 % lower on the 100k x 20 one
// (457 to 403 MiB) (GOGC=25 against the default, /usr/bin/time -v; see
// docs/BENCHMARKS.md, issue #19).
//
// A small heap gains nothing from the low target and pays for it: with
// GOGC=25 a heap of a few MiB grows by a fraction of a MiB between
// collections, and a forest of a few MiB (diabetes, 200 trees) was
// collected so often that its fit took about 10 % longer than under the
// default. So the target is set after every collection from the live
// heap: Percent, but never less than Headroom of growth (a higher
// percentage for a live heap below Headroom·100/Percent = 16 MiB, at most
// MaxPercent).
package gctarget

import (
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

// Percent is the target Apply sets for a large heap: a collection when
// the heap has grown by this percentage of the live heap.
const Percent = 25

// Headroom is the least growth, in bytes, allowed between collections.
const Headroom = 4 << 20

// MaxPercent caps the target of a small heap (the runtime's first goal,
// before any live heap is known, is 4 MiB times the target / 100).
const MaxPercent = 200

// Apply sets the collector's target unless the GOGC environment variable
// chose one (then it returns that one): Target of the live heap, set again
// after every collection. It returns Percent, the target of the heaps that
// matter for the peak.
func Apply() int {
	if v, ok := os.LookupEnv("GOGC"); ok && v != "" {
		old := debug.SetGCPercent(100)
		debug.SetGCPercent(old)
		return old
	}
	tuner.once.Do(func() {
		tuner.percent = -2 // none set yet
		tuner.sample = []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
		arm(new(sentinel))
	})
	tuner.mu.Lock()
	tuner.percent = retarget(tuner.percent)
	tuner.mu.Unlock()
	return Percent
}

// tuner holds the target in force and the metric it reads.
var tuner struct {
	once    sync.Once
	mu      sync.Mutex
	percent int
	sample  []metrics.Sample
}

// sentinel is an object nothing refers to: its finalizer runs after each
// collection, which re-arms it (the object lives on through its
// finalizer until the next collection finds it unreachable again).
type sentinel struct{ _ [32]byte } // not a tiny allocation, whose finalizers may wait

func arm(s *sentinel) { runtime.SetFinalizer(s, afterGC) }

// afterGC runs on the finalizer goroutine after a collection.
func afterGC(s *sentinel) {
	tuner.mu.Lock()
	tuner.percent = retarget(tuner.percent)
	tuner.mu.Unlock()
	arm(s)
}

// Target is the target for a live heap of live bytes: Percent, or the
// percentage that allows Headroom of growth when that is more, up to
// MaxPercent.
func Target(live uint64) int {
	if live*Percent >= Headroom*100 {
		return Percent
	}
	if live*MaxPercent <= Headroom*100 {
		return MaxPercent
	}
	return int((Headroom*100 + live - 1) / live)
}

// retarget reads the live heap and sets the target it calls for, if that
// is not cur; it returns the target in force. Callers hold tuner.mu.
func retarget(cur int) int {
	metrics.Read(tuner.sample)
	var live uint64
	if v := tuner.sample[0].Value; v.Kind() == metrics.KindUint64 {
		live = v.Uint64()
	}
	want := Target(live)
	if want != cur {
		debug.SetGCPercent(want)
	}
	return want
}
