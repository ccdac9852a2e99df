//go:build mpi && cgo

package mpi

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
)

// The tests run under mpirun, every rank running the same tests in the
// same order (go test -tags mpi -exec 'mpirun -np 3' ./internal/mpi);
// started otherwise, they skip. They report with t.Errorf so that no rank
// leaves a collective call the others are in.

// TestMain finalises MPI after the tests and checks what follows: calls
// fail with ErrFinalized, and MPI cannot be initialised again.
func TestMain(m *testing.M) {
	code := m.Run()
	state.mu.Lock()
	c := state.world
	state.mu.Unlock()
	if c != nil {
		fail := func(format string, args ...any) {
			fmt.Printf("--- FAIL: TestMain (rank %d): %s\n", c.Rank(), fmt.Sprintf(format, args...))
			code = 1
		}
		if err := c.Finalize(); err != nil {
			fail("Finalize: %v", err)
		}
		if err := c.Finalize(); err != nil {
			fail("second Finalize: %v", err)
		}
		if err := c.Barrier(); !errors.Is(err, ErrFinalized) {
			fail("Barrier after Finalize: %v, want ErrFinalized", err)
		}
		if _, err := Init(); err == nil || !strings.Contains(err.Error(), "cannot be initialised again") {
			fail("Init after Finalize: %v", err)
		}
	}
	os.Exit(code)
}

// world returns MPI_COMM_WORLD, or skips the test when mpirun did not
// start this process as one of two or more.
func world(t *testing.T) *Comm {
	t.Helper()
	size, err1 := strconv.Atoi(os.Getenv("OMPI_COMM_WORLD_SIZE"))
	rank, err2 := strconv.Atoi(os.Getenv("OMPI_COMM_WORLD_RANK"))
	if err1 != nil || err2 != nil || size < 2 {
		t.Skip("not started by Open MPI's mpirun with 2 or more processes: run go test -tags mpi -exec 'mpirun -np 3' ./internal/mpi")
	}
	c, err := Init()
	if err != nil {
		t.Fatal(err)
	}
	if c.Size() != size || c.Rank() != rank {
		t.Fatalf("rank %d of %d, mpirun says rank %d of %d", c.Rank(), c.Size(), rank, size)
	}
	return c
}

func TestInit(t *testing.T) {
	c := world(t)
	if again, err := Init(); again != c || err != nil {
		t.Errorf("second Init: %p, %v; want the same Comm %p", again, err, c)
	}
	if l := c.ThreadLevel(); l != "MPI_THREAD_SERIALIZED" && l != "MPI_THREAD_MULTIPLE" {
		t.Errorf("thread level %s", l)
	}
	v, err := LibraryVersion()
	if err != nil || !strings.Contains(v, "Open MPI") {
		t.Errorf("LibraryVersion: %q, %v", v, err)
	}
	t.Logf("rank %d of %d: %s, %s, %d fault-signal handlers restored", c.Rank(), c.Size(), v, c.ThreadLevel(), c.RestoredSignals())
}

// TestErrorStrings provokes errors MPI itself detects (a root out of
// range) and checks that they come back as errors with the library's
// text, not as an abort of the job: MPI_ERRORS_RETURN is in force.
func TestErrorStrings(t *testing.T) {
	c := world(t)
	err := c.Bcast(nil, c.Size())
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("Bcast to root %d: %v, want an *Error", c.Size(), err)
	}
	if e.Call != "MPI_Bcast" || !strings.HasPrefix(e.Text, "MPI_ERR_ROOT: invalid root") || e.Text != ErrorString(e.Code) || e.Class < 0 {
		t.Errorf("Bcast to root %d: %+v", c.Size(), e)
	}
	if want := "mpi: MPI_Bcast: MPI_ERR_ROOT: invalid root"; err.Error() != want {
		t.Errorf("error text %q, want %q", err, want)
	}
	_, err = c.Gatherv(nil, make([]int, c.Size()), -2)
	if !errors.As(err, &e) || e.Call != "MPI_Gatherv" || !strings.Contains(e.Text, "invalid root") {
		t.Errorf("Gatherv to root -2: %v", err)
	}
	if s := ErrorString(0); !strings.HasPrefix(s, "MPI_SUCCESS") {
		t.Errorf("ErrorString(0) = %q", s)
	}
	// The communicator still works.
	buf := []int64{1}
	if err := c.AllreduceSumInt64(buf); err != nil || buf[0] != int64(c.Size()) {
		t.Errorf("AllreduceSumInt64 after the errors: %v, %v", buf, err)
	}
}

// TestChunks runs every call with the chunk size lowered so that buffers
// take many MPI calls (and gathers many rounds), and checks the results
// against sums computed here.
func TestChunks(t *testing.T) {
	c := world(t)
	defer func(old int) { MaxChunkBytes = old }(MaxChunkBytes)
	rank, size := c.Rank(), c.Size()
	for _, chunk := range []int{1 << 30, 24, 7, 1} {
		MaxChunkBytes = chunk
		for _, n := range []int{0, 1, 3, 4, 50} {
			where := fmt.Sprintf("rank %d, chunk %d, %d elements", rank, chunk, n)
			i64, max64 := make([]int64, n), make([]int64, n)
			f64, f32 := make([]float64, n), make([]float32, n)
			w64, wmax := make([]int64, n), make([]int64, n)
			wf64, wf32 := make([]float64, n), make([]float32, n)
			for i := range n {
				i64[i] = int64(rank+1) << (i % 60)
				max64[i] = int64((rank*7 + i) % 5)
				f64[i], f32[i] = float64(rank)+0.25*float64(i), float32(rank)-0.5*float32(i)
				wmax[i] = -1
				for r := range size {
					w64[i] += int64(r+1) << (i % 60)
					wmax[i] = max(wmax[i], int64((r*7+i)%5))
					wf64[i] += float64(r) + 0.25*float64(i)
					wf32[i] += float32(r) - 0.5*float32(i)
				}
			}
			check := func(what string, err error, ok bool) {
				t.Helper()
				if err != nil || !ok {
					t.Errorf("%s: %s: %v", where, what, err)
				}
			}
			err := c.AllreduceSumInt64(i64)
			check("AllreduceSumInt64", err, fmt.Sprint(i64) == fmt.Sprint(w64))
			err = c.AllreduceMaxInt64(max64)
			check("AllreduceMaxInt64", err, fmt.Sprint(max64) == fmt.Sprint(wmax))
			err = c.AllreduceSumFloat64(f64)
			check("AllreduceSumFloat64", err, fmt.Sprint(f64) == fmt.Sprint(wf64))
			err = c.AllreduceSumFloat32(f32)
			check("AllreduceSumFloat32", err, fmt.Sprint(f32) == fmt.Sprint(wf32))

			root := n % size
			b := make([]byte, 5*n)
			want := make([]byte, 5*n)
			for i := range want {
				want[i] = byte(i*13 + root)
			}
			if rank == root {
				copy(b, want)
			}
			err = c.Bcast(b, root)
			check("Bcast", err, bytes.Equal(b, want))

			lens, err := c.AllgatherInt64([]int64{int64(rank), int64(n + rank)})
			ok := len(lens) == 2*size
			for r := 0; ok && r < size; r++ {
				ok = lens[2*r] == int64(r) && lens[2*r+1] == int64(n+r)
			}
			check("AllgatherInt64", err, ok)

			// Gather: rank r sends n*r + r%2 bytes.
			counts := make([]int, size)
			for r := range counts {
				counts[r] = n*r + r%2
			}
			mine := make([]byte, counts[rank])
			for i := range mine {
				mine[i] = byte(rank*50 + i)
			}
			got, err := c.Gatherv(mine, counts, root)
			ok = (rank == root) == (got != nil)
			for r := 0; ok && rank == root && r < size; r++ {
				ok = len(got[r]) == counts[r]
				for i := 0; ok && i < counts[r]; i++ {
					ok = got[r][i] == byte(r*50+i)
				}
			}
			check("Gatherv", err, ok)
		}
	}
	if _, err := c.Gatherv([]byte{1}, make([]int, size), 0); err == nil || !strings.Contains(err.Error(), "but this rank sends 1 bytes") {
		t.Errorf("Gatherv with a wrong count: %v", err)
	}
	if err := c.Barrier(); err != nil {
		t.Errorf("Barrier: %v", err)
	}
}

type node struct{ next *node }

// TestFaultSignals checks that the Go runtime still turns faults into
// panics after MPI_Init: MPI's own handlers for SIGSEGV and SIGFPE would
// end the process instead.
func TestFaultSignals(t *testing.T) {
	c := world(t)
	catch := func(f func()) (msg string) {
		defer func() { msg = fmt.Sprint(recover()) }()
		f()
		return ""
	}
	var n *node
	if msg := catch(func() { _ = n.next }); !strings.Contains(msg, "nil pointer dereference") {
		t.Errorf("nil dereference after MPI_Init: recovered %q", msg)
	}
	zero := c.Rank() - c.Rank()
	if msg := catch(func() { _ = c.Size() / zero }); !strings.Contains(msg, "integer divide by zero") {
		t.Errorf("division by zero after MPI_Init: recovered %q", msg)
	}
}
