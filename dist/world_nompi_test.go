//go:build !mpi

package dist

import (
	"errors"
	"strings"
	"testing"
)

// TestWorldWithoutMPI checks that a binary without MPI says how to get
// one, and refuses to run as one of several launched processes.
func TestWorldWithoutMPI(t *testing.T) {
	if HasMPI() {
		t.Fatal("HasMPI() is true in a build without the mpi tag")
	}
	c, err := World()
	if c != nil || !errors.Is(err, ErrNoMPI) {
		t.Fatalf("World() = %v, %v; want ErrNoMPI", c, err)
	}
	for _, want := range []string{"built without MPI", "apt-get install libopenmpi-dev openmpi-bin", "go build -tags mpi ./cmd/gotrain"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("World's error %q does not say %q", err, want)
		}
	}

	tests := []struct {
		name string
		env  map[string]string
		want string // "" for no error
	}{
		{"no launcher", nil, ""},
		{"mpirun -np 1", map[string]string{"OMPI_COMM_WORLD_SIZE": "1"}, ""},
		{"mpirun -np 3", map[string]string{"OMPI_COMM_WORLD_SIZE": "3"}, "dist: Open MPI (mpirun) started 3 processes, but this binary was built without MPI"},
		{"srun -n 2", map[string]string{"SLURM_STEP_NUM_TASKS": "2"}, "dist: Slurm (srun) started 2 processes"},
		{"PMIx, size unknown", map[string]string{"PMIX_RANK": "0"}, "dist: PMIx started an unknown number of processes"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			clearLaunchEnv(t)
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			err := CheckLaunch()
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("CheckLaunch() = %v, want nil", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want) || !errors.Is(err, ErrNoMPI)):
				t.Errorf("CheckLaunch() = %v, want an ErrNoMPI saying %q", err, tc.want)
			}
		})
	}
}
