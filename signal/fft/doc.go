// Package fft computes discrete Fourier transforms of power-of-two lengths
// with precomputed plans.
//
// A [Plan] holds the twiddle factors of one length and is immutable after
// [NewPlan], so one plan may be shared by any number of goroutines; each call
// brings its own scratch buffer, which keeps steady-state transforms free of
// allocation. [For] returns a process-wide cached plan.
//
// The transform is a radix-4 Stockham autosort FFT (with one radix-2 stage
// when the length is an odd power of two): no bit-reversal pass, and every
// stage after the first reads and writes contiguous runs of memory.
//
// Conventions follow numpy.fft: Forward computes
//
//	X[k] = Σ_n x[n]·exp(−2πi·k·n/N)
//
// without scaling, and Inverse computes (1/N)·Σ_k X[k]·exp(+2πi·k·n/N).
// [RealPlan] transforms real input of even length through a complex plan of
// half the length and returns the N/2+1 non-negative frequencies, as
// numpy.fft.rfft does.
package fft
