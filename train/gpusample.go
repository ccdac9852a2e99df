package train

import (
	stdcontext "context"
	"os/exec"
	"time"

	"github.com/gotrain/gotrain/internal/nvsmi"
)

// gpuSampler adds GPU utilisation and memory, read with nvidia-smi
// (nvsmi.Query), to metrics records at most once per interval.
type gpuSampler struct {
	query    func(stdcontext.Context) nvsmi.Info
	interval time.Duration
	now      func() time.Time
	last     time.Time
	sampled  bool
}

// newGPUSampler returns a sampler, or nil when interval is 0 or nvidia-smi
// is not on PATH (sampling is then skipped silently).
func newGPUSampler(interval time.Duration) *gpuSampler {
	if interval <= 0 {
		return nil
	}
	if _, err := exec.LookPath("nvidia-smi"); err != nil {
		return nil
	}
	return &gpuSampler{query: nvsmi.Query, interval: interval, now: time.Now}
}

// sample adds, when due and readable, "gpus" (one object per GPU: index,
// utilization_percent, memory_used_mib, memory_total_mib), and their mean
// "gpu_util_percent" and total "gpu_mem_used_mib", to rec. An error from
// nvidia-smi adds nothing.
func (g *gpuSampler) sample(ctx stdcontext.Context, rec map[string]any) {
	if g == nil {
		return
	}
	t := g.now()
	if g.sampled && t.Sub(g.last) < g.interval {
		return
	}
	g.last, g.sampled = t, true
	info := g.query(ctx)
	if info.Err != "" || len(info.GPUs) == 0 {
		return
	}
	gpus := make([]map[string]any, 0, len(info.GPUs))
	var util, mem int
	for _, gpu := range info.GPUs {
		gpus = append(gpus, map[string]any{
			"index":               gpu.Index,
			"utilization_percent": gpu.UtilPercent,
			"memory_used_mib":     gpu.MemoryUsedMB,
			"memory_total_mib":    gpu.MemoryTotalMB,
		})
		util += gpu.UtilPercent
		mem += gpu.MemoryUsedMB
	}
	rec["gpus"] = gpus
	rec["gpu_util_percent"] = float64(util) / float64(len(info.GPUs))
	rec["gpu_mem_used_mib"] = mem
}
