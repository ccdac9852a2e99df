//go:build !unix

package gemm

import "time"

// cpuTime is not measured here; the CPU-time metric then reads zero.
func cpuTime() time.Duration { return 0 }
