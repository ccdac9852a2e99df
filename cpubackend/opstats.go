package cpubackend

import (
	"cmp"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// OpStat is the time spent in one kind of operation (op type and output
// shape) while op statistics were on.
type OpStat struct {
	Op    string        // operation type
	Shape string        // output shape
	Calls int           // executions
	Time  time.Duration // total time
}

func (s OpStat) String() string {
	return fmt.Sprintf("%-22s %-28s %6d calls %10.3f ms", s.Op, s.Shape, s.Calls, float64(s.Time.Microseconds())/1e3)
}

var (
	opStatsOn atomic.Bool
	opStatsMu sync.Mutex
	opStats   = map[[2]string]*OpStat{}
)

// SetOpStats turns the collection of per-operation timings on or off
// (off by default; it costs a clock read per operation) and clears them.
func SetOpStats(on bool) {
	opStatsMu.Lock()
	clear(opStats)
	opStatsMu.Unlock()
	opStatsOn.Store(on)
}

// OpStats returns the timings collected since SetOpStats(true), the most
// expensive first.
func OpStats() []OpStat {
	opStatsMu.Lock()
	defer opStatsMu.Unlock()
	out := make([]OpStat, 0, len(opStats))
	for _, s := range opStats {
		out = append(out, *s)
	}
	slices.SortFunc(out, func(a, b OpStat) int { return cmp.Compare(b.Time, a.Time) })
	return out
}

func recordOpStat(node *Node, d time.Duration) {
	key := [2]string{node.opType.String(), node.shape.String()}
	if node.fused != nil {
		ops := make([]string, len(node.fused.instrs))
		for i, ins := range node.fused.instrs {
			ops[i] = ins.op.String()
		}
		key[0] = "Fused(" + strings.Join(ops, ",") + ")"
		if node.fused.sums {
			key[0] = "FusedSum(" + strings.Join(ops, ",") + ")"
		}
	}
	opStatsMu.Lock()
	s := opStats[key]
	if s == nil {
		s = &OpStat{Op: key[0], Shape: key[1]}
		opStats[key] = s
	}
	s.Calls++
	s.Time += d
	opStatsMu.Unlock()
}

// WriteOpStats runs step n times with the op statistics on and writes them
// to path, a line per operation kind, the most expensive first (the
// benchmarks' GOTRAIN_OPSTATS=FILE). The statistics are off afterwards. An
// empty path does nothing.
func WriteOpStats(path string, n int, step func() error) error {
	if path == "" {
		return nil
	}
	SetOpStats(true)
	defer SetOpStats(false)
	for range n {
		if err := step(); err != nil {
			return err
		}
	}
	var lines []byte
	for _, s := range OpStats() {
		lines = fmt.Appendf(lines, "%v\n", s)
	}
	return os.WriteFile(path, lines, 0o644)
}
