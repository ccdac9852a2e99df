//go:build race

package gemm

const raceEnabled = true
