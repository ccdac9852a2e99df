package bench

import (
	"fmt"
	"testing"
	"time"

	"github.com/gotrain/gotrain/device"
	"github.com/gotrain/gotrain/internal/stats"
)

// BenchmarkMatMul times the matmul workload as `gotrain bench` runs it
// (C = A·B in float32, copied back to the host) on gotrain's native SGEMM
// (cpu) and on GoMLX's simplego (go), at the small (256) and seed (1024)
// sizes, and reports the median GFLOP/s of the timed calls; the first
// call (graph building, compilation) is not timed:
//
//	go test -run '^$' -bench MatMul -benchtime 10x ./bench/
func BenchmarkMatMul(b *testing.B) {
	es, err := device.SelectEach([]string{"cpu", "go"}, device.Request{Inventory: &device.Inventory{}})
	if err != nil {
		b.Fatal(err)
	}
	defer device.CloseAll(es)
	for _, n := range []int{256, 1024} {
		for _, e := range es {
			b.Run(fmt.Sprintf("%d/%s", n, e.Name()), func(b *testing.B) {
				call, closeFn, err := (&MatMul{N: n}).Runner(e)
				if err != nil {
					b.Fatal(err)
				}
				defer closeFn()
				first, err := call()
				if err != nil {
					b.Fatal(err)
				}
				var gflops []float64
				for b.Loop() {
					t0 := time.Now()
					if _, err := call(); err != nil {
						b.Fatal(err)
					}
					gflops = append(gflops, first.Items/time.Since(t0).Seconds())
				}
				b.ReportMetric(stats.Median(gflops), "GFLOP/s")
			})
		}
	}
}
