package parallel

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// counts runs n tasks with Run and returns how often each ran.
func counts(n, want int) []int32 {
	c := make([]int32, n)
	For(n, want, func(t int) { atomic.AddInt32(&c[t], 1) })
	return c
}

func checkOnce(t *testing.T, name string, c []int32) {
	t.Helper()
	for i, v := range c {
		if v != 1 {
			t.Fatalf("%s: task %d ran %d times, want once", name, i, v)
		}
	}
}

// TestRunEveryTaskOnce checks that every task runs exactly once, for any
// number of tasks and helpers wanted, with spinning on and off, from many
// goroutines at once and from inside tasks (which must not deadlock).
func TestRunEveryTaskOnce(t *testing.T) {
	for _, spin := range []time.Duration{0, time.Millisecond} {
		old := SetSpin(spin)
		for _, n := range []int{0, 1, 2, 3, 7, 64, 1000} {
			for _, want := range []int{0, 1, 2, 4, 100} {
				checkOnce(t, fmt.Sprintf("spin=%v n=%d want=%d", spin, n, want), counts(n, want))
			}
		}
		var wg sync.WaitGroup
		for g := range 8 {
			wg.Go(func() {
				for r := range 200 {
					n := 1 + (g*31+r)%50
					outer := make([]int32, n)
					For(n, 4, func(i int) {
						atomic.AddInt32(&outer[i], 1)
						// A call from inside a task finds the helpers busy
						// or takes one; either way every task runs once.
						checkOnce(t, "nested", counts(5, 2))
					})
					checkOnce(t, "concurrent", outer)
				}
			})
		}
		wg.Wait()
		SetSpin(old)
	}
}

// TestRunUsesHelpers checks that a call with want > 1 runs tasks on a
// helper at the same time as on the caller (the two tasks wait for each
// other), whether the helper was spinning or asleep.
func TestRunUsesHelpers(t *testing.T) {
	if Workers() < 2 {
		t.Skip("GOMAXPROCS is 1: no helpers")
	}
	for _, spin := range []time.Duration{0, time.Millisecond} {
		old := SetSpin(spin)
		for r := range 20 {
			time.Sleep(time.Duration(r%3) * time.Millisecond) // helpers spinning, or asleep
			var started sync.WaitGroup
			started.Add(2)
			ok := make(chan bool, 2)
			For(2, 2, func(int) {
				started.Done()
				done := make(chan struct{})
				go func() { started.Wait(); close(done) }()
				select {
				case <-done:
					ok <- true
				case <-time.After(5 * time.Second):
					ok <- false
				}
			})
			if !<-ok || !<-ok {

				t.Fatalf("spin=%v: the two tasks did not run at the same time", spin)
			}
		}
		SetSpin(old)
	}
}

// BenchmarkRun times a call of two short tasks, one per core, with the
// helpers spinning between calls and asleep.
func BenchmarkRun(b *testing.B) {
	for _, spin := range []time.Duration{0, time.Millisecond} {
		b.Run(fmt.Sprintf("spin=%v", spin), func(b *testing.B) {
			old := SetSpin(spin)
			defer SetSpin(old)
			var sink [2]float64
			for b.Loop() {
				For(2, 2, func(t int) {
					x := 1.0
					for range 20000 { // about 20 µs
						x = x*1.0000001 + 1e-9
					}
					sink[t] += x
				})
				time.Sleep(0)
			}
		})
	}
}
