package data

import (
	"slices"
	"testing"
)

func TestTrainTestSplit(t *testing.T) {
	tests := []struct {
		n         int
		frac      float64
		wantTest  int
		wantTrain int
	}{
		{10, 0.25, 3, 7}, // ceil(2.5)
		{10, 0.3, 3, 7},
		{100, 0.2, 20, 80},
		{442, 0.25, 111, 331},
		{1797, 0.1, 180, 1617},
		{3, 0.01, 1, 2},
		{1, 0.5, 1, 0},
		{5, 0, 0, 5},
		{5, -1, 0, 5},
		{5, 1, 5, 0},
		{5, 2, 5, 0},
		{0, 0.5, 0, 0},
		{-3, 0.5, 0, 0},
	}
	for _, tc := range tests {
		train, test := TrainTestSplit(tc.n, tc.frac, 42)
		if len(train) != tc.wantTrain || len(test) != tc.wantTest {
			t.Errorf("TrainTestSplit(%d, %v): %d train, %d test; want %d, %d", tc.n, tc.frac, len(train), len(test), tc.wantTrain, tc.wantTest)
			continue
		}
		all := slices.Concat(train, test)
		slices.Sort(all)
		for i, v := range all {
			if v != i {
				t.Errorf("TrainTestSplit(%d, %v): train and test are not a partition of 0..n-1: %v %v", tc.n, tc.frac, train, test)
				break
			}
		}
		test = append(test, -1) // must not overwrite train
		if slices.Contains(train, -1) {
			t.Errorf("TrainTestSplit(%d, %v): test shares memory with train", tc.n, tc.frac)
		}
	}
}

func TestTrainTestSplitDeterministic(t *testing.T) {
	tr1, te1 := TrainTestSplit(1000, 0.2, 7)
	tr2, te2 := TrainTestSplit(1000, 0.2, 7)
	if !slices.Equal(tr1, tr2) || !slices.Equal(te1, te2) {
		t.Error("same seed gave different splits")
	}
	_, te3 := TrainTestSplit(1000, 0.2, 8)
	if slices.Equal(te1, te3) {
		t.Error("seeds 7 and 8 gave the same split")
	}
	if slices.IsSorted(te1) {
		t.Error("test indices are sorted; want a shuffled order")
	}
	// Pin the permutation so that a change of algorithm is noticed: the
	// split is documented to depend only on the seed.
	train, test := TrainTestSplit(10, 0.3, 1)
	wantTrain, wantTest := []int{8, 3, 4, 1, 6, 9, 2}, []int{0, 5, 7}
	if !slices.Equal(train, wantTrain) || !slices.Equal(test, wantTest) {
		t.Errorf("TrainTestSplit(10, 0.3, 1) = %v, %v; want %v, %v", train, test, wantTrain, wantTest)
	}
}

func TestPermutationUniform(t *testing.T) {
	// Each of the 6 permutations of 3 elements should appear about equally
	// often over many seeds.
	counts := map[[3]int]int{}
	const trials = 60000
	for s := range uint64(trials) {
		p := permutation(3, s)
		counts[[3]int(p)]++
	}
	if len(counts) != 6 {
		t.Fatalf("saw %d distinct permutations of 3, want 6", len(counts))
	}
	for p, c := range counts {
		if c < trials/6*9/10 || c > trials/6*11/10 {
			t.Errorf("permutation %v appeared %d times in %d, want about %d", p, c, trials, trials/6)
		}
	}
}

func TestKFold(t *testing.T) {
	tests := []struct {
		n, k      int
		shuffle   bool
		wantSizes []int
	}{
		{10, 3, false, []int{4, 3, 3}},
		{10, 3, true, []int{4, 3, 3}},
		{11, 4, true, []int{3, 3, 3, 2}},
		{12, 4, false, []int{3, 3, 3, 3}},
		{5, 5, true, []int{1, 1, 1, 1, 1}},
		{442, 10, true, []int{45, 45, 44, 44, 44, 44, 44, 44, 44, 44}},
	}
	for _, tc := range tests {
		folds := KFold(tc.n, tc.k, tc.shuffle, 3)
		if len(folds) != tc.k {
			t.Fatalf("KFold(%d, %d): %d folds", tc.n, tc.k, len(folds))
		}
		seen := make([]int, tc.n)
		for f, fold := range folds {
			train, test := fold[0], fold[1]
			if len(test) != tc.wantSizes[f] || len(train) != tc.n-len(test) {
				t.Errorf("KFold(%d, %d) fold %d: %d train, %d test; want test size %d", tc.n, tc.k, f, len(train), len(test), tc.wantSizes[f])
			}
			if !slices.IsSorted(train) || !slices.IsSorted(test) {
				t.Errorf("KFold(%d, %d) fold %d: indices not sorted", tc.n, tc.k, f)
			}
			all := slices.Concat(train, test)
			slices.Sort(all)
			for i, v := range all {
				if v != i {
					t.Fatalf("KFold(%d, %d) fold %d: train and test do not partition 0..n-1", tc.n, tc.k, f)
				}
			}
			for _, i := range test {
				seen[i]++
			}
		}
		for i, c := range seen {
			if c != 1 {
				t.Errorf("KFold(%d, %d, %v): index %d in %d test folds, want 1", tc.n, tc.k, tc.shuffle, i, c)
			}
		}
		if !tc.shuffle {
			if want := []int{0, 1, 2}; tc.n == 10 && !slices.Equal(folds[0][1][:3], want) {
				t.Errorf("unshuffled first fold starts %v, want %v", folds[0][1][:3], want)
			}
		}
	}

	a, b := KFold(50, 5, true, 9), KFold(50, 5, true, 9)
	for f := range a {
		if !slices.Equal(a[f][1], b[f][1]) {
			t.Error("KFold with the same seed differs")
		}
	}
	for _, bad := range [][2]int{{10, 1}, {10, 0}, {3, 4}, {0, 2}} {
		if got := KFold(bad[0], bad[1], false, 0); got != nil {
			t.Errorf("KFold(%d, %d) = %v, want nil", bad[0], bad[1], got)
		}
	}
}
