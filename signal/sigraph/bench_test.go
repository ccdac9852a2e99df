package sigraph

import (
	"fmt"
	"testing"

	"github.com/gomlx/gomlx/pkg/core/dtypes"
	"github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/tensors"

	"github.com/gotrain/gotrain/signal"
)

// BenchmarkExtract1s times the features of one 1-s 200 kHz QPSK record
// (the record) on the CPU path and on simplego with each FFT
// design: go test -bench Extract1s -benchtime 5x ./signal/sigraph/
func BenchmarkExtract1s(b *testing.B) {
	x, err := signal.Synthesize(signal.SynthOptions{Mod: signal.QPSK, SampleRate: testRate, Samples: testRate, SNRdB: 10, CarrierOffset: 25000, Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	cfg := signal.Config{SampleRate: testRate}
	b.Run("cpu", func(b *testing.B) {
		e, err := signal.NewExtractor(cfg)
		if err != nil {
			b.Fatal(err)
		}
		var f signal.Features
		for b.Loop() {
			if err := e.Extract(x, &f); err != nil {
				b.Fatal(err)
			}
		}
	})
	for _, o := range []struct {
		name string
		opts Options
	}{
		{"simplego_fourstep64", Options{}},
		{"simplego_fourstep64_separate_twiddles", Options{SeparateTwiddles: true}},
		{"simplego_fourstep64_mfcc64", Options{MFCCFloat64: true}},
		{"simplego_fourstep64_spec32", Options{SpectrogramFloat32: true}},
		{"simplego_fourstep16", Options{DirectMax: 16}},
		{"simplego_fourstep32", Options{DirectMax: 32}},
		{"simplego_direct", Options{DirectMax: 1 << 12}},
	} {
		b.Run(o.name, func(b *testing.B) {
			e, err := NewWithOptions(graphBackend(b), cfg, 1, o.opts)
			if err != nil {
				b.Fatal(err)
			}
			defer e.Close()
			var f signal.Features
			if err := e.Extract(x, &f); err != nil { // compile
				b.Fatal(err)
			}
			for b.Loop() {
				if err := e.Extract(x, &f); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkGraphFFT times the graph FFT alone at the features' sizes and
// batch counts (1-s record): Welch blocks, spectrogram and MFCC frames.
func BenchmarkGraphFFT(b *testing.B) {
	for _, s := range []struct {
		n, nIn, nOut, batch int
		real                bool
	}{
		{256, 256, 256, 892, false}, {1024, 512, 1024, 391, false}, {2048, 2048, 1025, 387, true},
	} {
		for _, v := range []struct {
			dm     int
			folded bool
		}{{16, false}, {32, false}, {64, false}, {64, true}, {1 << 12, false}} {
			dm := v.dm
			b.Run(fmt.Sprintf("n%d_direct%d_folded%v", s.n, dm, v.folded), func(b *testing.B) {
				plan := fftPlan{directMax: dm, folded: v.folded}
				exec, err := graph.NewExec(graphBackend(b), func(re, im *graph.Node) (*graph.Node, *graph.Node) {
					x := cnode{re, im}
					if s.real {
						x.im = nil
					}
					y := plan.fft(x, s.nIn, s.n, s.nOut, false)
					return y.re, y.im
				})
				if err != nil {
					b.Fatal(err)
				}
				defer exec.Finalize()
				v := make([]float64, s.batch*s.nIn)
				for i := range v {
					v[i] = float64(i%7) - 3
				}
				re := tensors.FromFlatDataAndDimensions(v, s.batch, s.nIn)
				im := tensors.FromFlatDataAndDimensions(v, s.batch, s.nIn)
				_ = dtypes.Float64
				for b.Loop() {
					outs, err := exec.Exec(re, im)
					if err != nil {
						b.Fatal(err)
					}
					for _, o := range outs {
						o.MustFinalizeAll()
					}
				}
			})
		}
	}
}

// BenchmarkStages times each stage's graph alone on simplego for the 1-s
// record: go test -bench Stages -benchtime 5x ./signal/sigraph/
func BenchmarkStages(b *testing.B) {
	x, err := signal.Synthesize(signal.SynthOptions{Mod: signal.QPSK, SampleRate: testRate, Samples: testRate, SNRdB: 10, CarrierOffset: 25000, Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	for _, sep := range []bool{false, true} {
		b.Run(fmt.Sprintf("separate_twiddles%v", sep), func(b *testing.B) { benchStages(b, x, Options{SeparateTwiddles: sep}) })
	}
}

func benchStages(b *testing.B, x []complex64, opts Options) {
	e, err := NewWithOptions(graphBackend(b), signal.Config{SampleRate: testRate}, 1, opts)
	if err != nil {
		b.Fatal(err)
	}
	if err := e.Compile(1, len(x)); err != nil {
		b.Fatal(err)
	}
	bl := e.b
	re, im := make([]float32, len(x)), make([]float32, len(x))
	for i, v := range x {
		re[i], im[i] = real(v), imag(v)
	}
	tre, tim := tensors.FromFlatDataAndDimensions(re, 1, len(x)), tensors.FromFlatDataAndDimensions(im, 1, len(x))
	stages := []struct {
		name string
		fn   func(re, im *graph.Node) []*graph.Node
	}{
		{"time_stats", func(re, im *graph.Node) []*graph.Node {
			c, env := bl.timeStats(cnode{graph.ConvertDType(re, dtypes.Float64), graph.ConvertDType(im, dtypes.Float64)})
			return append(c, env)
		}},
		{"welch_autocorr_shape", func(re, im *graph.Node) []*graph.Node {
			p, r, i := bl.welch(cnode{graph.ConvertDType(re, dtypes.Float64), graph.ConvertDType(im, dtypes.Float64)})
			return append(bl.spectralShape(p), r, i)
		}},
		{"spectrogram", func(re, im *graph.Node) []*graph.Node { return []*graph.Node{bl.spectrogram(re, im)} }},
		{"mfcc", func(re, im *graph.Node) []*graph.Node {
			env := graph.Sqrt(graph.Add(graph.Mul(re, re), graph.Mul(im, im)))
			f, m := bl.mfcc(graph.ConvertDType(env, dtypes.Float64))
			return []*graph.Node{f, m}
		}},
	}
	for _, s := range stages {
		b.Run(s.name, func(b *testing.B) {
			exec, err := graph.NewExec(graphBackend(b), s.fn)
			if err != nil {
				b.Fatal(err)
			}
			defer exec.Finalize()
			run := func() {
				outs, err := exec.Exec(tre, tim)
				if err != nil {
					b.Fatal(err)
				}
				for _, o := range outs {
					o.MustFinalizeAll()
				}
			}
			run()
			for b.Loop() {
				run()
			}
		})
	}
}
