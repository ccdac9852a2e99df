package forest

import (
	"os"
	"runtime/pprof"
	"syscall"
	"testing"
	"time"

	"github.com/gotrain/gotrain/data"
)

func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func TestCPUTimeLarge(t *testing.T) {
	if testing.Short() || !testing.Verbose() {
		t.Skip("timing probe; run with -v -run CPUTimeLarge")
	}
	ds := data.MakeRegression(100000, 20, 0)
	c0, w0 := cpuTime(), time.Now()
	f, err := Fit(ds, Options{Trees: 100, MaxDepth: 16})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("fit: wall %v cpu %v", time.Since(w0), cpuTime()-c0)
	nodes, leaves, depthSum := 0, 0, 0
	for i := range f.Trees {
		tr := &f.Trees[i]
		nodes += tr.NumNodes()
		leaves += tr.NumLeaves()
		depthSum += tr.Depth()
	}
	t.Logf("nodes/tree %d leaves/tree %d max depth avg %.1f", nodes/len(f.Trees), leaves/len(f.Trees), float64(depthSum)/float64(len(f.Trees)))
	c0, w0 = cpuTime(), time.Now()
	pprofStart(t)
	f.Predict(ds.X, ds.Rows)
	pprofStop()
	t.Logf("predict: wall %v cpu %v", time.Since(w0), cpuTime()-c0)
}

var pprofFile *os.File

func pprofStart(t *testing.T) {
	if p := os.Getenv("PREDICT_PROFILE"); p != "" {
		pprofFile, _ = os.Create(p)
		_ = pprof.StartCPUProfile(pprofFile)
	}
}

func pprofStop() {
	if pprofFile != nil {
		pprof.StopCPUProfile()
		pprofFile.Close()
	}
}
