// Package dist is gotrain's collective layer: the few operations a
// distributed learner needs between processes (sums of int64, float32 and
// float64 buffers on every rank, broadcast and gather of bytes, barrier),
// behind one interface, [Comm], with three implementations:
//
//   - [World]: MPI's world communicator, for processes started by an MPI
//     launcher (mpirun, Slurm's srun, Kubernetes' MPI Operator). It needs a
//     binary built with cgo and the build tag mpi against Open MPI
//     (internal/mpi); other binaries get an error that says how to build
//     one ([ErrNoMPI]).
//   - [Local]: n ranks in one process (goroutines), so that distributed
//     algorithms are tested by plain go test.
//   - [Self]: one rank, every operation the identity.
//
// Every rank makes the same calls in the same order (collective calls). A
// call that ranks disagree on — different operations, buffer lengths that
// must match and do not, different roots, a root out of range — returns an
// error on every rank instead of hanging or corrupting memory: World checks
// with one small MPI_Allreduce before each call, Local compares the ranks'
// calls directly. A rank that stops calling while others wait cannot be
// detected by MPI; Local answers the waiting ranks with an error once the
// missing rank's Comm is closed.
//
// Sums: int64 sums are exact (wrapping on overflow, as in MPI). Float sums
// on Local and Self add in rank order (((rank 0 + rank 1) + rank 2) ...),
// whatever order the ranks arrive in, so they are deterministic; on World
// the MPI library chooses the order of the additions (the MPI standard
// fixes none), so results may differ from Local's in the last bits. A
// learner that must be bit-identical to one process sums integers only.
//
// [Launched] tells whether a launcher started this process and how many
// processes it started, and [CheckLaunch] refuses a binary without MPI that
// was started as one of several, so it does not silently run the same job
// N times.
package dist
