package fft

import (
	"math"
	"math/cmplx"
	"math/rand/v2"
	"testing"
)

// naiveDFT computes the DFT by definition in float64 (sign −1 forward).
func naiveDFT(x []complex128, sign float64) []complex128 {
	n := len(x)
	out := make([]complex128, n)
	for k := range out {
		var s complex128
		for j, v := range x {
			// Reduce k·j mod n first so the angle stays small and exact.
			s += v * cis(sign*2*math.Pi*float64((k*j)%n)/float64(n))
		}
		out[k] = s
	}
	return out
}

func randomComplex(n int, seed uint64) []complex128 {
	r := rand.New(rand.NewPCG(seed, 7))
	x := make([]complex128, n)
	for i := range x {
		x[i] = complex(r.NormFloat64(), r.NormFloat64())
	}
	return x
}

// maxErr returns max |a−b| / max |b|.
func maxErr(a, b []complex128) float64 {
	var e, m float64
	for i := range a {
		e = math.Max(e, cmplx.Abs(a[i]-b[i]))
		m = math.Max(m, cmplx.Abs(b[i]))
	}
	if m == 0 {
		return e
	}
	return e / m
}

func TestForwardInverseAgainstNaiveDFT(t *testing.T) {
	for _, n := range []int{1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048} {
		p, err := NewPlan(n)
		if err != nil {
			t.Fatal(err)
		}
		x := randomComplex(n, uint64(n))
		want := naiveDFT(x, -1)
		scratch := make([]complex128, n)

		got := make([]complex128, n)
		if err := p.Forward(got, x, scratch); err != nil {
			t.Fatal(err)
		}
		if e := maxErr(got, want); e > 1e-13 {
			t.Errorf("n=%d forward out of place: rel err %.3g", n, e)
		}
		in := append([]complex128(nil), x...)
		if err := p.Forward(in, in, scratch); err != nil {
			t.Fatal(err)
		}
		if e := maxErr(in, want); e > 1e-13 {
			t.Errorf("n=%d forward in place: rel err %.3g", n, e)
		}
		back := make([]complex128, n)
		if err := p.Inverse(back, got, scratch); err != nil {
			t.Fatal(err)
		}
		if e := maxErr(back, x); e > 1e-13 {
			t.Errorf("n=%d inverse(forward): rel err %.3g", n, e)
		}
		inv := naiveDFT(x, +1)
		for i := range inv {
			inv[i] /= complex(float64(n), 0)
		}
		if err := p.Inverse(back, x, scratch); err != nil {
			t.Fatal(err)
		}
		if e := maxErr(back, inv); e > 1e-13 {
			t.Errorf("n=%d inverse: rel err %.3g", n, e)
		}
	}
}

func TestForwardLeavesSourceUnchanged(t *testing.T) {
	for _, n := range []int{16, 32, 64} {
		p, _ := NewPlan(n)
		x := randomComplex(n, 3)
		keep := append([]complex128(nil), x...)
		dst, scratch := make([]complex128, n), make([]complex128, n)
		if err := p.Forward(dst, x, scratch); err != nil {
			t.Fatal(err)
		}
		for i := range x {
			if x[i] != keep[i] {
				t.Fatalf("n=%d: src[%d] changed", n, i)
			}
		}
	}
}

func TestRealForwardAgainstNaiveDFT(t *testing.T) {
	for _, n := range []int{2, 4, 8, 16, 64, 256, 2048} {
		p, err := NewRealPlan(n)
		if err != nil {
			t.Fatal(err)
		}
		r := rand.New(rand.NewPCG(uint64(n), 1))
		x := make([]float64, n)
		xc := make([]complex128, n)
		for i := range x {
			x[i] = r.NormFloat64()
			xc[i] = complex(x[i], 0)
		}
		want := naiveDFT(xc, -1)[:n/2+1]
		got := make([]complex128, n/2+1)
		if err := p.Forward(got, x, make([]complex128, n/2), make([]complex128, n/2)); err != nil {
			t.Fatal(err)
		}
		if e := maxErr(got, want); e > 1e-13 {
			t.Errorf("n=%d real forward: rel err %.3g", n, e)
		}
	}
}

func TestBadLengths(t *testing.T) {
	for _, n := range []int{0, -4, 3, 12, 1000, MaxLen * 2} {
		if _, err := NewPlan(n); err == nil {
			t.Errorf("NewPlan(%d) succeeded", n)
		}
	}
	for _, n := range []int{0, 1, 6} {
		if _, err := NewRealPlan(n); err == nil {
			t.Errorf("NewRealPlan(%d) succeeded", n)
		}
	}
	p, _ := For(8)
	a, b := make([]complex128, 8), make([]complex128, 8)
	cases := []struct {
		name          string
		dst, src, scr []complex128
	}{
		{"short dst", a[:4], b, make([]complex128, 8)},
		{"short scratch", a, b, make([]complex128, 7)},
		{"scratch is dst", a, b, a},
		{"scratch is src", a, b, b},
	}
	for _, c := range cases {
		if err := p.Forward(c.dst, c.src, c.scr); err == nil {
			t.Errorf("%s: Forward succeeded", c.name)
		}
		if err := p.Inverse(c.dst, c.src, c.scr); err == nil {
			t.Errorf("%s: Inverse succeeded", c.name)
		}
	}
	rp, _ := ForReal(8)
	if err := rp.Forward(make([]complex128, 4), make([]float64, 8), make([]complex128, 4), make([]complex128, 4)); err == nil {
		t.Error("real Forward with short dst succeeded")
	}
}

func TestForIsCached(t *testing.T) {
	a, _ := For(64)
	b, _ := For(64)
	if a != b {
		t.Error("For(64) returned two plans")
	}
}

func TestForwardAllocatesNothing(t *testing.T) {
	p, _ := For(1024)
	x, dst, scratch := randomComplex(1024, 1), make([]complex128, 1024), make([]complex128, 1024)
	if n := testing.AllocsPerRun(10, func() { _ = p.Forward(dst, x, scratch) }); n != 0 {
		t.Errorf("Forward allocates %v times", n)
	}
}

func TestBatchAgainstNaiveDFT(t *testing.T) {
	for _, vec := range kernels() {
		useAVX2 = vec
		for _, n := range []int{1, 2, 4, 8, 32, 256, 512} {
			for _, batch := range []int{1, 2, 3, 4, 8} {
				p, _ := For(n)
				seqs := make([][]complex128, batch)
				in := make([]complex128, n*batch)
				for b := range seqs {
					seqs[b] = randomComplex(n, uint64(n*10+b))
					for k, v := range seqs[b] {
						in[k*batch+b] = v
					}
				}
				out, scratch := make([]complex128, n*batch), make([]complex128, n*batch)
				if err := p.ForwardBatch(out, in, scratch, batch); err != nil {
					t.Fatal(err)
				}
				back := make([]complex128, n*batch)
				if err := p.InverseBatch(back, out, scratch, batch); err != nil {
					t.Fatal(err)
				}
				if e := maxErr(back, in); e > 1e-13 {
					t.Errorf("vector=%v n=%d batch=%d: inverse(forward) rel err %.3g", vec, n, batch, e)
				}
				for b := range seqs {
					want := naiveDFT(seqs[b], -1)
					got := make([]complex128, n)
					for k := range got {
						got[k] = out[k*batch+b]
					}
					if e := maxErr(got, want); e > 1e-13 {
						t.Errorf("vector=%v n=%d batch=%d seq %d: rel err %.3g", vec, n, batch, b, e)
					}
				}
			}
		}
	}
	useAVX2 = kernels()[len(kernels())-1]
}

// kernels lists the values of useAVX2 to test: false, then true where the
// machine has the vector kernels.
func kernels() []bool {
	if hasAVX2 {
		return []bool{false, true}
	}
	return []bool{false}
}

var hasAVX2 = useAVX2

func TestScalarKernelsAgainstNaiveDFT(t *testing.T) {
	defer func(v bool) { useAVX2 = v }(useAVX2)
	useAVX2 = false
	for _, n := range []int{2, 4, 8, 16, 64, 128, 1024} {
		p, _ := For(n)
		x := randomComplex(n, 5)
		got := make([]complex128, n)
		if err := p.Forward(got, x, make([]complex128, n)); err != nil {
			t.Fatal(err)
		}
		if e := maxErr(got, naiveDFT(x, -1)); e > 1e-13 {
			t.Errorf("scalar n=%d: rel err %.3g", n, e)
		}
	}
}

func TestPowerPackedAgainstNaiveDFT(t *testing.T) {
	for _, n := range []int{2, 8, 64, 2048} {
		for _, batch := range []int{1, 3, 4} {
			p, _ := ForReal(n)
			h := n / 2
			z := make([]complex128, h*batch)
			xs := make([][]complex128, batch)
			r := rand.New(rand.NewPCG(uint64(n), uint64(batch)))
			for b := range xs {
				xs[b] = make([]complex128, n)
				for i := range xs[b] {
					xs[b][i] = complex(r.NormFloat64(), 0)
				}
				for i := range h {
					z[i*batch+b] = complex(real(xs[b][2*i]), real(xs[b][2*i+1]))
				}
			}
			dst := make([]float64, (h+1)*batch)
			if err := p.PowerPacked(dst, z, make([]complex128, h*batch), batch); err != nil {
				t.Fatal(err)
			}
			for b := range xs {
				want := naiveDFT(xs[b], -1)
				for k := 0; k <= h; k++ {
					w := real(want[k])*real(want[k]) + imag(want[k])*imag(want[k])
					if math.Abs(dst[b*(h+1)+k]-w) > 1e-11*float64(n)*float64(n) {
						t.Fatalf("n=%d batch=%d seq %d bin %d: %g, want %g", n, batch, b, k, dst[b*(h+1)+k], w)
					}
				}
			}
		}
	}
	p, _ := ForReal(8)
	if err := p.PowerPacked(make([]float64, 4), make([]complex128, 4), make([]complex128, 4), 1); err == nil {
		t.Error("PowerPacked with short dst succeeded")
	}
}

// TestPowerPackedInterleaved checks the interleaved power spectra against
// PowerPacked's rows on both kernel paths (the same operations, so equal
// on one path) and the vector path against the scalar one.
func TestPowerPackedInterleaved(t *testing.T) {
	defer func(v bool) { useAVX2 = v }(useAVX2)
	for _, n := range []int{2, 4, 8, 64, 2048} {
		for _, batch := range []int{1, 3, 4, 8} {
			p, _ := ForReal(n)
			h := n / 2
			r := rand.New(rand.NewPCG(uint64(n), uint64(batch)))
			z0 := make([]complex128, h*batch)
			for i := range z0 {
				z0[i] = complex(r.NormFloat64(), r.NormFloat64())
			}
			var got [][]float64
			for _, vec := range kernels() {
				useAVX2 = vec
				rows := make([]float64, (h+1)*batch)
				z := append([]complex128(nil), z0...)
				if err := p.PowerPacked(rows, z, make([]complex128, h*batch), batch); err != nil {
					t.Fatal(err)
				}
				il := make([]float64, (h+1)*batch)
				z = append([]complex128(nil), z0...)
				if err := p.PowerPackedInterleaved(il, z, make([]complex128, h*batch), batch); err != nil {
					t.Fatal(err)
				}
				for b := range batch {
					for k := 0; k <= h; k++ {
						if a, w := il[k*batch+b], rows[b*(h+1)+k]; a != w {
							t.Fatalf("vector=%v n=%d batch=%d seq %d bin %d: interleaved %g, rows %g", vec, n, batch, b, k, a, w)
						}
					}
				}
				got = append(got, il)
			}
			if len(got) == 2 {
				for i := range got[0] {
					if d := math.Abs(got[0][i] - got[1][i]); d > 1e-12*math.Abs(got[0][i]) {
						t.Fatalf("n=%d batch=%d: value %d: scalar %g, vector %g", n, batch, i, got[0][i], got[1][i])
					}
				}
			}
		}
	}
	p, _ := ForReal(8)
	if err := p.PowerPackedInterleaved(make([]float64, 4), make([]complex128, 4), make([]complex128, 4), 1); err == nil {
		t.Error("PowerPackedInterleaved with short dst succeeded")
	}
}

// TestForwardHalf checks the transform of a zero-padded complex64 input
// against Forward on the padded copy (the same values, on each kernel
// path) and against the DFT.
func TestForwardHalf(t *testing.T) {
	defer func(v bool) { useAVX2 = v }(useAVX2)
	for _, n := range []int{2, 4, 8, 16, 32, 256, 1024, 2048} {
		p, _ := For(n)
		r := rand.New(rand.NewPCG(uint64(n), 3))
		x := make([]complex64, n/2)
		pad := make([]complex128, n)
		for i := range x {
			x[i] = complex(float32(r.NormFloat64()), float32(r.NormFloat64()))
			pad[i] = complex128(x[i])
		}
		want := naiveDFT(pad, -1)
		var outs [][]complex128
		for _, vec := range kernels() {
			useAVX2 = vec
			got := make([]complex128, n)
			if err := p.ForwardHalf(got, x, make([]complex128, n)); err != nil {
				t.Fatal(err)
			}
			ref := make([]complex128, n)
			if err := p.Forward(ref, pad, make([]complex128, n)); err != nil {
				t.Fatal(err)
			}
			if e := maxErr(got, want); e > 1e-13 {
				t.Errorf("vector=%v n=%d: rel err %.3g against the DFT", vec, n, e)
			}
			for k := range got {
				if got[k] != ref[k] {
					t.Fatalf("vector=%v n=%d: bin %d: %v, Forward of the padded input %v", vec, n, k, got[k], ref[k])
				}
			}
			outs = append(outs, got)
		}
		if len(outs) == 2 {
			// The later vector passes fuse multiply-adds: close, not equal.
			if e := maxErr(outs[1], outs[0]); e > 1e-14 {
				t.Errorf("n=%d: vector vs scalar rel err %.3g", n, e)
			}
		}
	}
	p, _ := For(16)
	if err := p.ForwardHalf(make([]complex128, 16), make([]complex64, 7), make([]complex128, 16)); err == nil {
		t.Error("ForwardHalf with short x succeeded")
	}
}
