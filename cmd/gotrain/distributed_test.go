package main

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/gotrain/gotrain/dist"
	"github.com/gotrain/gotrain/train"
)

// TestForestDistributedRefusals: --distributed names its modes, refuses
// graph devices, and a binary without MPI says how to get one (the tests
// are built without the mpi tag; .ci/run trains under mpirun with one).
func TestForestDistributedRefusals(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--distributed", "rows"}, `--distributed "rows": want trees or data`},
		{[]string{"--distributed", "trees", "--device", "go"}, "--device go is refused"},
		{[]string{"--distributed", "data"}, "built without MPI"},
		{[]string{"--distributed", "trees"}, "go build -tags mpi ./cmd/gotrain"},
	} {
		args := append([]string{"forest", "train", "--dataset", "diabetes", "--trees", "2"}, c.args...)
		_, _, err := run(t, args...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: error %v, want one with %q", c.args, err, c.want)
		}
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--distributed", "--device", "go"}, "--device go is refused"},
		{[]string{"--distributed"}, "built without MPI"},
	} {
		args := append([]string{"forest", "predict", "--model", "m.gtf", "--data", "d.csv"}, c.args...)
		_, _, err := run(t, args...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("predict %v: error %v, want one with %q", c.args, err, c.want)
		}
	}
}

// TestRefusedUnderLauncherWithoutMPI: a binary without MPI that a launcher
// started as one of several processes refuses every command, saying how to
// build one with MPI, instead of running the whole job in each process.
func TestRefusedUnderLauncherWithoutMPI(t *testing.T) {
	t.Setenv("OMPI_COMM_WORLD_SIZE", "3")
	t.Setenv("OMPI_COMM_WORLD_RANK", "1")
	_, _, err := run(t, "forest", "train", "--dataset", "diabetes", "--trees", "2")
	if err == nil || !strings.Contains(err.Error(), "started 3 processes, but this binary was built without MPI") {
		t.Fatalf("error %v", err)
	}
}

// TestTrainDistributedWithoutMPI: moe train and lm lstm train take
// --distributed, and a binary without MPI says how to get one; lm
// transformer train, which trains in one process, has no such flag.
func TestTrainDistributedWithoutMPI(t *testing.T) {
	for _, args := range [][]string{
		{"moe", "train", "--dataset", "digits", "--steps", "1", "--distributed"},
		{"lm", "lstm", "train", "--steps", "1", "--distributed"},
	} {
		_, _, err := run(t, args...)
		if err == nil || !strings.Contains(err.Error(), "--distributed: dist: this binary was built without MPI") ||
			!strings.Contains(err.Error(), "go build -tags mpi ./cmd/gotrain") {
			t.Errorf("%v: error %v, want how to build with MPI", args, err)
		}
	}
	if _, _, err := run(t, "lm", "transformer", "train", "--distributed"); err == nil || !strings.Contains(err.Error(), "unknown flag: --distributed") {
		t.Errorf("lm transformer train --distributed: %v, want an unknown flag", err)
	}
}

// closeCounter is a dist.Comm of size ranks that counts Close calls.
type closeCounter struct {
	dist.Comm
	size, closed int
}

func (c *closeCounter) Size() int    { return c.size }
func (c *closeCounter) Close() error { c.closed++; return nil }

// leaveRanks finalises after success and after an interruption (every
// rank stopped at the same step, and the others must wait for rank 0's
// checkpoint), and leaves without finalising after a failure, so that the
// launcher ends the job; one process always closes.
func TestLeaveRanks(t *testing.T) {
	interrupted := fmt.Errorf("moe: %w after step 5", train.ErrInterrupted)
	for _, c := range []struct {
		size  int
		err   error
		close int
	}{
		{2, nil, 1}, {2, interrupted, 1}, {2, errors.New("no data"), 0}, {1, errors.New("no data"), 1},
	} {
		cc := &closeCounter{size: c.size}
		_ = leaveRanks(cc, c.err)
		if cc.closed != c.close {
			t.Errorf("%d ranks, error %v: closed %d times, want %d", c.size, c.err, cc.closed, c.close)
		}
	}
}
