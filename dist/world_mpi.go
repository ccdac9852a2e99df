//go:build mpi && cgo

package dist

import (
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/gotrain/gotrain/internal/mpi"
)

// HasMPI tells whether this binary was built with MPI (cgo and the build
// tag mpi): true here.
func HasMPI() bool { return true }

// world is the process's one World Comm.
var world struct {
	mu   sync.Mutex
	comm *mpiComm
}

// World initialises MPI (MPI_Init_thread with MPI_THREAD_SERIALIZED,
// MPI_ERRORS_RETURN on MPI_COMM_WORLD) and returns MPI_COMM_WORLD as a
// Comm. A second call returns the same Comm. Close finalises MPI, after
// which World fails: MPI cannot be initialised twice in one process.
// Without a launcher, Open MPI starts a world of one process (a
// singleton).
func World() (Comm, error) {
	world.mu.Lock()
	defer world.mu.Unlock()
	if world.comm != nil && !world.comm.closed.Load() {
		return world.comm, nil
	}
	c, err := mpi.Init()
	if err != nil {
		return nil, fmt.Errorf("dist: %w", err)
	}
	world.comm = &mpiComm{c: c}
	return world.comm, nil
}

// mpiComm is World: MPI_COMM_WORLD with the checks that ranks agree.
type mpiComm struct {
	c      *mpi.Comm
	sent   atomic.Int64
	closed atomic.Bool
}

func (m *mpiComm) Rank() int        { return m.c.Rank() }
func (m *mpiComm) Size() int        { return m.c.Size() }
func (m *mpiComm) BytesSent() int64 { return m.sent.Load() }

// agree compares the call's header across the ranks (one MPI_Allreduce of
// six int64s): every rank returns the same error when they disagree.
func (m *mpiComm) agree(o op, root, n int) error {
	if m.closed.Load() {
		return m.wrap(o, ErrClosed)
	}
	h := header(o, root, n)
	if err := m.c.AllreduceMaxInt64(h); err != nil {
		return m.wrap(o, fmt.Errorf("comparing the ranks' calls: %w", err))
	}
	if err := checkHeader(h, m.Size()); err != nil {
		return m.wrap(o, err)
	}
	return nil
}

func (m *mpiComm) wrap(o op, err error) error { return callError(o, m.Rank(), m.Size(), err) }

// count adds n bytes to BytesSent when there is another rank to send to.
func (m *mpiComm) count(n int) {
	if m.Size() > 1 {
		m.sent.Add(int64(n))
	}
}

func (m *mpiComm) AllreduceInt64(buf []int64) error {
	if err := m.agree(opAllreduceInt64, 0, len(buf)); err != nil {
		return err
	}
	if err := m.c.AllreduceSumInt64(buf); err != nil {
		return m.wrap(opAllreduceInt64, err)
	}
	m.count(8 * len(buf))
	return nil
}

func (m *mpiComm) AllreduceFloat64(buf []float64) error {
	if err := m.agree(opAllreduceFloat64, 0, len(buf)); err != nil {
		return err
	}
	if err := m.c.AllreduceSumFloat64(buf); err != nil {
		return m.wrap(opAllreduceFloat64, err)
	}
	m.count(8 * len(buf))
	return nil
}

func (m *mpiComm) AllreduceFloat32(buf []float32) error {
	if err := m.agree(opAllreduceFloat32, 0, len(buf)); err != nil {
		return err
	}
	if err := m.c.AllreduceSumFloat32(buf); err != nil {
		return m.wrap(opAllreduceFloat32, err)
	}
	m.count(4 * len(buf))
	return nil
}

func (m *mpiComm) Bcast(buf []byte, root int) error {
	if err := m.agree(opBcast, root, len(buf)); err != nil {
		return err
	}
	if len(buf) > 0 {
		if err := m.c.Bcast(buf, root); err != nil {
			return m.wrap(opBcast, err)
		}
	}
	if m.Rank() == root {
		m.count(len(buf))
	}
	return nil
}

func (m *mpiComm) Gather(buf []byte, root int) ([][]byte, error) {
	if err := m.agree(opGather, root, len(buf)); err != nil {
		return nil, err
	}
	lens, err := m.c.AllgatherInt64([]int64{int64(len(buf))})
	if err != nil {
		return nil, m.wrap(opGather, fmt.Errorf("gathering the lengths: %w", err))
	}
	counts := make([]int, m.Size())
	for r := range counts {
		counts[r] = int(lens[r])
	}
	out, err := m.c.Gatherv(buf, counts, root)
	if err != nil {
		return nil, m.wrap(opGather, err)
	}
	if m.Rank() != root {
		m.count(len(buf))
	}
	return out, nil
}

func (m *mpiComm) Barrier() error {
	if err := m.agree(opBarrier, 0, 0); err != nil {
		return err
	}
	if err := m.c.Barrier(); err != nil {
		return m.wrap(opBarrier, err)
	}
	return nil
}

// Close finalises MPI (MPI_Finalize), a collective call of every rank.
func (m *mpiComm) Close() error {
	if m.closed.Swap(true) {
		return nil
	}
	if err := m.c.Finalize(); err != nil {
		return fmt.Errorf("dist: closing the world communicator: %w", err)
	}
	return nil
}
