package forest

import (
	"bytes"
	"fmt"
	"math"
	"strings"
	"sync"
	"testing"

	"github.com/gotrain/gotrain/data"
	"github.com/gotrain/gotrain/dist"
)

// onRanks runs fn on each of n in-process ranks at once and returns their
// results in rank order.
func onRanks[T any](n int, fn func(c Comm) (T, error)) ([]T, []error) {
	comms := dist.Local(n)
	out, errs := make([]T, n), make([]error, n)
	var wg sync.WaitGroup
	for r := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out[r], errs[r] = fn(comms[r])
		}()
	}
	wg.Wait()
	return out, errs
}

func saved(t *testing.T, f *Forest) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := f.Save(&b); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestFitTreesMatchesFit: tree-parallel training on 1, 2 and 3 ranks (and
// more ranks than trees) gives every rank the model file Fit writes, byte
// for byte, for the cases of TestModelHashes (OOB scores, leaf samples,
// categorical features, the random splitter, no bootstrap).
func TestFitTreesMatchesFit(t *testing.T) {
	cases := hashCases()
	if testing.Short() {
		cases = cases[:4]
	}
	for _, c := range cases {
		if strings.HasPrefix(c.name, "mnist") {
			continue
		}
		t.Run(c.name, func(t *testing.T) {
			d := c.data(t)
			opt := c.opt
			opt.Threads = 1
			ref, err := Fit(d, opt)
			if err != nil {
				t.Fatal(err)
			}
			want := saved(t, ref)
			for _, ranks := range []int{1, 2, 3, opt.Trees + 1} {
				fs, errs := onRanks(ranks, func(c Comm) (*Forest, error) {
					f, _, err := FitTrees(d, opt, c)
					return f, err
				})
				for r := range ranks {
					if errs[r] != nil {
						t.Fatalf("%d ranks: rank %d: %v", ranks, r, errs[r])
					}
					if got := saved(t, fs[r]); !bytes.Equal(got, want) {
						t.Fatalf("%d ranks: rank %d's model differs from Fit's (%d vs %d bytes)", ranks, r, len(got), len(want))
					}
				}
				if !math.IsNaN(ref.OOBScore) && fs[ranks-1].OOBScore != ref.OOBScore {
					t.Fatalf("%d ranks: OOB score %v, want %v", ranks, fs[ranks-1].OOBScore, ref.OOBScore)
				}
			}
		})
	}
}

// TestFitTreesErrors: a rank whose data fails reports it on every rank,
// naming the rank, instead of leaving the others waiting.
func TestFitTreesErrors(t *testing.T) {
	good := data.MakeRegression(200, 4, 1)
	bad := good.Clone()
	bad.Y[7] = math.Inf(1)
	opt := Options{Task: Regression, Trees: 4, Seed: 1}
	for _, badRank := range []int{0, 2} {
		_, errs := onRanks(3, func(c Comm) (*Forest, error) {
			d := good
			if c.Rank() == badRank {
				d = bad
			}
			f, _, err := FitTrees(d, opt, c)
			return f, err
		})
		for r, err := range errs {
			if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("rank %d", badRank)) || !strings.Contains(err.Error(), "row 7") {
				t.Fatalf("bad rank %d: rank %d: error %v, want one naming rank %d and row 7", badRank, r, err, badRank)
			}
		}
	}
	if _, _, err := FitTrees(good, opt, nil); err == nil {
		t.Fatal("nil communicator: no error")
	}
}

// TestTreeParallelStats: the learner reports the mode, the ranks, each
// rank's trees and the bytes it sent.
func TestTreeParallelStats(t *testing.T) {
	d := data.MakeRegression(300, 5, 2)
	opt := Options{Task: Regression, Trees: 5, Seed: 3}
	sts, errs := onRanks(2, func(c Comm) (FitStats, error) {
		_, st, err := TreeParallel(c).Fit(d, opt)
		return st, err
	})
	for r, st := range sts {
		if errs[r] != nil {
			t.Fatal(errs[r])
		}
		ds := st.Dist
		if ds == nil || ds.Mode != "trees" || ds.Ranks != 2 || ds.Rank != r || ds.Trees != 3-r || ds.BytesSent <= 0 {
			t.Fatalf("rank %d: stats %+v", r, ds)
		}
	}
}
