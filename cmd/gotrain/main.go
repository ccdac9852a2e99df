// Command gotrain trains forests, neural networks and signal pipelines on
// whatever the machine has — an XLA device, GoMLX's pure-Go backend or native
// Go code — and says which one it used.
package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/gotrain/gotrain/device"
	"github.com/gotrain/gotrain/internal/gctarget"
)

func main() {
	// Never let GoMLX download plugins on its own; `gotrain setup xla` does it on request.
	if _, ok := os.LookupEnv(device.NoAutoInstallEnv); !ok {
		_ = os.Setenv(device.NoAutoInstallEnv, "1")
	}
	gctarget.Apply() // a lower GC target: gotrain's heap is mostly long-lived data
	if err := execute(newRootCmd()); err != nil {
		fmt.Fprintln(os.Stderr, "gotrain:", err)
		var ec interface{ ExitCode() int } // an error that carries the exit code
		if errors.As(err, &ec) {
			os.Exit(ec.ExitCode())
		}
		os.Exit(1)
	}
}
