//go:build mpi && !cgo

package dist

// The mpi build tag needs cgo: MPI is a C library. The declaration below
// stops such a build with an error naming the fix.
var _ = mpi_build_tag_needs_cgo__set_CGO_ENABLED_1_and_install_a_C_compiler_and_libopenmpi_dev

// World is not built without cgo (see above).
func World() (Comm, error) { return nil, ErrNoMPI }

// HasMPI is not built without cgo (see above).
func HasMPI() bool { return false }
