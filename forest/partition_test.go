package forest

import (
	"math/rand/v2"
	"testing"
)

// TestPartitionEnts checks the AVX-512 partition of sorted lists against a
// plain stable partition, for every length up to 80 and random marks,
// and that it writes nothing outside its list.
func TestPartitionEnts(t *testing.T) {
	needAVX512(t)
	rnd := rand.New(rand.NewPCG(1, 2))
	for n := 1; n <= 80; n++ {
		for trial := range 20 {
			rowsN := n + rnd.IntN(40)
			mark := make([]uint8, rowsN+3)
			for i := range rowsN {
				if rnd.IntN(4) != 0 || trial == 0 {
					mark[i] = uint8(rnd.IntN(2))
				}
				if trial == 1 {
					mark[i] = 1
				}
				if trial == 2 {
					mark[i] = 0
				}
			}
			// Pad bytes that would read as "left" if the kernel looked at them.
			mark[rowsN], mark[rowsN+1], mark[rowsN+2] = 0xFF, 0xFF, 0xFF
			src := make([]uint32, n)
			nl := 0
			for i := range src {
				r := rnd.IntN(rowsN)
				src[i] = uint32(r) | uint32(rnd.IntN(256))<<entRowBits
				nl += int(mark[r])
			}
			want := make([]uint32, 0, n)
			for _, v := range src {
				if mark[v&entRowMask] == 1 {
					want = append(want, v)
				}
			}
			for _, v := range src {
				if mark[v&entRowMask] == 0 {
					want = append(want, v)
				}
			}
			// dst inside a larger buffer, guarded on both sides.
			const guard = 17
			buf := make([]uint32, n+2*guard)
			for i := range buf {
				buf[i] = 0xDEADBEEF
			}
			partitionEnts(&buf[guard], &src[0], n, &mark[0], nl)
			for i := range guard {
				if buf[i] != 0xDEADBEEF || buf[guard+n+i] != 0xDEADBEEF {
					t.Fatalf("n=%d: wrote outside the list", n)
				}
			}
			for i, v := range want {
				if got := buf[guard+i]; got != v {
					t.Fatalf("n=%d trial %d: dst[%d] = %#x, want %#x", n, trial, i, got, v)
				}
			}
		}
	}
}

// needAVX512 skips a test of an AVX-512 kernel where it does not run.
func needAVX512(t *testing.T) {
	t.Helper()
	if !useAVX512 {
		t.Skip("no AVX-512 kernel on this CPU or build")
	}
}
