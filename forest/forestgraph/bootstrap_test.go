package forestgraph

import (
	"fmt"
	"os"
	"testing"

	"github.com/gomlx/gomlx/backends"

	"github.com/gotrain/gotrain/device"
	"github.com/gotrain/gotrain/forest/internal/core"
)

// testDevice is the device the package's graph tests run on:
// $GOTRAIN_TEST_DEVICE when set (scripts/gpu-verify.sh runs this package's
// test binary with it set to the GPU), else go, GoMLX's pure-Go simplego.
func testDevice() string {
	if d := os.Getenv("GOTRAIN_TEST_DEVICE"); d != "" {
		return d
	}
	return "go"
}

// openTestBackend opens the backend of testDevice, as device.Open does
// for the commands (simplego with ops_sequential, which avoids a
// worker-pool deadlock of GoMLX v0.26's simplego).
func openTestBackend(t testing.TB) backends.Backend {
	t.Helper()
	_, b, err := device.Open(testDevice())
	if err != nil {
		t.Fatalf("opening the test device %q: %v", testDevice(), err)
	}
	t.Cleanup(b.Finalize)
	return b
}

func TestBootstrapMatchesCPU(t *testing.T) {
	b := openTestBackend(t)
	tests := []struct {
		n, draws int
		trees    []int
		batch    int
	}{
		{n: 1, draws: 1, trees: []int{0, 1, 5}, batch: 3},
		{n: 1, draws: 4, trees: []int{3}, batch: 2},
		{n: 2, draws: 2, trees: []int{0, 1, 2, 3, 4}, batch: 2},
		{n: 7, draws: 7, trees: []int{0, 9, 1 << 20}, batch: 3},
		{n: 97, draws: 97, trees: []int{0, 1, 2, 99}, batch: 4},
		{n: 97, draws: 40, trees: []int{5, 6}, batch: 1}, // max_samples < n
		{n: 1009, draws: 1009, trees: []int{12, 13, 14}, batch: 3},
		{n: 10000, draws: 10000, trees: []int{0, 1, 2, 17, 500}, batch: 2},
		{n: 10000, draws: 6321, trees: []int{3, 4}, batch: 2}, // max_samples < n
		{n: 5, draws: 0, trees: []int{0, 1}, batch: 2},
	}
	for _, tc := range tests {
		bs, err := NewBootstrap(b, tc.n, tc.draws, tc.batch)
		if err != nil {
			t.Fatal(err)
		}
		for _, seed := range []uint64{0, 1, 42, ^uint64(0)} {
			name := fmt.Sprintf("n=%d/draws=%d/seed=%d", tc.n, tc.draws, seed)
			got, err := bs.Counts(seed, tc.trees)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if len(got) != len(tc.trees)*tc.n {
				t.Fatalf("%s: %d counts, want %d", name, len(got), len(tc.trees)*tc.n)
			}
			want := make([]int32, tc.n)
			for k, tree := range tc.trees {
				core.BootstrapCounts(seed, tree, tc.draws, want)
				sum := 0
				for i, w := range want {
					sum += int(got[k*tc.n+i])
					if got[k*tc.n+i] != w {
						t.Errorf("%s tree %d: row %d drawn %d times on the graph, %d on the CPU", name, tree, i, got[k*tc.n+i], w)
						break
					}
				}
				if sum != tc.draws {
					t.Errorf("%s tree %d: %d draws counted, want %d", name, tree, sum, tc.draws)
				}
			}
		}
		bs.Close()
	}
}

func TestBootstrapCountsHelperAndErrors(t *testing.T) {
	b := openTestBackend(t)
	got, err := BootstrapCounts(b, 7, []int{2, 3}, 50, 50)
	if err != nil {
		t.Fatal(err)
	}
	want := make([]int32, 50)
	for k, tree := range []int{2, 3} {
		core.BootstrapCounts(7, tree, 50, want)
		for i := range want {
			if got[k*50+i] != want[i] {
				t.Fatalf("tree %d row %d: %d, want %d", tree, i, got[k*50+i], want[i])
			}
		}
	}
	for _, tc := range []struct{ n, draws, trees int }{{0, 1, 1}, {5, -1, 1}, {5, 5, 0}, {1 << 20, 1, 1 << 12}} {
		if _, err := NewBootstrap(b, tc.n, tc.draws, tc.trees); err == nil {
			t.Errorf("NewBootstrap(n=%d, draws=%d, trees=%d) accepted", tc.n, tc.draws, tc.trees)
		}
	}
	if _, err := NewBootstrap(nil, 5, 5, 1); err == nil {
		t.Error("nil backend accepted")
	}
	bs, err := NewBootstrap(b, 5, 5, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer bs.Close()
	if _, err := bs.Counts(1, []int{-1}); err == nil {
		t.Error("negative tree index accepted")
	}
}

// TestBootstrapDevice runs the bootstrap on an explicit device (simplego has
// only device 0) and refuses a negative one.
func TestBootstrapDevice(t *testing.T) {
	b := openTestBackend(t)
	bs, err := NewBootstrap(b, 7, 7, 2)
	if err != nil {
		t.Fatal(err)
	}
	defer bs.Close()
	if err := bs.UseDevice(-1); err == nil {
		t.Error("device -1 accepted")
	}
	if err := bs.UseDevice(0); err != nil {
		t.Fatal(err)
	}
	got, err := bs.Counts(3, []int{0, 1})
	if err != nil {
		t.Fatal(err)
	}
	want := make([]int32, 7)
	for ti := range 2 {
		core.BootstrapCounts(3, ti, 7, want)
		for i, c := range want {
			if got[ti*7+i] != c {
				t.Fatalf("tree %d row %d: %d, want %d", ti, i, got[ti*7+i], c)
			}
		}
	}
}
