package sigraph

import (
	"fmt"

	"github.com/gomlx/gomlx/backends"

	"github.com/gotrain/gotrain/device"
)

// OpenSimpleGo opens GoMLX's pure-Go backend as device "go" does
// (device.SimpleGoConfig: operations one at a time, which avoids a
// worker-pool deadlock of GoMLX v0.26's simplego).
func OpenSimpleGo() (backends.Backend, error) {
	b, err := device.Open(device.Device{Name: "go", Kind: device.SimpleGo, Class: "cpu"})
	if err != nil {
		return nil, fmt.Errorf("sigraph: %w", err)
	}
	return b, nil
}
