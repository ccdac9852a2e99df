package dist

import (
	"fmt"
	"os"
	"strconv"
)

// Launch is what a parallel launcher told this process through its
// environment.
type Launch struct {
	// Launcher names the launcher, such as "Open MPI (mpirun)".
	Launcher string
	// SizeVar is the variable read for Size ("" when the launcher sets
	// none this package knows, as PMIx alone).
	SizeVar string
	// Size is the number of processes started, 0 when unknown.
	Size int
	// Rank is this process's rank, -1 when unknown.
	Rank int
}

// launchers are the environment variables parallel launchers set in each
// process they start, in the order they are looked at: a size variable
// and a rank variable of each.
var launchers = []struct {
	name, size, rank string
}{
	{"Open MPI (mpirun)", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_RANK"},
	{"PMI (MPICH's and Intel MPI's mpiexec, Hydra)", "PMI_SIZE", "PMI_RANK"},
	{"MVAPICH", "MV2_COMM_WORLD_SIZE", "MV2_COMM_WORLD_RANK"},
	// srun sets SLURM_STEP_NUM_TASKS for a job step only; SLURM_NTASKS is
	// also set in an sbatch script, which no launcher started.
	{"Slurm (srun)", "SLURM_STEP_NUM_TASKS", "SLURM_PROCID"},
	{"PMIx", "", "PMIX_RANK"},
}

// Launched tells whether a parallel launcher started this process, by the
// environment variables it sets: Open MPI's mpirun (OMPI_COMM_WORLD_SIZE),
// PMI launchers such as MPICH's mpiexec (PMI_SIZE), MVAPICH
// (MV2_COMM_WORLD_SIZE), Slurm's srun (SLURM_STEP_NUM_TASKS, which an
// sbatch script alone does not set) and PMIx (PMIX_RANK). A variable set
// to the empty string counts as unset.
func Launched() (Launch, bool) {
	for _, l := range launchers {
		sizeText := ""
		if l.size != "" {
			sizeText = os.Getenv(l.size)
		}
		rankText := os.Getenv(l.rank)
		if sizeText == "" && (l.size != "" || rankText == "") {
			continue
		}
		out := Launch{Launcher: l.name, SizeVar: l.size, Rank: -1}
		if n, err := strconv.Atoi(sizeText); err == nil && n > 0 {
			out.Size = n
		}
		if r, err := strconv.Atoi(rankText); err == nil && r >= 0 {
			out.Rank = r
		}
		return out, true
	}
	return Launch{}, false
}

// CheckLaunch returns an error wrapping ErrNoMPI when this binary has no
// MPI and a launcher started it as one of several processes (or of an
// unknown number): each process would otherwise run the whole job alone.
// It returns nil in a binary with MPI, and when no launcher, or a launcher
// of one process, started this one.
func CheckLaunch() error {
	if HasMPI() {
		return nil
	}
	l, ok := Launched()
	if !ok || l.Size == 1 {
		return nil
	}
	n := "an unknown number of"
	if l.Size > 1 {
		n = strconv.Itoa(l.Size)
	}
	return fmt.Errorf("dist: %s started %s processes, but %w", l.Launcher, n, ErrNoMPI)
}
