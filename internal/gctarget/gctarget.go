// Package gctarget sets the garbage collector's target for the gotrain
// command: most of its heap is long-lived (data sets, their binned codes,
// models), and Go's default target (GOGC=100: collect when the heap has
// doubled since the last collection) lets the garbage of loading and
// building those add up to as much again at the peak. A target of 25
// measured the same fit times with a peak resident set 26 % lower on
// MNIST's forest (896 to 666 MiB) and 12 % lower on the 100k x 20 one
// (457 to 403 MiB) (GOGC=25 against the default, /usr/bin/time -v; see
// docs/BENCHMARKS.md, issue #19).
package gctarget

import (
	"os"
	"runtime/debug"
)

// Percent is the target Apply sets: a collection when the heap has grown
// by this percentage of the live heap.
const Percent = 25

// Apply sets the collector's target to Percent unless the GOGC environment
// variable chose one, and returns the target in force.
func Apply() int {
	if v, ok := os.LookupEnv("GOGC"); ok && v != "" {
		old := debug.SetGCPercent(100)
		debug.SetGCPercent(old)
		return old
	}
	debug.SetGCPercent(Percent)
	return Percent
}
