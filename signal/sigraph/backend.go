package sigraph

import (
	"fmt"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/backends/simplego"
)

// SimpleGoConfig is the backend configuration OpenSimpleGo uses:
// "ops_sequential" avoids a worker-pool deadlock of GoMLX v0.26's simplego
// on graphs with several DotGenerals ready at once, which the feature
// graph has.
const SimpleGoConfig = simplego.BackendName + ":ops_sequential"

// OpenSimpleGo opens GoMLX's pure-Go backend with SimpleGoConfig.
func OpenSimpleGo() (b backends.Backend, err error) {
	defer func() {
		if r := recover(); r != nil {
			b, err = nil, fmt.Errorf("sigraph: opening simplego: %v", r)
		}
	}()
	b, err = backends.NewWithConfig(SimpleGoConfig)
	if err != nil {
		return nil, fmt.Errorf("sigraph: opening simplego: %w", err)
	}
	return b, nil
}
