//go:build mpi && cgo

package mpi

/*
#cgo pkg-config: ompi-c
#include <mpi.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>

enum { GT_INT64 = 1, GT_FLOAT64 = 2, GT_FLOAT32 = 3 };
enum { GT_SUM = 0, GT_MAX = 1 };

static MPI_Datatype gt_type(int t) {
	switch (t) {
	case GT_INT64: return MPI_INT64_T;
	case GT_FLOAT64: return MPI_DOUBLE;
	case GT_FLOAT32: return MPI_FLOAT;
	}
	return MPI_DATATYPE_NULL;
}

// The signals the Go runtime turns into panics (nil dereferences, integer
// division by zero). An MPI library may install its own handlers for them
// during MPI_Init (Open MPI's opal_signal, UCX's error handling); those
// would turn a recoverable Go panic into a crash report, so they are put
// back as the Go runtime had them.
static const int gt_fault_signals[] = { SIGSEGV, SIGBUS, SIGFPE, SIGILL };
#define GT_NFAULT (sizeof gt_fault_signals / sizeof gt_fault_signals[0])

// gt_init initialises MPI asking for MPI_THREAD_SERIALIZED and stores the
// level provided; *restored counts the fault signals whose handlers MPI
// changed and that were put back.
static int gt_init(int *provided, int *restored) {
	struct sigaction saved[GT_NFAULT];
	for (size_t i = 0; i < GT_NFAULT; i++) sigaction(gt_fault_signals[i], NULL, &saved[i]);
	int rc = MPI_Init_thread(NULL, NULL, MPI_THREAD_SERIALIZED, provided);
	*restored = 0;
	for (size_t i = 0; i < GT_NFAULT; i++) {
		struct sigaction now;
		sigaction(gt_fault_signals[i], NULL, &now);
		if (now.sa_sigaction != saved[i].sa_sigaction || now.sa_flags != saved[i].sa_flags) {
			sigaction(gt_fault_signals[i], &saved[i], NULL);
			(*restored)++;
		}
	}
	return rc;
}

static int gt_errors_return(void) { return MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN); }
static int gt_rank(int *r) { return MPI_Comm_rank(MPI_COMM_WORLD, r); }
static int gt_size(int *s) { return MPI_Comm_size(MPI_COMM_WORLD, s); }

static int gt_allreduce(void *buf, int count, int type, int op) {
	return MPI_Allreduce(MPI_IN_PLACE, buf, count, gt_type(type), op == GT_MAX ? MPI_MAX : MPI_SUM, MPI_COMM_WORLD);
}
static int gt_bcast(void *buf, int count, int root) { return MPI_Bcast(buf, count, MPI_BYTE, root, MPI_COMM_WORLD); }
static int gt_allgather_int64(const int64_t *send, int count, int64_t *recv) {
	return MPI_Allgather(send, count, MPI_INT64_T, recv, count, MPI_INT64_T, MPI_COMM_WORLD);
}
static int gt_gatherv(const void *send, int sendcount, void *recv, const int *counts, const int *displs, int root) {
	return MPI_Gatherv(send, sendcount, MPI_BYTE, recv, counts, displs, MPI_BYTE, root, MPI_COMM_WORLD);
}
static int gt_barrier(void) { return MPI_Barrier(MPI_COMM_WORLD); }

static int gt_error_string(int code, char *buf, int *len) { return MPI_Error_string(code, buf, len); }
static int gt_error_class(int code, int *class) { return MPI_Error_class(code, class); }
static int gt_library_version(char *buf, int *len) { return MPI_Get_library_version(buf, len); }
*/
import "C"

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"strings"
	"sync"
	"unsafe"
)

// MaxChunkBytes is the most bytes one MPI call moves (1 GiB); a longer
// buffer is split into several calls. Values outside [1, MaxInt32] are
// clamped. Tests lower it to exercise the split; it must not change while
// a call runs, and must be the same on every rank.
var MaxChunkBytes = 1 << 30

// chunkBytes is MaxChunkBytes clamped to [1, MaxInt32].
func chunkBytes() int {
	return min(max(MaxChunkBytes, 1), math.MaxInt32)
}

// Error is a failed MPI call: the function, the error code it returned,
// the code's error class and the library's text for it.
type Error struct {
	// Call is the MPI function, such as "MPI_Allreduce".
	Call string
	// Code is the error code the call returned.
	Code int
	// Class is the code's error class (MPI_Error_class), -1 when unknown.
	Class int
	// Text is MPI_Error_string's text for Code.
	Text string
}

func (e *Error) Error() string { return e.Call + ": " + e.Text }

// ErrorString is the MPI library's text for an error code
// (MPI_Error_string), or a note that it has none.
func ErrorString(code int) string {
	buf := make([]byte, C.MPI_MAX_ERROR_STRING+1)
	var n C.int
	if rc := C.gt_error_string(C.int(code), (*C.char)(unsafe.Pointer(&buf[0])), &n); rc != C.MPI_SUCCESS || n < 0 || int(n) > len(buf) {
		return fmt.Sprintf("MPI error code %d (MPI_Error_string has no text for it)", code)
	}
	return string(buf[:n])
}

// callError is the error of an MPI call that returned rc.
func callError(call string, rc C.int) error {
	class := C.int(-1)
	if C.gt_error_class(rc, &class) != C.MPI_SUCCESS {
		class = -1
	}
	return &Error{Call: call, Code: int(rc), Class: int(class), Text: ErrorString(int(rc))}
}

// ErrFinalized is returned by a call on a communicator after Finalize.
var ErrFinalized = errors.New("mpi: MPI was finalized")

// Comm is MPI_COMM_WORLD. Its methods may be called from any goroutine;
// they reach MPI one at a time. Collective calls must be made in the same
// order on every rank.
type Comm struct {
	mu        sync.Mutex
	rank      int
	size      int
	level     string
	restored  int
	finalized bool
	// finalize asks the goroutine that initialised MPI to finalise it; it
	// answers on the channel it is sent.
	finalize chan chan error
}

// state is the process's one initialisation of MPI: MPI may be
// initialised once and never again after MPI_Finalize.
var state struct {
	mu        sync.Mutex
	world     *Comm
	err       error
	finalized bool
}

// Init initialises MPI (once per process) and returns MPI_COMM_WORLD. A
// second call returns the same Comm; after Finalize, or after a failed
// first call, it returns an error, since MPI cannot be initialised twice.
func Init() (*Comm, error) {
	state.mu.Lock()
	defer state.mu.Unlock()
	switch {
	case state.world != nil && !state.finalized:
		return state.world, nil
	case state.finalized:
		return nil, fmt.Errorf("mpi: MPI was finalized in this process; it cannot be initialised again")
	case state.err != nil:
		return nil, state.err
	}
	c := &Comm{finalize: make(chan chan error)}
	ready := make(chan error)
	go c.mainThread(ready)
	if err := <-ready; err != nil {
		state.err = err
		return nil, err
	}
	state.world = c
	return c, nil
}

// mainThread initialises MPI on an OS thread of its own, which it keeps
// until Finalize: the MPI standard wants MPI_Finalize called by the thread
// that initialised MPI. The thread ends with the goroutine.
func (c *Comm) mainThread(ready chan<- error) {
	runtime.LockOSThread() // never unlocked: the thread exits with the goroutine
	var provided, restored C.int
	if rc := C.gt_init(&provided, &restored); rc != C.MPI_SUCCESS {
		ready <- fmt.Errorf("mpi: initialising MPI: %w", callError("MPI_Init_thread", rc))
		return
	}
	c.restored = int(restored)
	c.level = threadLevel(provided)
	if provided < C.MPI_THREAD_SERIALIZED {
		C.MPI_Finalize()
		ready <- fmt.Errorf("mpi: the MPI library provides %s; gotrain needs MPI_THREAD_SERIALIZED or better (its calls come from any OS thread, one at a time)", c.level)
		return
	}
	if rc := C.gt_errors_return(); rc != C.MPI_SUCCESS {
		C.MPI_Finalize()
		ready <- fmt.Errorf("mpi: setting MPI_ERRORS_RETURN on MPI_COMM_WORLD: %w", callError("MPI_Comm_set_errhandler", rc))
		return
	}
	var r, s C.int
	if rc := C.gt_rank(&r); rc != C.MPI_SUCCESS {
		C.MPI_Finalize()
		ready <- fmt.Errorf("mpi: %w", callError("MPI_Comm_rank", rc))
		return
	}
	if rc := C.gt_size(&s); rc != C.MPI_SUCCESS {
		C.MPI_Finalize()
		ready <- fmt.Errorf("mpi: %w", callError("MPI_Comm_size", rc))
		return
	}
	c.rank, c.size = int(r), int(s)
	ready <- nil
	reply := <-c.finalize
	if rc := C.MPI_Finalize(); rc != C.MPI_SUCCESS {
		reply <- fmt.Errorf("mpi: %w", callError("MPI_Finalize", rc))
		return
	}
	reply <- nil
}

// threadLevel names an MPI thread support level.
func threadLevel(l C.int) string {
	switch l {
	case C.MPI_THREAD_SINGLE:
		return "MPI_THREAD_SINGLE"
	case C.MPI_THREAD_FUNNELED:
		return "MPI_THREAD_FUNNELED"
	case C.MPI_THREAD_SERIALIZED:
		return "MPI_THREAD_SERIALIZED"
	case C.MPI_THREAD_MULTIPLE:
		return "MPI_THREAD_MULTIPLE"
	}
	return fmt.Sprintf("thread level %d", int(l))
}

// Rank is this process's rank in MPI_COMM_WORLD.
func (c *Comm) Rank() int { return c.rank }

// Size is the number of processes in MPI_COMM_WORLD.
func (c *Comm) Size() int { return c.size }

// ThreadLevel names the thread support MPI_Init_thread provided
// (MPI_THREAD_SERIALIZED or MPI_THREAD_MULTIPLE).
func (c *Comm) ThreadLevel() string { return c.level }

// RestoredSignals is how many of the Go runtime's fault-signal handlers
// (SIGSEGV, SIGBUS, SIGFPE, SIGILL) MPI_Init replaced and Init put back.
func (c *Comm) RestoredSignals() int { return c.restored }

// LibraryVersion is MPI_Get_library_version's text, such as
// "Open MPI v4.1.4, ...", its first line only.
func LibraryVersion() (string, error) {
	buf := make([]byte, C.MPI_MAX_LIBRARY_VERSION_STRING+1)
	var n C.int
	if rc := C.gt_library_version((*C.char)(unsafe.Pointer(&buf[0])), &n); rc != C.MPI_SUCCESS {
		return "", fmt.Errorf("mpi: %w", callError("MPI_Get_library_version", rc))
	}
	if n < 0 || int(n) > len(buf) {
		n = 0
	}
	s := strings.TrimRight(string(buf[:n]), "\x00\n")
	first, _, _ := strings.Cut(s, "\n")
	return first, nil
}

// Finalize finalises MPI (MPI_Finalize), a collective call of every rank.
// Later calls on c return ErrFinalized; a second Finalize returns nil.
func (c *Comm) Finalize() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.finalized {
		return nil
	}
	c.finalized = true
	state.mu.Lock()
	state.finalized = true
	state.mu.Unlock()
	reply := make(chan error)
	c.finalize <- reply
	return <-reply
}

// lock takes the call mutex, or fails after Finalize.
func (c *Comm) lock() error {
	c.mu.Lock()
	if c.finalized {
		c.mu.Unlock()
		return ErrFinalized
	}
	return nil
}

// ptr is the address of a slice's first element, nil for an empty one.
func ptr[T any](s []T) unsafe.Pointer {
	if len(s) == 0 {
		return nil
	}
	return unsafe.Pointer(&s[0])
}

// allreduce runs MPI_Allreduce in place over n elements of elem bytes at p,
// in chunks of at most chunkBytes.
func (c *Comm) allreduce(p unsafe.Pointer, n, elem int, typ, op C.int) error {
	if err := c.lock(); err != nil {
		return err
	}
	defer c.mu.Unlock()
	per := max(chunkBytes()/elem, 1)
	for off := 0; off < n; off += per {
		k := min(per, n-off)
		if rc := C.gt_allreduce(unsafe.Add(p, off*elem), C.int(k), typ, op); rc != C.MPI_SUCCESS {
			return fmt.Errorf("mpi: elements %d to %d of %d: %w", off, off+k, n, callError("MPI_Allreduce", rc))
		}
	}
	return nil
}

// AllreduceSumInt64 replaces buf by the element-wise sum of every rank's
// buf (MPI_SUM on MPI_INT64_T; overflow wraps). Every rank passes the same
// length.
func (c *Comm) AllreduceSumInt64(buf []int64) error {
	return c.allreduce(ptr(buf), len(buf), 8, C.GT_INT64, C.GT_SUM)
}

// AllreduceMaxInt64 replaces buf by the element-wise maximum over the ranks.
func (c *Comm) AllreduceMaxInt64(buf []int64) error {
	return c.allreduce(ptr(buf), len(buf), 8, C.GT_INT64, C.GT_MAX)
}

// AllreduceSumFloat64 replaces buf by the element-wise sum over the ranks
// (MPI_SUM on MPI_DOUBLE, in the library's order of additions).
func (c *Comm) AllreduceSumFloat64(buf []float64) error {
	return c.allreduce(ptr(buf), len(buf), 8, C.GT_FLOAT64, C.GT_SUM)
}

// AllreduceSumFloat32 replaces buf by the element-wise sum over the ranks
// (MPI_SUM on MPI_FLOAT, in the library's order of additions).
func (c *Comm) AllreduceSumFloat32(buf []float32) error {
	return c.allreduce(ptr(buf), len(buf), 4, C.GT_FLOAT32, C.GT_SUM)
}

// Bcast copies root's buf into every other rank's buf (MPI_Bcast of
// bytes, in chunks). Every rank passes the same length. The root is not
// checked here: MPI reports a bad one (MPI_ERR_ROOT).
func (c *Comm) Bcast(buf []byte, root int) error {
	if err := c.lock(); err != nil {
		return err
	}
	defer c.mu.Unlock()
	per := chunkBytes()
	if len(buf) == 0 {
		if rc := C.gt_bcast(nil, 0, C.int(root)); rc != C.MPI_SUCCESS {
			return fmt.Errorf("mpi: %w", callError("MPI_Bcast", rc))
		}
		return nil
	}
	for off := 0; off < len(buf); off += per {
		k := min(per, len(buf)-off)
		if rc := C.gt_bcast(unsafe.Pointer(&buf[off]), C.int(k), C.int(root)); rc != C.MPI_SUCCESS {
			return fmt.Errorf("mpi: bytes %d to %d of %d: %w", off, off+k, len(buf), callError("MPI_Bcast", rc))
		}
	}
	return nil
}

// AllgatherInt64 returns every rank's send, in rank order (MPI_Allgather),
// for a few values (lengths): it is not split into chunks, and the values
// received, len(send)*Size(), must fit in C's int.
func (c *Comm) AllgatherInt64(send []int64) ([]int64, error) {
	if err := c.lock(); err != nil {
		return nil, err
	}
	defer c.mu.Unlock()
	if len(send) > math.MaxInt32/c.size {
		return nil, fmt.Errorf("mpi: AllgatherInt64 of %d values from each of %d ranks: more than %d values in one call", len(send), c.size, math.MaxInt32)
	}
	recv := make([]int64, len(send)*c.size)
	if len(send) == 0 {
		return recv, nil
	}
	if rc := C.gt_allgather_int64((*C.int64_t)(unsafe.Pointer(&send[0])), C.int(len(send)), (*C.int64_t)(unsafe.Pointer(&recv[0]))); rc != C.MPI_SUCCESS {
		return nil, fmt.Errorf("mpi: %w", callError("MPI_Allgather", rc))
	}
	return recv, nil
}

// Gatherv gathers every rank's send at root (MPI_Gatherv of bytes). counts
// is every rank's length, the same on every rank (counts[Rank()] ==
// len(send)); the root gets a buffer of each rank, in rank order, the
// others nil. When the lengths add up to more than MaxChunkBytes, the
// buffers travel in rounds of at most MaxChunkBytes/Size bytes per rank.
func (c *Comm) Gatherv(send []byte, counts []int, root int) ([][]byte, error) {
	if err := c.lock(); err != nil {
		return nil, err
	}
	defer c.mu.Unlock()
	if len(counts) != c.size {
		return nil, fmt.Errorf("mpi: Gatherv: %d counts for %d ranks", len(counts), c.size)
	}
	if counts[c.rank] != len(send) {
		return nil, fmt.Errorf("mpi: Gatherv: counts[%d] is %d, but this rank sends %d bytes", c.rank, counts[c.rank], len(send))
	}
	total, longest := 0, 0
	for i, n := range counts {
		if n < 0 {
			return nil, fmt.Errorf("mpi: Gatherv: counts[%d] is negative (%d)", i, n)
		}
		if total > math.MaxInt-n {
			return nil, fmt.Errorf("mpi: Gatherv: the lengths add up to more than %d bytes", math.MaxInt)
		}
		total += n
		longest = max(longest, n)
	}
	isRoot := c.rank == root
	var out [][]byte
	chunk := chunkBytes()
	icounts := make([]C.int, c.size)
	displs := make([]C.int, c.size)
	if total <= chunk {
		// One call, straight into one buffer the root's slices share.
		var recv []byte
		if isRoot {
			recv = make([]byte, total)
			out = make([][]byte, c.size)
		}
		off := 0
		for i, n := range counts {
			icounts[i], displs[i] = C.int(n), C.int(off)
			if isRoot {
				out[i] = recv[off : off+n : off+n]
			}
			off += n
		}
		if rc := C.gt_gatherv(ptr(send), C.int(len(send)), ptr(recv), &icounts[0], &displs[0], C.int(root)); rc != C.MPI_SUCCESS {
			return nil, fmt.Errorf("mpi: %w", callError("MPI_Gatherv", rc))
		}
		return out, nil
	}
	// Rounds: in round r each rank sends its bytes [r*per, (r+1)*per).
	per := max(chunk/c.size, 1)
	var recv []byte
	if isRoot {
		out = make([][]byte, c.size)
		for i, n := range counts {
			out[i] = make([]byte, n)
		}
		recv = make([]byte, per*c.size)
	}
	rounds := (longest + per - 1) / per
	for r := range rounds {
		lo := r * per
		off := 0
		for i, n := range counts {
			k := min(max(n-lo, 0), per)
			icounts[i], displs[i] = C.int(k), C.int(off)
			off += k
		}
		mine := send[min(lo, len(send)):min(lo+per, len(send))]
		if rc := C.gt_gatherv(ptr(mine), C.int(len(mine)), ptr(recv), &icounts[0], &displs[0], C.int(root)); rc != C.MPI_SUCCESS {
			return nil, fmt.Errorf("mpi: round %d of %d: %w", r+1, rounds, callError("MPI_Gatherv", rc))
		}
		if isRoot {
			for i := range out {
				copy(out[i][min(lo, len(out[i])):], recv[displs[i]:displs[i]+icounts[i]])
			}
		}
	}
	return out, nil
}

// Barrier returns once every rank has called it (MPI_Barrier).
func (c *Comm) Barrier() error {
	if err := c.lock(); err != nil {
		return err
	}
	defer c.mu.Unlock()
	if rc := C.gt_barrier(); rc != C.MPI_SUCCESS {
		return fmt.Errorf("mpi: %w", callError("MPI_Barrier", rc))
	}
	return nil
}
