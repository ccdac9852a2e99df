package sigraph

import (
	"math"

	"github.com/gomlx/gomlx/pkg/core/dtypes"
	. "github.com/gomlx/gomlx/pkg/core/graph" //nolint:revive // graph code reads better unqualified
	"github.com/gomlx/gomlx/pkg/core/shapes"

	"github.com/gotrain/gotrain/signal"
)

// Scalar outputs of the graph, per record, in this order.
const (
	sPower     = iota // mean |x|² (C21)
	sRSSIdBFS         // 10·log10 P
	sRSSIdBm          // 10·log10(P/Z/1 mW)
	sAmpMean          // mean |x|
	sAmpStd           // population std of |x|
	sPhaseMean        // circular mean of arg x
	sPhaseStd         // sqrt(−2 ln R)
	sFreqMean         // Hz
	sFreqStd          // Hz
	sC20re            // C20/C21
	sC20im            //
	sC40re            // C40/C21²
	sC40im            //
	sC41re            // C41/C21²
	sC41im            //
	sC42              // C42/C21²
	sCentroid         // Hz, from the Welch PSD
	sBandwidth        // Hz
	sFlatness         //
	numScalars
)

// Graph outputs, in the order the graph function returns them.
const (
	outScalars     = iota // [R, numScalars] float64
	outPSD                // [R, M] float64, fftshifted
	outACRe               // [R, lags+1] float64
	outACIm               // [R, lags+1] float64
	outSpectrogram        // [R, bins, frames] float32 (dB)
	outMFCCFrames         // [R, frames, MFCCs] float64
	outMFCC               // [R, MFCCs] float64 (means)
	numOutputs
)

// builder holds what the graph function needs: the configuration (with
// defaults), the record length and the per-stage dtypes and FFT plans.
type builder struct {
	cfg                  signal.Config
	n                    int
	timeDT, specDT, mfDT dtypes.DType
	welchFFT, specFFT    fftPlan
	mfccFFT              fftPlan
	melW                 []float64 // (frame/2+1) × bands, row-major
	dct                  []float64 // bands × MFCCs, row-major (transposed DCT-II rows)
	tukey                []float64
}

// build is the graph function: re and im are [R, N] float32 (the record's
// complex64 samples); it returns the numOutputs tensors.
func (b *builder) build(re32, im32 *Node) []*Node {
	outs := make([]*Node, numOutputs)
	x := cnode{ConvertDType(re32, b.timeDT), ConvertDType(im32, b.timeDT)}
	scal, env := b.timeStats(x)
	psd, acRe, acIm := b.welch(x)
	shape := b.spectralShape(psd)
	outs[outScalars] = Concatenate(append(scal, shape...), 1)
	outs[outPSD], outs[outACRe], outs[outACIm] = psd, acRe, acIm
	outs[outSpectrogram] = b.spectrogram(re32, im32)
	frames, mean := b.mfcc(env)
	outs[outMFCCFrames], outs[outMFCC] = frames, mean
	for i, o := range outs[:outSpectrogram] {
		outs[i] = ConvertDType(o, dtypes.Float64)
	}
	return outs
}

// col turns a [R] tensor into a [R, 1] column.
func col(x *Node) *Node { return Reshape(x, x.Shape().Dimensions[0], 1) }

// timeStats computes the sample-domain scalars (RSSI, cumulants,
// instantaneous amplitude, phase and frequency statistics) as [R, 1]
// columns in the order of the s* constants up to sC42, and the envelope |x|.
func (b *builder) timeStats(x cnode) (cols []*Node, env *Node) {
	n := float64(b.n)
	xr, xi := x.re, x.im
	q := Add(Mul(xr, xr), Mul(xi, xi))
	a := Sqrt(q)
	sum := func(v *Node) *Node { return ReduceSum(v, 1) }
	p := DivScalar(sum(q), n)
	ampMean := DivScalar(sum(a), n)
	ampStd := Sqrt(MaxScalar(Sub(p, Mul(ampMean, ampMean)), 0.0))
	// Unit phasors, zero samples skipped.
	pos := GreaterThan(a, ZerosLike(a))
	safe := Where(pos, a, OnesLike(a))
	zero := ZerosLike(a)
	ur := sum(Where(pos, Div(xr, safe), zero))
	ui := sum(Where(pos, Div(xi, safe), zero))
	r := DivScalar(Sqrt(Add(Mul(ur, ur), Mul(ui, ui))), n)
	phaseMean := atan2(ui, ur)
	phaseStd := Sqrt(MaxScalar(MulScalar(Log(r), -2.0), 0.0))
	// Phase steps d = arg(x[n+1]·conj(x[n])).
	pr, pi := sliceLast(xr, 0, b.n-1), sliceLast(xi, 0, b.n-1)
	nr, ni := sliceLast(xr, 1, b.n), sliceLast(xi, 1, b.n)
	d := atan2(Sub(Mul(ni, pr), Mul(nr, pi)), Add(Mul(nr, pr), Mul(ni, pi)))
	k := b.cfg.SampleRate / (2 * math.Pi)
	nd := n - 1
	fmean := DivScalar(sum(d), nd)
	fvar := Sub(DivScalar(sum(Mul(d, d)), nd), Mul(fmean, fmean))
	freqMean := MulScalar(fmean, k)
	freqStd := MulScalar(Sqrt(MaxScalar(fvar, 0.0)), k)
	// Moments: x² = s, M20 = E s, M40 = E s², M41 = E s·|x|², M42 = E |x|⁴.
	sr := Sub(Mul(xr, xr), Mul(xi, xi))
	si := MulScalar(Mul(xr, xi), 2.0)
	m20r, m20i := DivScalar(sum(sr), n), DivScalar(sum(si), n)
	m40r := DivScalar(sum(Sub(Mul(sr, sr), Mul(si, si))), n)
	m40i := DivScalar(sum(MulScalar(Mul(sr, si), 2.0)), n)
	m41r, m41i := DivScalar(sum(Mul(sr, q)), n), DivScalar(sum(Mul(si, q)), n)
	m42 := DivScalar(sum(Mul(q, q)), n)
	c21 := p
	c40r := Sub(m40r, MulScalar(Sub(Mul(m20r, m20r), Mul(m20i, m20i)), 3.0))
	c40i := Sub(m40i, MulScalar(Mul(m20r, m20i), 6.0))
	c41r := Sub(m41r, MulScalar(Mul(c21, m20r), 3.0))
	c41i := Sub(m41i, MulScalar(Mul(c21, m20i), 3.0))
	c42 := Sub(Sub(m42, Add(Mul(m20r, m20r), Mul(m20i, m20i))), MulScalar(Mul(c21, c21), 2.0))
	live := GreaterThan(c21, ZerosLike(c21))
	c21s := Where(live, c21, OnesLike(c21))
	c21sq := Mul(c21s, c21s)
	norm := func(v, by *Node) *Node { return Where(live, Div(v, by), ZerosLike(v)) }
	lg10 := func(v *Node) *Node { return MulScalar(Log(v), 10/math.Ln10) }
	cols = make([]*Node, sC42+1)
	cols[sPower] = p
	cols[sRSSIdBFS] = lg10(p)
	cols[sRSSIdBm] = lg10(DivScalar(p, b.cfg.Impedance*1e-3))
	cols[sAmpMean], cols[sAmpStd] = ampMean, ampStd
	cols[sPhaseMean], cols[sPhaseStd] = phaseMean, phaseStd
	cols[sFreqMean], cols[sFreqStd] = freqMean, freqStd
	cols[sC20re], cols[sC20im] = norm(m20r, c21s), norm(m20i, c21s)
	cols[sC40re], cols[sC40im] = norm(c40r, c21sq), norm(c40i, c21sq)
	cols[sC41re], cols[sC41im] = norm(c41r, c21sq), norm(c41i, c21sq)
	cols[sC42] = norm(c42, c21sq)
	for i, c := range cols {
		cols[i] = col(c)
	}
	return cols, a
}

// atan2 is atan2(y, x) from graph ops (GoMLX has no atan2): the argument is
// reduced to |t| ≤ tan(π/8) and atan(t) is a degree-7 odd polynomial in t
// (the CPU path's fastAtan2, within 3e−13 rad in float64); atan2(0, 0) = 0.
func atan2(y, x *Node) *Node {
	zero := ZerosLike(x)
	ax, ay := Abs(x), Abs(y)
	hi, lo := Max(ax, ay), Min(ax, ay)
	swap := GreaterThan(ay, ax)
	red := GreaterThan(lo, MulScalar(hi, 0.41421356237309504880))
	num := Where(red, Sub(lo, hi), lo)
	live := GreaterThan(hi, zero)
	den := Where(live, Where(red, Add(hi, lo), hi), OnesLike(hi))
	t := Div(num, den)
	z := Mul(t, t)
	z2 := Mul(z, z)
	z4 := Mul(z2, z2)
	poly := func(c0, c1 float64) *Node { return AddScalar(MulScalar(z, c1), c0) }
	pa, pb := poly(0.9999999999992707, -0.333333332783843), poly(0.19999993188848308, -0.1428539125816608)
	pc, pd := poly(0.11103534898900606, -0.08993217162984875), poly(0.06977004852438395, -0.03770173324445163)
	at := Mul(t, Add(Add(pa, Mul(pb, z2)), Mul(Add(pc, Mul(pd, z2)), z4)))
	r := Add(at, Where(red, AddScalar(zero, math.Pi/4), zero))
	r = Where(swap, Sub(AddScalar(zero, math.Pi/2), r), r)
	r = Where(LessThan(x, zero), Sub(AddScalar(zero, math.Pi), r), r)
	r = Where(LessThan(y, zero), Neg(r), r)
	return Where(live, r, zero)
}

// welch computes the Welch PSD (fftshifted, [R, M]) and the normalised
// autocorrelation ρ[0..lags] from one set of block FFTs, as the CPU path
// does (docs/SIGNAL.md, "How the CPU path is fast").
func (b *builder) welch(x cnode) (psd, acRe, acIm *Node) {
	m := b.cfg.WelchSegment
	bl := m / 2
	n := b.n
	nblk := (n + bl - 1) / bl
	nseg := (n - bl) / bl
	rows := x.re.Shape().Dimensions[0]
	pad := func(v *Node) *Node {
		if nblk*bl > n {
			v = padLast(v, nblk*bl-n)
		}
		return Reshape(v, rows, nblk, bl)
	}
	// P_b = FFT_M(block b zero-padded): [R, nblk, M].
	P := b.welchFFT.fft(cnode{pad(x.re), pad(x.im)}, bl, m, m, false)
	blocks := func(v *Node, lo, hi int) *Node { return SliceAxis(v, 1, AxisRange(lo, hi)) }
	// Segment i = blocks i, i+1: X[k] = P_i[k] + (−1)^k·P_{i+1}[k], X[0] = 0.
	alt, mask := make([]float64, m), make([]float64, m)
	for k := range m {
		alt[k] = 1 - 2*float64(k%2)
		mask[k] = 1
	}
	mask[0] = 0
	altN := ExpandLeftToRank(constVector(P.re, alt), 3)
	maskN := ExpandLeftToRank(constVector(P.re, mask), 3)
	seg := func(v *Node) *Node {
		return Mul(Add(blocks(v, 0, nseg), Mul(altN, blocks(v, 1, nseg+1))), maskN)
	}
	X := cnode{seg(P.re), seg(P.im)}
	// Periodic Hann: Xw[k] = 0.5·X[k] − 0.25·(X[k−1] + X[k+1]) (mod M).
	hann := func(v *Node) *Node {
		prev := Concatenate([]*Node{sliceLast(v, m-1, m), sliceLast(v, 0, m-1)}, -1)
		next := Concatenate([]*Node{sliceLast(v, 1, m), sliceLast(v, 0, 1)}, -1)
		return Sub(MulScalar(v, 0.5), MulScalar(Add(prev, next), 0.25))
	}
	wr, wi := hann(X.re), hann(X.im)
	acc := ReduceSum(Add(Mul(wr, wr), Mul(wi, wi)), 1) // [R, M]
	var sw float64
	for i := range m {
		v := 0.5 - 0.5*math.Cos(2*math.Pi*float64(i)/float64(m))
		sw += v * v
	}
	acc = MulScalar(acc, 1/(b.cfg.SampleRate*sw)/float64(nseg))
	psd = Concatenate([]*Node{sliceLast(acc, m/2, m), sliceLast(acc, 0, m/2)}, -1)

	// Autocorrelation: S_j = Σ_b conj(P_b)·P_{b+j}, j = 0..J−1; its inverse
	// FFT holds c_j[d] (d in (−B, B)) at index d mod M; r[k] = Σ_j c_j[k − jB].
	lags := b.cfg.AutocorrLags
	nj := (bl-1+lags)/bl + 1
	var sr, si []*Node
	for j := range nj {
		if j >= nblk {
			z := Zeros(P.re.Graph(), shapeOf(P.re.DType(), rows, 1, m))
			sr, si = append(sr, z), append(si, z)
			continue
		}
		ar, ai := blocks(P.re, 0, nblk-j), blocks(P.im, 0, nblk-j)
		cr, ci := blocks(P.re, j, nblk), blocks(P.im, j, nblk)
		// conj(a)·c = (ar·cr + ai·ci) + i(ar·ci − ai·cr)
		sr = append(sr, ReduceSum(Add(Mul(ar, cr), Mul(ai, ci)), 1))
		si = append(si, ReduceSum(Sub(Mul(ar, ci), Mul(ai, cr)), 1))
	}
	for j := range sr {
		sr[j] = Reshape(sr[j], rows, 1, m)
		si[j] = Reshape(si[j], rows, 1, m)
	}
	S := cnode{Concatenate(sr, 1), Concatenate(si, 1)} // [R, J, M]
	C := b.welchFFT.fft(S, m, m, m, true)
	var sums [2]*Node
	for comp, v := range []*Node{C.re, C.im} {
		var terms []*Node
		for j := range nj {
			cj := Reshape(SliceAxis(v, 1, AxisRange(j, j+1)), rows, m)
			klo, khi := max(0, j*bl-bl+1), min(lags, j*bl+bl-1)
			if klo > khi {
				continue
			}
			dlo, dhi := klo-j*bl, khi-j*bl
			var seq []*Node
			if dlo < 0 {
				seq = append(seq, sliceLast(cj, m+dlo, m+min(dhi+1, 0)))
			}
			if dhi >= 0 {
				seq = append(seq, sliceLast(cj, max(dlo, 0), dhi+1))
			}
			t := seq[0]
			if len(seq) > 1 {
				t = Concatenate(seq, -1)
			}
			if klo > 0 {
				t = Concatenate([]*Node{Zeros(t.Graph(), shapeOf(t.DType(), rows, klo)), t}, -1)
			}
			if khi < lags {
				t = padLast(t, lags-khi)
			}
			terms = append(terms, t)
		}
		sum := terms[0]
		for _, t := range terms[1:] {
			sum = Add(sum, t)
		}
		sums[comp] = sum
	}
	rRe, rIm := sums[0], sums[1]
	r0 := sliceLast(rRe, 0, 1) // [R, 1]
	live := GreaterThan(r0, ZerosLike(r0))
	den := Where(live, r0, OnesLike(r0))
	liveB := BroadcastToDims(live, rows, lags+1)
	acRe = Where(liveB, Div(rRe, den), ZerosLike(rRe))
	acIm = Where(liveB, Div(rIm, den), ZerosLike(rIm))
	return psd, acRe, acIm
}

// spectralShape computes the centroid, bandwidth and flatness of the
// fftshifted PSD as [R, 1] columns.
func (b *builder) spectralShape(psd *Node) []*Node {
	m := b.cfg.WelchSegment
	df := b.cfg.SampleRate / float64(m)
	f := make([]float64, m)
	for i := range f {
		f[i] = float64(i-m/2) * df
	}
	fN := ExpandLeftToRank(constVector(psd, f), 2)
	tot := ReduceSum(psd, 1)
	c := Div(ReduceSum(Mul(fN, psd), 1), tot)
	dev := Sub(fN, col(c))
	spread := ReduceSum(Mul(Mul(dev, dev), psd), 1)
	logs := ReduceSum(Log(AddScalar(psd, 1e-30)), 1)
	flat := Div(Exp(DivScalar(logs, float64(m))), DivScalar(tot, float64(m)))
	return []*Node{col(c), col(Sqrt(Div(spread, tot))), col(flat)}
}

// frames cuts x [R, N] into count frames of seg samples every step:
// [R, count, seg], built from reshapes, slices and concatenations (no
// gather): the record is cut into blocks of step samples and frame t is
// blocks t..t+kb−1 joined and truncated to seg.
func frames(x *Node, n, seg, step, count int) *Node {
	rows := x.Shape().Dimensions[0]
	kb := (seg + step - 1) / step
	nb := count - 1 + kb
	switch need := nb * step; {
	case need > n:
		x = padLast(x, need-n)
	case need < n:
		x = sliceLast(x, 0, need)
	}
	blk := Reshape(x, rows, nb, step)
	parts := make([]*Node, kb)
	for i := range kb {
		parts[i] = SliceAxis(blk, 1, AxisRange(i, i+count))
	}
	fr := parts[0]
	if kb > 1 {
		fr = Concatenate(parts, -1)
	}
	if kb*step != seg {
		fr = sliceLast(fr, 0, seg)
	}
	return fr
}

// spectrogram computes the dB spectrogram [R, bins, frames] (float32).
func (b *builder) spectrogram(re32, im32 *Node) *Node {
	seg := b.cfg.SpectrogramSegment
	step := seg - b.cfg.SpectrogramOverlap
	count := (b.n - b.cfg.SpectrogramOverlap) / step
	prep := func(v *Node) *Node {
		fr := frames(ConvertDType(v, b.specDT), b.n, seg, step, count)
		mean := ReduceMean(fr, -1)
		fr = Sub(fr, Reshape(mean, mean.Shape().Dimensions[0], count, 1))
		return Mul(fr, ExpandLeftToRank(constVector(fr, b.tukey), 3))
	}
	X := b.specFFT.fft(cnode{prep(re32), prep(im32)}, seg, seg, seg, false)
	var sw float64
	for _, v := range b.tukey {
		sw += v * v
	}
	p := MulScalar(Add(Mul(X.re, X.re), Mul(X.im, X.im)), 1/(b.cfg.SampleRate*sw))
	db := MulScalar(Log(AddScalar(p, 1e-20)), 10/math.Ln10)
	return ConvertDType(swapLast(db), dtypes.Float32) // [R, bins, frames]
}

// mfcc computes the per-frame MFCCs [R, frames, MFCCs] and their means
// [R, MFCCs] of the envelope env [R, N].
func (b *builder) mfcc(env *Node) (perFrame, mean *Node) {
	fr := b.cfg.MFCCFrame
	count := 1 + (b.n-fr)/b.cfg.MFCCHop
	nb := fr/2 + 1
	bands, nc := b.cfg.MelBands, b.cfg.MFCCs
	x := frames(ConvertDType(env, b.mfDT), b.n, fr, b.cfg.MFCCHop, count)
	hann := make([]float64, fr)
	for i := range hann {
		hann[i] = 0.5 - 0.5*math.Cos(2*math.Pi*float64(i)/float64(fr))
	}
	x = Mul(x, ExpandLeftToRank(constVector(x, hann), 3))
	X := b.mfccFFT.fft(cnode{x, nil}, fr, fr, nb, false)
	pw := MulScalar(Add(Mul(X.re, X.re), Mul(X.im, X.im)), 1/float64(fr)) // [R, F, nb]
	e := DotGeneral(pw, []int{2}, nil, constMatrix(pw, b.melW, nb, bands), []int{0}, nil)
	lm := ConvertDType(Log(MaxScalar(e, 1e-10)), dtypes.Float64)
	c := DotGeneral(lm, []int{2}, nil, constMatrix(lm, b.dct, bands, nc), []int{0}, nil) // [R, F, nc]
	return c, ReduceMean(c, 1)
}

func shapeOf(dt dtypes.DType, dims ...int) shapes.Shape { return shapes.Make(dt, dims...) }
