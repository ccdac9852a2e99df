package dist

import (
	"testing"
)

// clearLaunchEnv unsets, for the test, every variable Launched reads.
func clearLaunchEnv(t *testing.T) {
	t.Helper()
	for _, l := range launchers {
		if l.size != "" {
			t.Setenv(l.size, "")
		}
		t.Setenv(l.rank, "")
	}
}

func TestLaunched(t *testing.T) {
	tests := []struct {
		name string
		env  map[string]string
		ok   bool
		want Launch
	}{
		{"none", nil, false, Launch{}},
		{"Open MPI", map[string]string{"OMPI_COMM_WORLD_SIZE": "3", "OMPI_COMM_WORLD_RANK": "2"}, true,
			Launch{Launcher: "Open MPI (mpirun)", SizeVar: "OMPI_COMM_WORLD_SIZE", Size: 3, Rank: 2}},
		{"Open MPI over Slurm", map[string]string{"OMPI_COMM_WORLD_SIZE": "4", "OMPI_COMM_WORLD_RANK": "0", "SLURM_STEP_NUM_TASKS": "1", "SLURM_PROCID": "0"}, true,
			Launch{Launcher: "Open MPI (mpirun)", SizeVar: "OMPI_COMM_WORLD_SIZE", Size: 4, Rank: 0}},
		{"MPICH", map[string]string{"PMI_SIZE": "2", "PMI_RANK": "1"}, true,
			Launch{Launcher: "PMI (MPICH's and Intel MPI's mpiexec, Hydra)", SizeVar: "PMI_SIZE", Size: 2, Rank: 1}},
		{"MVAPICH", map[string]string{"MV2_COMM_WORLD_SIZE": "8", "MV2_COMM_WORLD_RANK": "5"}, true,
			Launch{Launcher: "MVAPICH", SizeVar: "MV2_COMM_WORLD_SIZE", Size: 8, Rank: 5}},
		{"srun", map[string]string{"SLURM_STEP_NUM_TASKS": "16", "SLURM_PROCID": "7"}, true,
			Launch{Launcher: "Slurm (srun)", SizeVar: "SLURM_STEP_NUM_TASKS", Size: 16, Rank: 7}},
		{"sbatch script, no srun", map[string]string{"SLURM_NTASKS": "16", "SLURM_PROCID": "0"}, false, Launch{}},
		{"PMIx alone", map[string]string{"PMIX_RANK": "3"}, true,
			Launch{Launcher: "PMIx", Size: 0, Rank: 3}},
		{"unreadable size", map[string]string{"OMPI_COMM_WORLD_SIZE": "three"}, true,
			Launch{Launcher: "Open MPI (mpirun)", SizeVar: "OMPI_COMM_WORLD_SIZE", Size: 0, Rank: -1}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			clearLaunchEnv(t)
			t.Setenv("SLURM_NTASKS", "")
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			got, ok := Launched()
			if ok != tc.ok || got != tc.want {
				t.Errorf("Launched() = %+v, %v; want %+v, %v", got, ok, tc.want, tc.ok)
			}
		})
	}
}
