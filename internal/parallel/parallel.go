// Package parallel runs the tasks of one call on the calling goroutine and
// on a set of helper goroutines that stay, between calls, spinning for a
// short while before they sleep.
//
// A training step is a sequence of operations, most of which split their
// work over the cores for a fraction of a millisecond. Waking a sleeping
// goroutine on an idle core took 60-120 µs on the 2-vCPU virtual machine
// this was measured on (the scheduler wakes an idle thread through a futex,
// and an idle virtual CPU has to be woken as well), so an operation that
// started a goroutine per call ran much of its time on one core. Helpers
// that spin pick up the next call within a microsecond, as OpenMP's threads
// do (they too spin for a while before they sleep). A spinning helper lets
// the Go scheduler run other goroutines every 50 µs, and sleeps after 1 ms
// without a call.
//
// The caller always takes part: it claims tasks until none are left, then
// waits only for tasks a helper has already claimed, so a call never waits
// on a helper that is busy elsewhere or not yet scheduled. Calls are safe
// from many goroutines at once; a call made from inside a task runs its
// tasks itself when the helpers are busy.
package parallel

import (
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// Tasks is the work of one call to Run: Task(t) for every t in [0, n).
// Task is called from several goroutines at once, each t once.
type Tasks interface {
	Task(t int)
}

// Func adapts a function to Tasks.
type Func func(t int)

// Task calls f(t).
func (f Func) Task(t int) { f(t) }

// spinFor is how long (in nanoseconds) a helper keeps looking for the next
// call after it finished its last task, and how long a caller waiting for a
// helper's last task looks before it sleeps: 1 ms by default, which covers
// the gaps between the parallel operations of a training step (a few
// single-threaded operations); past it, helpers sleep until a call wakes
// them (slowly). Zero never spins.
var spinFor atomic.Int64

func init() { spinFor.Store(int64(time.Millisecond)) }

// SetSpin sets how long helpers and callers spin (see the package
// overview) and returns the previous value; zero turns spinning off.
func SetSpin(d time.Duration) time.Duration {
	return time.Duration(spinFor.Swap(int64(max(d, 0))))
}

// Workers returns the number of goroutines a call can use: the caller and
// the helpers (GOMAXPROCS as read at the first call).
func Workers() int {
	start()
	return helpers + 1
}

var (
	startOnce sync.Once
	helpers   int
	posted    chan *job // jobs for helpers, one entry per helper wanted
)

func start() {
	startOnce.Do(func() {
		helpers = max(runtime.GOMAXPROCS(0)-1, 0)
		posted = make(chan *job, helpers)
		for range helpers {
			go helper()
		}
	})
}

// job is one call in flight.
type job struct {
	tasks    Tasks
	n        int64
	next     atomic.Int64  // next task to claim
	done     atomic.Int64  // tasks finished
	refs     atomic.Int32  // caller + helpers it was posted to, not yet let go
	finished chan struct{} // a helper that finished the last task says so
}

// yieldEvery is how long a spinning helper looks for a job between two
// calls to runtime.Gosched.
const yieldEvery = 50 * time.Microsecond

var jobs = sync.Pool{New: func() any { return &job{finished: make(chan struct{}, 1)} }}

// Run calls tasks.Task(t) for every t in [0, n) on the calling goroutine
// and on at most want-1 helpers, and returns when all have returned. With
// want < 2 or n < 2 it runs them in order on the caller.
func Run(n, want int, tasks Tasks) {
	if n <= 0 {
		return
	}
	start()
	want = min(want, n, helpers+1)
	if want < 2 {
		for t := range n {
			tasks.Task(t)
		}
		return
	}
	j := jobs.Get().(*job)
	j.tasks, j.n = tasks, int64(n)
	j.next.Store(0)
	j.done.Store(0)
	j.refs.Store(1)
	for range want - 1 {
		j.refs.Add(1)
		if !post(j) {
			j.refs.Add(-1)
			break // every helper has a job already: the caller does the rest
		}
	}
	if !j.work() {
		wait(j.finished)
	}
	j.release()
}

// For calls fn(t) for every t in [0, n) as Run does.
func For(n, want int, fn func(t int)) { Run(n, want, Func(fn)) }

// work claims and runs tasks until none are left. It reports whether this
// goroutine finished the job's last task.
func (j *job) work() bool {
	var did int64
	for {
		t := j.next.Add(1) - 1
		if t >= j.n {
			break
		}
		j.tasks.Task(int(t))
		did++
	}
	// Everything above happens before the Add that completes the job, after
	// which the caller may return and reuse what the tasks refer to.
	return did > 0 && j.done.Add(did) == j.n
}

// release drops one reference; the last one recycles the job.
func (j *job) release() {
	if j.refs.Add(-1) == 0 {
		j.tasks = nil
		jobs.Put(j)
	}
}

// post queues j for a helper. A full queue holds jobs posted earlier that
// no helper has taken yet, most often with every task claimed by their
// callers already: post takes one, does what is left of it as a helper
// would (usually nothing), and tries again, as many times as there are
// helpers. It reports whether j was queued.
func post(j *job) bool {
	for range helpers + 1 {
		select {
		case posted <- j:
			return true
		default:
		}
		select {
		case old := <-posted:
			old.help()
		default:
		}
	}
	return false
}

// help runs what is left of j as a helper and lets go of it.
func (j *job) help() {
	if j.work() {
		j.finished <- struct{}{} // the caller waits for this
	}
	j.release()
}

func helper() {
	for {
		receive().help()
	}
}

// receive returns the next job posted for a helper, looking for it for
// spinFor before it sleeps. Every yieldEvery of looking it lets the Go
// scheduler run whatever else is waiting for a CPU (a data loader's
// goroutine), which a spinning helper would otherwise keep off its CPU
// until the scheduler preempted it, 10 ms later.
func receive() *job {
	if d := time.Duration(spinFor.Load()); d > 0 {
		now := time.Now()
		deadline, yield := now.Add(d), now.Add(yieldEvery)
		for i := 0; ; i++ {
			select {
			case j := <-posted:
				return j
			default:
			}
			if i%64 != 63 {
				continue
			}
			now := time.Now()
			if now.After(deadline) {
				break
			}
			if now.After(yield) {
				runtime.Gosched()
				yield = time.Now().Add(yieldEvery)
			}
		}
	}
	return <-posted
}

// wait returns once c has a value, looking for it for spinFor before it
// sleeps.
func wait(c chan struct{}) {
	if d := time.Duration(spinFor.Load()); d > 0 {
		deadline := time.Now().Add(d)
		for i := 0; ; i++ {
			select {
			case <-c:
				return
			default:
			}
			if i%64 == 63 && time.Now().After(deadline) {
				break
			}
		}
	}
	<-c
}
