// Package mpi is gotrain's thin cgo binding to an MPI library (Open MPI 4.1,
// Debian's libopenmpi-dev, found through pkg-config's ompi-c): the world
// communicator's initialisation and finalisation, rank and size, sums and
// maxima in place (Allreduce), broadcast and gather of bytes, an allgather
// of int64s, barrier and the library's error strings.
//
// The binding is compiled only with the build tag mpi and cgo (files
// "//go:build mpi && cgo"); without them the package is this comment alone.
// Package dist is its one user: dist.World wraps it in a dist.Comm and adds
// the checks that every rank makes the same call.
//
// Three rules hold for every call:
//
//   - MPI is initialised with MPI_Init_thread asking for
//     MPI_THREAD_SERIALIZED (Go moves goroutines between OS threads), on a
//     goroutine locked to its OS thread, which also finalises it; every
//     other call holds one mutex, so calls reach MPI one at a time.
//   - MPI_ERRORS_RETURN is set on MPI_COMM_WORLD, so a failing call returns
//     an [*Error] carrying the library's MPI_Error_string text instead of
//     aborting the job.
//   - One MPI call moves at most [MaxChunkBytes] bytes (1 GiB): longer
//     buffers are split into several calls, so no count passes C's int
//     range.
//
// Open MPI's constants (MPI_COMM_WORLD, MPI_INT64_T, MPI_SUM, MPI_IN_PLACE)
// are pointers to library objects in its mpi.h; they are used only inside
// small C functions of the cgo preamble, never held by Go.
package mpi
