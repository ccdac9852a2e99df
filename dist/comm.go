package dist

import (
	"errors"
	"fmt"
)

// Comm is a group of ranks that make collective calls together: every rank
// calls the same methods, in the same order, with buffers of the lengths
// the method asks for. A Comm is used by one goroutine at a time (World's
// calls are serialised by a mutex anyway).
//
// Errors are returned on every rank alike when the ranks disagree about a
// call (see the package documentation); an error from the transport (MPI)
// is wrapped with the operation and the rank.
type Comm interface {
	// Rank is this rank's number, from 0 to Size()-1.
	Rank() int
	// Size is the number of ranks.
	Size() int

	// AllreduceInt64 replaces buf, on every rank, by the element-wise sum
	// of every rank's buf (exact; overflow wraps). Every rank passes the
	// same length.
	AllreduceInt64(buf []int64) error
	// AllreduceFloat64 replaces buf by the element-wise float64 sum over
	// the ranks: in rank order on Local and Self, in the MPI library's
	// order on World.
	AllreduceFloat64(buf []float64) error
	// AllreduceFloat32 replaces buf by the element-wise float32 sum over
	// the ranks (each addition rounded to float32), in the same order as
	// AllreduceFloat64.
	AllreduceFloat32(buf []float32) error

	// Bcast copies root's buf into every other rank's buf. Every rank
	// passes the same length and the same root.
	Bcast(buf []byte, root int) error
	// Gather collects every rank's buf at root, whatever their lengths:
	// root gets Size() buffers in rank order (copies; empty ones non-nil),
	// the other ranks nil. Every rank passes the same root.
	Gather(buf []byte, root int) ([][]byte, error)
	// Barrier returns once every rank has called it.
	Barrier() error

	// BytesSent is the payload this rank has handed over for other ranks
	// so far: for an allreduce the buffer's bytes (8 or 4 per element),
	// for a broadcast the buffer's bytes on the root only, for a gather
	// the buffer's bytes on every rank but the root; nothing when Size()
	// is 1, and nothing for barriers. It is the volume the algorithm asks
	// to move, the same on every Comm, not what the transport puts on the
	// wire: an MPI allreduce moves each byte more than once (a ring about
	// 2(n-1)/n times the buffer), and World adds a fixed header to each
	// call (48 bytes; a gather 8 more per rank) that BytesSent leaves out.
	BytesSent() int64

	// Close ends this rank's use of the Comm. On World it finalises MPI
	// (a collective call: every rank closes); on Local the other ranks'
	// pending and later calls fail instead of waiting for this rank.
	// Later calls on a closed Comm return ErrClosed; a second Close
	// returns nil.
	Close() error
}

// ErrClosed is returned by a call on a Comm after its Close.
var ErrClosed = errors.New("dist: communicator closed")

// ErrNoMPI is wrapped by World's error in a binary built without MPI, and
// by CheckLaunch's. Its text says how to get a binary with MPI.
var ErrNoMPI = errors.New("this binary was built without MPI; to run across processes, install Open MPI " +
	"(Debian, Ubuntu: apt-get install libopenmpi-dev openmpi-bin) and build with cgo and the mpi tag: " +
	"go build -tags mpi ./cmd/gotrain")

// op is a collective operation, as the ranks compare them.
type op int64

const (
	opAllreduceInt64 op = iota + 1
	opAllreduceFloat64
	opAllreduceFloat32
	opBcast
	opGather
	opBarrier
)

var opNames = map[op]string{
	opAllreduceInt64:   "AllreduceInt64",
	opAllreduceFloat64: "AllreduceFloat64",
	opAllreduceFloat32: "AllreduceFloat32",
	opBcast:            "Bcast",
	opGather:           "Gather",
	opBarrier:          "Barrier",
}

func (o op) String() string {
	if s, ok := opNames[o]; ok {
		return s
	}
	return fmt.Sprintf("operation %d", int64(o))
}

// hasRoot tells whether an operation has a root.
func (o op) hasRoot() bool { return o == opBcast || o == opGather }

// sameLength tells whether every rank must pass the same buffer length.
func (o op) sameLength() bool { return o != opGather && o != opBarrier }

// header is what World's ranks compare before a call: the operation, the
// root and the length, each with its negation, so that one element-wise
// maximum over the ranks gives every value's maximum and minimum.
func header(o op, root, n int) []int64 {
	r, l := int64(0), int64(0)
	if o.hasRoot() {
		r = int64(root)
	}
	if o.sameLength() {
		l = int64(n)
	}
	return []int64{int64(o), -int64(o), r, -r, l, -l}
}

// checkHeader reads the element-wise maximum of every rank's header and
// returns the error every rank returns alike when the ranks disagree, or
// when the root is out of range for size ranks.
func checkHeader(h []int64, size int) error {
	if len(h) != 6 {
		return fmt.Errorf("header of %d values, want 6", len(h))
	}
	if lo, hi := op(-h[1]), op(h[0]); lo != hi {
		return fmt.Errorf("ranks make different calls (%v on some, %v on others): every rank must make the same collective calls in the same order", lo, hi)
	}
	o := op(h[0])
	if lo, hi := -h[3], h[2]; lo != hi {
		return fmt.Errorf("ranks name different roots (from %d to %d)", lo, hi)
	}
	if lo, hi := -h[5], h[4]; lo != hi {
		return fmt.Errorf("buffer lengths differ across ranks (lengths from %d to %d)", lo, hi)
	}
	if o.hasRoot() {
		if err := checkRoot(int(h[2]), size); err != nil {
			return err
		}
	}
	return nil
}

// checkRoot refuses a root out of range.
func checkRoot(root, size int) error {
	if root < 0 || root >= size {
		return fmt.Errorf("root %d out of range for %d ranks", root, size)
	}
	return nil
}

// callError wraps err with the operation and the rank.
func callError(o op, rank, size int, err error) error {
	return fmt.Errorf("dist: %v on rank %d of %d: %w", o, rank, size, err)
}
