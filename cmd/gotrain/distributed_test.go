package main

import (
	"strings"
	"testing"
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
