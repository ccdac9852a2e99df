package train

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/gomlx/gomlx/pkg/ml/train/losses"
)

func TestFindBatchSizeByThroughput(t *testing.T) {
	errBroken := errors.New("broken")
	tests := []struct {
		name        string
		start, lim  int
		sps         map[int]float64 // missing: out of memory
		fail        map[int]error
		want        int
		wantReason  string
		wantErr     error
		wantNTrials int
	}{
		{"plateau", 8, 1024, map[int]float64{8: 100, 16: 180, 32: 300, 64: 310, 128: 320}, nil, 32, "not more than 5%", nil, 4},
		{"slower", 8, 1024, map[int]float64{8: 100, 16: 90}, nil, 8, "-10.0%", nil, 2},
		{"out-of-memory", 8, 1024, map[int]float64{8: 100, 16: 200, 32: 400}, nil, 32, "does not fit", nil, 4},
		{"limit", 8, 48, map[int]float64{8: 100, 16: 200, 32: 400, 48: 600}, nil, 48, "reached the limit 48", nil, 4},
		{"start-too-big", 8, 64, map[int]float64{}, nil, 0, "", ErrOutOfMemory, 1},
		{"other-error", 8, 64, map[int]float64{8: 100}, map[int]error{16: errBroken}, 0, "", errBroken, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			measure := func(n int) (float64, error) {
				if err := tc.fail[n]; err != nil {
					return 0, err
				}
				v, ok := tc.sps[n]
				if !ok {
					return 0, fmt.Errorf("%w: fake", ErrOutOfMemory)
				}
				return v, nil
			}
			ch, err := FindBatchSizeByThroughput(tc.start, tc.lim, DefaultMinThroughputGain, measure)
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("error %v, want %v", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if ch.Size != tc.want || !strings.Contains(ch.Reason, tc.wantReason) || len(ch.Trials) != tc.wantNTrials {
				t.Errorf("got size %d, reason %q, %d trials; want %d, %q, %d", ch.Size, ch.Reason, len(ch.Trials), tc.want, tc.wantReason, tc.wantNTrials)
			}
		})
	}
	if _, err := FindBatchSizeByThroughput(0, 8, 0.05, nil); err == nil {
		t.Error("start 0 accepted")
	}
}

func TestStepThroughput(t *testing.T) {
	data := synthData(t, 64, false)
	tests := []struct {
		name    string
		budget  uint64
		wantOOM bool
	}{
		{"no-budget", 0, false},
		{"ample", 1 << 50, false},
		{"tiny", 1, true}, // the process already holds more than a byte
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := StepThroughput(testBackend(t), testConfig(nil), mlp, losses.MeanSquaredError, data, 2, tc.budget)
			sps, err := m(16)
			if tc.wantOOM {
				if !errors.Is(err, ErrOutOfMemory) || !strings.Contains(err.Error(), "budget") {
					t.Fatalf("error %v, want ErrOutOfMemory naming the budget", err)
				}
				return
			}
			if err != nil || !(sps > 0) {
				t.Fatalf("throughput %g, %v", sps, err)
			}
		})
	}
	if data.Position() != (DataPosition{}) {
		t.Errorf("the measure moved the data position to %+v", data.Position())
	}
	// The real measure with FindBatchSizeByThroughput: it picks a size in range with a reason.
	ch, err := FindBatchSizeByThroughput(4, 32, DefaultMinThroughputGain,
		StepThroughput(testBackend(t), testConfig(nil), mlp, losses.MeanSquaredError, data, 1, 0))
	if err != nil || ch.Size < 4 || ch.Size > 32 || ch.Reason == "" {
		t.Errorf("choice %+v, %v", ch, err)
	}
}
