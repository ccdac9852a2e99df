package cpubackend

import (
	"fmt"
	"os"
	"testing"

	"github.com/gomlx/gomlx/backends"
	// gotrain: no github.com/gomlx/gomlx/internal/must (internal to GoMLX)
	// and no k8s.io/klog/v2 (not a dependency of gotrain): klog's flags only
	// set the verbosity of GoMLX's logs.
)

var backend backends.Backend

// gotrain: no init() calling klog.InitFlags (see the imports).

func setup() {
	fmt.Printf("Available backends: %q\n", backends.List())
	// Perform your setup logic here
	if os.Getenv(backends.ConfigEnvVar) == "" {
		// gotrain: the fork's backend, "cpu" (simplego's is "go").
		if err := os.Setenv(backends.ConfigEnvVar, BackendName); err != nil {
			panic(err)
		}
	} else {
		fmt.Printf("\t$%s=%q\n", backends.ConfigEnvVar, os.Getenv(backends.ConfigEnvVar))
	}
	backend = backends.MustNew()
	fmt.Printf("Backend: %s, %s\n", backend.Name(), backend.Description())
}

func teardown() {
	backend.Finalize()
}

func TestMain(m *testing.M) {
	setup()
	code := m.Run() // Run all tests in the file
	teardown()
	os.Exit(code)
}
