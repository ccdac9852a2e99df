//go:build mpi && cgo

package dist

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/gotrain/gotrain/internal/mpi"
)

// The World tests run under an MPI launcher, every rank running the same
// tests in the same order (go test -tags mpi -exec 'mpirun -np 3' ./dist);
// started otherwise, they skip.

// TestMain closes World after the tests, if a test opened it, and checks
// what follows: calls fail with ErrClosed and World cannot open again.
func TestMain(m *testing.M) {
	code := m.Run()
	world.mu.Lock()
	c := world.comm
	world.mu.Unlock()
	if c != nil {
		fail := func(format string, args ...any) {
			fmt.Printf("--- FAIL: TestMain (rank %d): %s\n", c.Rank(), fmt.Sprintf(format, args...))
			code = 1
		}
		if err := c.Close(); err != nil {
			fail("Close: %v", err)
		}
		if err := c.Close(); err != nil {
			fail("second Close: %v", err)
		}
		if err := c.Barrier(); !errors.Is(err, ErrClosed) {
			fail("Barrier after Close: %v, want ErrClosed", err)
		}
		if _, err := World(); err == nil || !strings.Contains(err.Error(), "cannot be initialised again") {
			fail("World after Close: %v", err)
		}
	}
	os.Exit(code)
}

// openWorld returns World, or skips the test when no launcher started
// this process as one of two or more.
func openWorld(t *testing.T) Comm {
	t.Helper()
	l, ok := Launched()
	if !ok || l.Size < 2 {
		t.Skip("not started by an MPI launcher with 2 or more processes: run go test -tags mpi -exec 'mpirun -np 3' ./dist")
	}
	c, err := World()
	if err != nil {
		t.Fatal(err)
	}
	if c.Size() != l.Size || c.Rank() != l.Rank {
		t.Fatalf("World is rank %d of %d; %s says rank %d of %d", c.Rank(), c.Size(), l.Launcher, l.Rank, l.Size)
	}
	return c
}

func TestWorld(t *testing.T) {
	c := openWorld(t)
	if !HasMPI() {
		t.Error("HasMPI() is false in a build with MPI")
	}
	if err := CheckLaunch(); err != nil {
		t.Errorf("CheckLaunch in a build with MPI: %v", err)
	}
	if again, err := World(); again != c || err != nil {
		t.Errorf("second World: %v, %v; want the same Comm", again, err)
	}
	suite(t, c)
}

// TestWorldChunks runs the suite again with one MPI call moving at most
// 24 bytes: buffers go in many calls, gathers in many rounds, and the
// 48-byte header of each call in two.
func TestWorldChunks(t *testing.T) {
	c := openWorld(t)
	defer func(old int) { mpi.MaxChunkBytes = old }(mpi.MaxChunkBytes)
	mpi.MaxChunkBytes = 24
	suite(t, c)
}
