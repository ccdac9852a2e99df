package dist_test

import (
	"fmt"
	"sync"

	"github.com/gotrain/gotrain/dist"
)

// Three ranks in one process sum their histograms, as the ranks of a
// distributed forest sum the counts of their rows; rank 0 prints.
func ExampleLocal() {
	var wg sync.WaitGroup
	for _, c := range dist.Local(3) {
		wg.Go(func() {
			defer c.Close()
			hist := []int64{int64(c.Rank()), 10, int64(100 * c.Rank())}
			if err := c.AllreduceInt64(hist); err != nil {
				fmt.Println(err)
				return
			}
			if c.Rank() == 0 {
				fmt.Println(hist, "bytes sent by rank 0:", c.BytesSent())
			}
		})
	}
	wg.Wait()
	// Output: [3 30 300] bytes sent by rank 0: 24
}

// Every rank sends a buffer of its own length; rank 0 gets them in rank
// order.
func ExampleComm_Gather() {
	var wg sync.WaitGroup
	for _, c := range dist.Local(3) {
		wg.Go(func() {
			defer c.Close()
			got, err := c.Gather([]byte(fmt.Sprint("rank", c.Rank(), "!")[:4+c.Rank()]), 0)
			if err != nil {
				fmt.Println(err)
				return
			}
			if c.Rank() == 0 {
				for r, b := range got {
					fmt.Printf("%d: %q\n", r, b)
				}
			}
		})
	}
	wg.Wait()
	// Output:
	// 0: "rank"
	// 1: "rank1"
	// 2: "rank2!"
}

// Ranks that disagree about a call all get an error instead of waiting for
// each other.
func ExampleComm_AllreduceFloat64() {
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for _, c := range dist.Local(2) {
		wg.Go(func() {
			defer c.Close()
			errs[c.Rank()] = c.AllreduceFloat64(make([]float64, 1+c.Rank()))
		})
	}
	wg.Wait()
	fmt.Println(errs[1])
	// Output: dist: AllreduceFloat64 on rank 1 of 2: buffer lengths differ across ranks (rank 0: length 1, rank 1: length 2)
}

// A single process is a Comm of one rank.
func ExampleSelf() {
	c := dist.Self()
	buf := []float64{1.5, 2}
	if err := c.AllreduceFloat64(buf); err != nil {
		fmt.Println(err)
	}
	fmt.Println(c.Rank(), c.Size(), buf)
	// Output: 0 1 [1.5 2]
}
