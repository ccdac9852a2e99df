package gemm

import parallelpkg "github.com/gotrain/gotrain/internal/parallel"

// parallel runs tasks on the caller and up to want-1 of package parallel's
// helpers.
func parallel(work parallelpkg.Tasks, tasks, want int) { parallelpkg.Run(tasks, want, work) }

// Task runs task t of pr with a workspace from the kernel's pool.
func (pr *problem) Task(t int) {
	ws := pr.kr.getWorkspace()
	pr.task(ws, t)
	pr.kr.pool.Put(ws)
}
