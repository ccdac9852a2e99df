package gemm

import parallelpkg "github.com/gotrain/gotrain/internal/parallel"

// parallel runs tasks of pr on the caller and up to want-1 of package
// parallel's helpers.
func parallel(pr *problem, tasks, want int) { parallelpkg.Run(tasks, want, pr) }

// Task runs task t of pr with a workspace from the kernel's pool.
func (pr *problem) Task(t int) {
	ws := pr.kr.getWorkspace()
	pr.task(ws, t)
	pr.kr.pool.Put(ws)
}
