// gotrain: this file is a fork of github.com/gomlx/gomlx@v0.26.0
// internal/cmd/simplego_generator/main.go (Apache License 2.0, copyright the
// GoMLX authors; the license is cpubackend/LICENSE). Changes are marked
// "gotrain:"; scripts/forkdiff.sh shows them.

// simplego_generator auto-generates parts of the SimpleGo backend (gotrain: of
// package cpubackend, gotrain's fork of it):
//
// - exec_binary.go: binary ops execution, e.g.: Add, Mul, Div, Sub, Pow, etc.
package main

import (
	"flag"
	// gotrain: no k8s.io/klog/v2 (not a dependency of gotrain); its only
	// use was a verbose-level log line.
)

func main() {
	flag.Parse() // gotrain: without klog.InitFlags and klog's log line.
	GenerateExecBinary()
}
