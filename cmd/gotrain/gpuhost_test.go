package main

import (
	"sync"
	"testing"

	"github.com/gotrain/gotrain/device"
)

var (
	gpuOnce sync.Once
	gpuName string
)

// gpuHere returns the name of the first usable GPU of this machine (a CUDA
// PJRT plugin that loads and sees a device), or "". Tests that assert
// "no GPU here" take their other branch on a GPU host, with assertions of
// its own, instead of failing there.
func gpuHere(t *testing.T) string {
	t.Helper()
	gpuOnce.Do(func() {
		for _, e := range device.List(device.Discover(device.DiscoverOptions{Probe: true})) {
			if e.Class == "gpu" && e.Available {
				gpuName = e.Name
				return
			}
		}
	})
	return gpuName
}
