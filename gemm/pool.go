package gemm

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// The worker pool: GOMAXPROCS-1 goroutines started on first use, fed through the
// buffered channel helpers. A call posts its job to the channel without blocking
// (if the buffer is full, fewer helpers join) and then claims tasks itself until
// none are left. It waits only for tasks that a helper has already claimed, and
// a helper that claimed a task runs it to the end without waiting on anything,
// so no call can wait on a helper that never comes: if every worker is busy
// with other calls, the caller does all the work itself and a helper that receives the job late finds nothing to claim.
// No lock is held across a wait, so concurrent calls cannot deadlock. A job is
// recycled by whichever of the caller and the helpers it was posted to lets go
// of it last.
var (
	helpers   chan *job
	startPool sync.Once
)

// job is one parallel call in flight.
type job struct {
	pr       *problem
	tasks    int64
	next     atomic.Int64  // next task to claim
	done     atomic.Int64  // tasks finished
	refs     atomic.Int32  // caller + helpers it was posted to, not yet let go
	finished chan struct{} // a helper that finished the last task says so
}

var jobPool = sync.Pool{New: func() any { return &job{finished: make(chan struct{}, 1)} }}

func worker() {
	for j := range helpers {
		if j.work() {
			j.finished <- struct{}{} // the caller waits for this
		}
		j.release()
	}
}

// work claims and runs tasks until none are left. It reports whether this
// goroutine finished the job's last task.
func (j *job) work() bool {
	var ws *workspace
	var did int64
	for {
		t := j.next.Add(1) - 1
		if t >= j.tasks {
			break
		}
		if ws == nil {
			ws = j.pr.kr.getWorkspace()
		}
		j.pr.task(ws, int(t))
		did++
	}
	if ws != nil {
		j.pr.kr.pool.Put(ws)
	}
	// Everything above happens before the Add that completes the job, after
	// which the caller may return and reuse pr.
	return did > 0 && j.done.Add(did) == j.tasks
}

// release drops one reference; the last one recycles the job.
func (j *job) release() {
	if j.refs.Add(-1) == 0 {
		j.pr = nil
		jobPool.Put(j)
	}
}

// parallel runs tasks of pr on the caller and up to want-1 helpers.
func parallel(pr *problem, tasks, want int) {
	startPool.Do(func() {
		n := runtime.GOMAXPROCS(0) - 1
		helpers = make(chan *job, max(n, 0))
		for range n {
			go worker()
		}
	})
	j := jobPool.Get().(*job)
	j.pr, j.tasks = pr, int64(tasks)
	j.next.Store(0)
	j.done.Store(0)
	j.refs.Store(1)
	for range want - 1 {
		j.refs.Add(1)
		select {
		case helpers <- j:
			continue
		default:
			j.refs.Add(-1)
		}
		break // the buffer is full: the caller does the rest
	}
	if !j.work() {
		<-j.finished // a helper finishes the last task and says so
	}
	j.release()
}
