package dist

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"testing"
)

// suite runs every collective call on c and checks the results against
// values computed from the ranks' numbers. Every rank of a group runs it at
// once (goroutines of one test for Local, processes for World), so it
// makes the same calls in the same order on every rank and reports with
// t.Errorf, never stopping one rank early. The float values are small
// integers and halves, whose sums are exact in any order: the suite holds
// for World, whose order of additions is the MPI library's.
func suite(t *testing.T, c Comm) {
	rank, size := c.Rank(), c.Size()
	errorf := func(format string, args ...any) {
		t.Helper()
		t.Errorf("rank %d of %d: %s", rank, size, fmt.Sprintf(format, args...))
	}
	if rank < 0 || rank >= size {
		errorf("rank out of range")
	}
	sent := c.BytesSent()
	expectSent := func(what string, n int) {
		t.Helper()
		if size == 1 {
			n = 0
		}
		sent += int64(n)
		if got := c.BytesSent(); got != sent {
			errorf("%s: BytesSent %d, want %d", what, got, sent)
		}
	}

	for _, n := range []int{0, 1, 7, 1000} {
		// int64: large values of both signs, and a column whose sum wraps.
		buf := make([]int64, n)
		want := make([]int64, n)
		val := func(r, i int) int64 {
			if i%5 == 4 {
				return math.MaxInt64 - int64(r)
			}
			return int64(r+1)*int64(i+1)*(1<<33) - int64(i*r)
		}
		for i := range buf {
			buf[i] = val(rank, i)
			for r := range size {
				want[i] += val(r, i)
			}
		}
		if err := c.AllreduceInt64(buf); err != nil {
			errorf("AllreduceInt64 of %d: %v", n, err)
		} else if i := firstDiff(buf, want); i >= 0 {
			errorf("AllreduceInt64 of %d: element %d is %d, want %d", n, i, buf[i], want[i])
		}
		expectSent(fmt.Sprintf("AllreduceInt64 of %d", n), 8*n)

		f64 := make([]float64, n)
		w64 := make([]float64, n)
		f32 := make([]float32, n)
		w32 := make([]float32, n)
		fval := func(r, i int) float64 { return float64(i%100)*0.5 - float64(r)*3 + float64(r*i%7) }
		for i := range f64 {
			f64[i], f32[i] = fval(rank, i), float32(fval(rank, i))
			for r := range size {
				w64[i] += fval(r, i)
				w32[i] += float32(fval(r, i))
			}
		}
		if err := c.AllreduceFloat64(f64); err != nil {
			errorf("AllreduceFloat64 of %d: %v", n, err)
		} else if i := firstDiff(f64, w64); i >= 0 {
			errorf("AllreduceFloat64 of %d: element %d is %v, want %v", n, i, f64[i], w64[i])
		}
		expectSent(fmt.Sprintf("AllreduceFloat64 of %d", n), 8*n)
		if err := c.AllreduceFloat32(f32); err != nil {
			errorf("AllreduceFloat32 of %d: %v", n, err)
		} else if i := firstDiff(f32, w32); i >= 0 {
			errorf("AllreduceFloat32 of %d: element %d is %v, want %v", n, i, f32[i], w32[i])
		}
		expectSent(fmt.Sprintf("AllreduceFloat32 of %d", n), 4*n)
	}

	for root := range size {
		for _, n := range []int{0, 5, 1000} {
			buf := bytes.Repeat([]byte{0xEE}, n)
			want := pattern(root, n)
			if rank == root {
				copy(buf, want)
			}
			if err := c.Bcast(buf, root); err != nil {
				errorf("Bcast of %d from %d: %v", n, root, err)
			} else if !bytes.Equal(buf, want) {
				errorf("Bcast of %d from %d: got %x..., want %x...", n, root, head(buf), head(want))
			}
			if rank == root {
				expectSent("Bcast", n)
			}
		}

		// Different lengths on every rank, one of them empty.
		glen := func(r int) int { return (r*37 + root*11) % 50 }
		mine := pattern(rank+100, glen(rank))
		got, err := c.Gather(mine, root)
		switch {
		case err != nil:
			errorf("Gather at %d: %v", root, err)
		case rank != root && got != nil:
			errorf("Gather at %d: a rank other than the root got %d buffers, want nil", root, len(got))
		case rank == root && len(got) != size:
			errorf("Gather at %d: %d buffers, want %d", root, len(got), size)
		case rank == root:
			for r := range size {
				if want := pattern(r+100, glen(r)); !bytes.Equal(got[r], want) || got[r] == nil {
					errorf("Gather at %d: rank %d's buffer is %x (%d bytes), want %x (%d bytes)", root, r, head(got[r]), len(got[r]), head(want), len(want))
				}
			}
			if len(mine) > 0 {
				// The root's own buffer comes back as a copy.
				mine[0]++
				if got[rank][0] == mine[0] {
					errorf("Gather at %d: the root's buffer is returned, not a copy", root)
				}
			}
		}
		if rank != root {
			expectSent("Gather", glen(rank))
		}
	}

	if err := c.Barrier(); err != nil {
		errorf("Barrier: %v", err)
	}
	expectSent("Barrier", 0)

	if size > 1 {
		// Disagreements: every rank gets an error, and the group goes on.
		mismatch := func(what, wantText string, err error) {
			t.Helper()
			if err == nil {
				errorf("%s: no error", what)
			} else if !strings.Contains(err.Error(), wantText) {
				errorf("%s: error %q does not say %q", what, err, wantText)
			}
		}
		mismatch("lengths", "buffer lengths differ across ranks", c.AllreduceInt64(make([]int64, 3+min(rank, 1))))
		mismatch("float lengths", "buffer lengths differ across ranks", c.AllreduceFloat32(make([]float32, 10*rank)))
		mismatch("broadcast lengths", "buffer lengths differ across ranks", c.Bcast(make([]byte, rank), 0))
		if rank == 0 {
			mismatch("operations", "every rank must make the same collective calls", c.Barrier())
		} else {
			mismatch("operations", "every rank must make the same collective calls", c.Bcast(nil, 0))
		}
		mismatch("roots", "ranks name different roots", c.Bcast(nil, rank))
		_, err := c.Gather([]byte{1}, rank)
		mismatch("gather roots", "ranks name different roots", err)
		mismatch("root range", fmt.Sprintf("root %d out of range for %d ranks", size, size), c.Bcast([]byte{1}, size))
		_, err = c.Gather(nil, -1)
		mismatch("gather root range", fmt.Sprintf("root -1 out of range for %d ranks", size), err)
		expectSent("refused calls", 0)
	} else {
		if err := c.Bcast(nil, 1); err == nil || !strings.Contains(err.Error(), "root 1 out of range for 1 ranks") {
			errorf("Bcast at root 1 of 1: error %v", err)
		}
	}
	one := []int64{int64(rank)}
	if err := c.AllreduceInt64(one); err != nil || one[0] != int64(size*(size-1)/2) {
		errorf("AllreduceInt64 after the refused calls: %v, %v", one, err)
	}
	expectSent("last AllreduceInt64", 8)
}

// runLocal runs f on every rank of a Local group of n, one goroutine each,
// closing each rank's Comm when its f returns.
func runLocal(n int, f func(c Comm)) {
	var wg sync.WaitGroup
	for _, c := range Local(n) {
		wg.Go(func() {
			defer c.Close()
			f(c)
		})
	}
	wg.Wait()
}

func firstDiff[T comparable](a, b []T) int {
	for i := range a {
		if a[i] != b[i] {
			return i
		}
	}
	if len(a) != len(b) {
		return min(len(a), len(b))
	}
	return -1
}

// pattern is n bytes that depend on seed.
func pattern(seed, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(seed*131 + i*7 + i>>8)
	}
	return b
}

func head(b []byte) []byte { return b[:min(len(b), 8)] }

func TestSuiteLocal(t *testing.T) {
	for _, n := range []int{1, 2, 3, 5} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			runLocal(n, func(c Comm) { suite(t, c) })
		})
	}
}

func TestSuiteSelf(t *testing.T) {
	c := Self()
	suite(t, c)
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if err := c.Barrier(); !errors.Is(err, ErrClosed) {
		t.Errorf("Barrier after Close: %v, want ErrClosed", err)
	}
	if err := c.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}
