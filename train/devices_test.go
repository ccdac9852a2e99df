package train

import (
	"errors"
	"strings"
	"testing"

	"github.com/gomlx/gomlx/pkg/core/distributed"
	"github.com/gomlx/gomlx/pkg/core/shapes"
	"github.com/gomlx/gomlx/pkg/core/tensors"
	"github.com/gomlx/gomlx/pkg/ml/train/losses"
)

func TestParseDevices(t *testing.T) {
	tests := []struct {
		in        string
		available int
		want      int
		wantErr   string
	}{
		{"1", 1, 1, ""},
		{"all", 1, 1, ""},
		{" ALL ", 8, 8, ""},
		{"4", 8, 4, ""},
		{"2", 1, 0, "only 1 device"},
		{"0", 8, 0, "positive"},
		{"x", 8, 0, "positive"},
		{"all", 0, 0, "0 devices"},
	}
	for _, tc := range tests {
		got, err := ParseDevices(tc.in, tc.available)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("ParseDevices(%q, %d) = %d, %v; want an error with %q", tc.in, tc.available, got, err, tc.wantErr)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("ParseDevices(%q, %d) = %d, %v; want %d", tc.in, tc.available, got, err, tc.want)
		}
	}
}

// simplego has one device: --devices all trains on it, more is an error.
func TestDevicesOnSimpleGo(t *testing.T) {
	h := newHarness(t, testConfig(func(c *Config) { c.Devices, c.Progress = "all", ProgressOff }), synthData(t, 64, false))
	if h.Devices() != 1 {
		t.Fatalf("%d devices", h.Devices())
	}
	if _, err := h.Run(); err != nil {
		t.Fatal(err)
	}
	_, err := New(testBackend(t), testConfig(func(c *Config) { c.Devices = "2" }), mlp, losses.MeanSquaredError, synthData(t, 64, false))
	if err == nil || !strings.Contains(err.Error(), "only 1 device") {
		t.Errorf("--devices 2 on simplego: %v", err)
	}
}

// The host side of data parallelism: the batch is split along its first
// axis into one shard per device of the mesh.
func TestShardBatch(t *testing.T) {
	dp, err := newDataParallel(2)
	if err != nil {
		t.Fatal(err)
	}
	x := tensors.FromFlatDataAndDimensions([]float32{0, 1, 2, 3, 4, 5, 6, 7}, 4, 2)
	dt, err := dp.shard(x)
	if err != nil {
		t.Fatal(err)
	}
	if !dt.Shape().Equal(x.Shape()) || dt.NumShards() != 2 {
		t.Fatalf("logical shape %s, %d shards", dt.Shape(), dt.NumShards())
	}
	for i, want := range [][]float32{{0, 1, 2, 3}, {4, 5, 6, 7}} {
		got := tensors.MustCopyFlatData[float32](dt.Shards()[i])
		for j := range want {
			if got[j] != want[j] {
				t.Fatalf("shard %d = %v, want %v", i, got, want)
			}
		}
	}
	if _, err := dp.shard(tensors.FromFlatDataAndDimensions([]float32{0, 1, 2}, 3, 1)); err == nil {
		t.Error("an odd batch was split over 2 devices")
	}
}

// The sharding hook is called for every variable and its specs are set.
func TestApplySharder(t *testing.T) {
	h := newHarness(t, testConfig(nil), synthData(t, 64, false))
	if _, err := h.TrainStep(); err != nil { // creates the variables
		t.Fatal(err)
	}
	dp, err := newDataParallel(2)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	sh := SharderFunc(func(mesh *distributed.DeviceMesh, scope, name string, s shapes.Shape) (*distributed.ShardingSpec, error) {
		seen[scope+"/"+name] = true
		if scope == "/l1" && name == "w" {
			return distributed.BuildSpec(mesh).S(DataAxis).R().Done()
		}
		return nil, nil
	})
	if err := applySharder(h.Context(), dp.mesh, sh); err != nil {
		t.Fatal(err)
	}
	for _, name := range trainables {
		if !seen[name] {
			t.Errorf("the hook was not called for %s", name)
		}
	}
	for v := range h.Context().IterVariables() {
		if got := v.ShardingSpec() != nil; got != (v.ScopeAndName() == "/l1/w") {
			t.Errorf("%s: sharded %v", v.ScopeAndName(), got)
		}
	}
	boom := errors.New("boom")
	err = applySharder(h.Context(), dp.mesh, SharderFunc(func(*distributed.DeviceMesh, string, string, shapes.Shape) (*distributed.ShardingSpec, error) {
		return nil, boom
	}))
	if !errors.Is(err, boom) {
		t.Errorf("hook error %v not returned", err)
	}
}
