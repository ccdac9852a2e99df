package parallel_test

import (
	"fmt"

	"github.com/gotrain/gotrain/internal/parallel"
)

// Split a sum over the cores: each task sums its own block into its own
// slot, so the result does not depend on which goroutine ran which task.
func ExampleFor() {
	x := make([]float64, 1000)
	for i := range x {
		x[i] = float64(i)
	}
	const blocks = 4
	var partial [blocks]float64
	parallel.For(blocks, parallel.Workers(), func(b int) {
		for _, v := range x[b*len(x)/blocks : (b+1)*len(x)/blocks] {
			partial[b] += v
		}
	})
	fmt.Println(partial[0] + partial[1] + partial[2] + partial[3])
	// Output: 499500
}
