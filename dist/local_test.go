package dist

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestLocalFloatSumsInRankOrder checks that Local adds float contributions
// in rank order whatever order the ranks arrive in: the values are chosen
// so that other orders of the same additions give other results.
func TestLocalFloatSumsInRankOrder(t *testing.T) {
	contrib64 := []float64{1e16, 1, -1e16, 1, 0.5, 3}
	contrib32 := []float32{1e8, 1, -1e8, 1, 0.5, 3}
	n := len(contrib64)
	var want64 float64
	var want32 float32
	for r := range n {
		want64 = float64(want64 + contrib64[r])
		want32 = float32(want32 + contrib32[r])
	}
	// The test means something only if the order matters.
	var rev64 float64
	var rev32 float32
	for r := n - 1; r >= 0; r-- {
		rev64 += contrib64[r]
		rev32 += contrib32[r]
	}
	if rev64 == want64 || rev32 == want32 {
		t.Fatalf("the contributions sum to the same in reverse order (%v, %v): the test cannot see the order", rev64, rev32)
	}
	arrivals := map[string]func(r int) time.Duration{
		"rank order":    func(r int) time.Duration { return time.Duration(r) * time.Millisecond },
		"reverse order": func(r int) time.Duration { return time.Duration(n-r) * time.Millisecond },
		"interleaved":   func(r int) time.Duration { return time.Duration((r*7)%n) * time.Millisecond },
	}
	for name, delay := range arrivals {
		t.Run(name, func(t *testing.T) {
			runLocal(n, func(c Comm) {
				time.Sleep(delay(c.Rank()))
				b64 := []float64{contrib64[c.Rank()], 0}
				if err := c.AllreduceFloat64(b64); err != nil {
					t.Error(err)
				} else if math.Float64bits(b64[0]) != math.Float64bits(want64) {
					t.Errorf("rank %d: float64 sum %v, want %v (rank order)", c.Rank(), b64[0], want64)
				}
				time.Sleep(delay(c.Rank()))
				b32 := []float32{contrib32[c.Rank()]}
				if err := c.AllreduceFloat32(b32); err != nil {
					t.Error(err)
				} else if math.Float32bits(b32[0]) != math.Float32bits(want32) {
					t.Errorf("rank %d: float32 sum %v, want %v (rank order)", c.Rank(), b32[0], want32)
				}
			})
		})
	}
}

// TestLocalClose checks that closing a rank answers the ranks waiting for
// it, and later calls, with errors instead of a hang.
func TestLocalClose(t *testing.T) {
	cs := Local(3)
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for r := range 2 {
		wg.Go(func() { errs[r] = cs[r].AllreduceInt64([]int64{1}) })
	}
	// Close rank 2 once the other two are waiting.
	g := cs[2].(*local).g
	for {
		g.mu.Lock()
		waiting := g.count
		g.mu.Unlock()
		if waiting == 2 {
			break
		}
		time.Sleep(time.Millisecond)
	}
	if err := cs[2].Close(); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	for r, err := range errs {
		if err == nil || !strings.Contains(err.Error(), "rank 2 of the local group closed while the others waited") {
			t.Errorf("rank %d: error %v, want one naming closed rank 2", r, err)
		}
	}
	if err := cs[0].Barrier(); err == nil || !strings.Contains(err.Error(), "rank 2 of the local group is closed") {
		t.Errorf("Barrier after rank 2 closed: %v", err)
	}
	if err := cs[2].Barrier(); !errors.Is(err, ErrClosed) {
		t.Errorf("Barrier on the closed rank: %v, want ErrClosed", err)
	}
	if err := cs[2].Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

func TestLocalSize(t *testing.T) {
	for _, n := range []int{-1, 0} {
		if cs := Local(n); cs != nil {
			t.Errorf("Local(%d) = %d ranks, want nil", n, len(cs))
		}
	}
	cs := Local(4)
	for r, c := range cs {
		if c.Rank() != r || c.Size() != 4 {
			t.Errorf("rank %d: Rank %d, Size %d", r, c.Rank(), c.Size())
		}
	}
}

// TestLocalErrors checks the errors of calls the ranks disagree on: their
// text names the ranks, and every rank gets one.
func TestLocalErrors(t *testing.T) {
	tests := []struct {
		name string
		call func(c Comm) error
		want string
	}{
		{"lengths", func(c Comm) error { return c.AllreduceFloat64(make([]float64, 2+c.Rank()/2)) },
			"AllreduceFloat64 on rank %d of 3: buffer lengths differ across ranks (rank 0: length 2, rank 2: length 3)"},
		{"operations", func(c Comm) error {
			if c.Rank() == 1 {
				return c.Barrier()
			}
			return c.AllreduceInt64(nil)
		}, "rank 0 calls AllreduceInt64, rank 1 calls Barrier"},
		{"roots", func(c Comm) error { _, err := c.Gather(nil, c.Rank()%2); return err },
			"ranks name different roots (rank 0: 0, rank 1: 1)"},
		{"root range", func(c Comm) error { return c.Bcast(nil, 3) }, "root 3 out of range for 3 ranks"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			runLocal(3, func(c Comm) {
				want := tc.want
				if strings.Contains(want, "%d") {
					want = fmt.Sprintf(want, c.Rank())
				}
				if err := tc.call(c); err == nil || !strings.Contains(err.Error(), want) {
					t.Errorf("rank %d: error %v, want %q", c.Rank(), err, want)
				}
			})
		})
	}
}

func TestSelfRoots(t *testing.T) {
	tests := []struct {
		root int
		ok   bool
	}{{0, true}, {1, false}, {-1, false}}
	for _, tc := range tests {
		c := Self()
		err := c.Bcast([]byte{1}, tc.root)
		_, gerr := c.Gather([]byte{1}, tc.root)
		if (err == nil) != tc.ok || (gerr == nil) != tc.ok {
			t.Errorf("root %d: Bcast %v, Gather %v; want ok=%v", tc.root, err, gerr, tc.ok)
		}
	}
}
