//go:build !mpi

package dist

import "fmt"

// World returns MPI's world communicator in a binary built with MPI; in
// this one, built without the mpi tag, it returns an error wrapping
// ErrNoMPI, which says how to build one.
func World() (Comm, error) {
	return nil, fmt.Errorf("dist: %w", ErrNoMPI)
}

// HasMPI tells whether this binary was built with MPI (cgo and the build
// tag mpi): false here.
func HasMPI() bool { return false }
