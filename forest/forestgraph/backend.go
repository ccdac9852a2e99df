package forestgraph

import (
	"fmt"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/backends/simplego"
)

// SimpleGoConfig is the configuration OpenSimpleGo opens GoMLX's pure-Go
// backend with: "ops_sequential", as package signal/sigraph does, which
// avoids a worker-pool deadlock of GoMLX v0.26's simplego.
const SimpleGoConfig = simplego.BackendName + ":ops_sequential"

// OpenSimpleGo opens GoMLX's pure-Go backend (simplego) with SimpleGoConfig.
func OpenSimpleGo() (b backends.Backend, err error) {
	defer func() {
		if r := recover(); r != nil {
			b, err = nil, fmt.Errorf("forestgraph: opening simplego: %v", r)
		}
	}()
	b, err = backends.NewWithConfig(SimpleGoConfig)
	if err != nil {
		return nil, fmt.Errorf("forestgraph: opening simplego: %w", err)
	}
	return b, nil
}
