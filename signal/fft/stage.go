package fft

// run applies one Stockham pass, reading x and writing y (len(x) == len(y)).
//
// With m = l/radix, input element x[q + s·(p + i·m)] for q < s, p < m and
// i < radix is butterfly input i of sequence (q, p); its outputs go to
// y[q + s·(radix·p + i)], each multiplied by its twiddle w^(i·p).
func (st *stage) run(y, x []complex128, batch int) {
	s := st.s * batch
	if useAVX2 && s%2 == 0 {
		if st.radix == 2 {
			radix2AVX2(&y[0], &x[0], s)
			return
		}
		if st.l == 4 {
			radix4LastAVX2(&y[0], &x[0], s)
			return
		}
		radix4AVX2(&y[0], &x[0], st.l/4, s, &st.tw[0])
		return
	}
	if st.radix == 2 {
		radix2(y, x, st.l, s, st.tw)
		return
	}
	switch {
	case st.l == 4:
		radix4Last(y, x, s)
	case s == 1:
		radix4First(y, x, st.l/4, st.tw)
	default:
		radix4(y, x, st.l/4, s, st.tw)
	}
}

// radix4First is the first radix-4 pass (stride 1).
func radix4First(y, x []complex128, m int, tw []complex128) {
	x0, x1, x2, x3 := x[:m], x[m:2*m], x[2*m:3*m], x[3*m:4*m]
	tw = tw[:3*m]
	y = y[:4*m]
	for p := range x0 {
		a, b, c, d := x0[p], x1[p], x2[p], x3[p]
		apc, amc := a+c, a-c
		bpd, bmd := b+d, b-d
		jbmd := complex(-imag(bmd), real(bmd))
		w := tw[3*p : 3*p+3 : 3*p+3]
		o := y[4*p : 4*p+4 : 4*p+4]
		o[0] = apc + bpd
		o[1] = mul(w[0], amc-jbmd)
		o[2] = mul(w[1], apc-bpd)
		o[3] = mul(w[2], amc+jbmd)
	}
}

// radix4 is a middle radix-4 pass: s > 1 and m > 1.
func radix4(y, x []complex128, m, s int, tw []complex128) {
	for p := 0; p < m; p++ {
		w1, w2, w3 := tw[3*p], tw[3*p+1], tw[3*p+2]
		x0 := x[s*p : s*p+s]
		x1 := x[s*(p+m) : s*(p+m)+s]
		x2 := x[s*(p+2*m) : s*(p+2*m)+s]
		x3 := x[s*(p+3*m) : s*(p+3*m)+s]
		o := y[4*s*p : 4*s*p+4*s]
		y0, y1, y2, y3 := o[:s], o[s:2*s], o[2*s:3*s], o[3*s:4*s]
		x1, x2, x3 = x1[:len(x0)], x2[:len(x0)], x3[:len(x0)]
		y0, y1, y2, y3 = y0[:len(x0)], y1[:len(x0)], y2[:len(x0)], y3[:len(x0)]
		for q := range x0 {
			a, b, c, d := x0[q], x1[q], x2[q], x3[q]
			apc, amc := a+c, a-c
			bpd, bmd := b+d, b-d
			jbmd := complex(-imag(bmd), real(bmd))
			y0[q] = apc + bpd
			y1[q] = mul(w1, amc-jbmd)
			y2[q] = mul(w2, apc-bpd)
			y3[q] = mul(w3, amc+jbmd)
		}
	}
}

// radix4Last is the last radix-4 pass (l == 4): no twiddles.
func radix4Last(y, x []complex128, s int) {
	x0, x1, x2, x3 := x[:s], x[s:2*s], x[2*s:3*s], x[3*s:4*s]
	y0, y1, y2, y3 := y[:s], y[s:2*s], y[2*s:3*s], y[3*s:4*s]
	x1, x2, x3 = x1[:len(x0)], x2[:len(x0)], x3[:len(x0)]
	y0, y1, y2, y3 = y0[:len(x0)], y1[:len(x0)], y2[:len(x0)], y3[:len(x0)]
	for q := range x0 {
		a, b, c, d := x0[q], x1[q], x2[q], x3[q]
		apc, amc := a+c, a-c
		bpd, bmd := b+d, b-d
		jbmd := complex(-imag(bmd), real(bmd))
		y0[q] = apc + bpd
		y1[q] = amc - jbmd
		y2[q] = apc - bpd
		y3[q] = amc + jbmd
	}
}

// radix2 is a radix-2 pass; the plans only use it as the last pass (l == 2).
func radix2(y, x []complex128, l, s int, tw []complex128) {
	m := l / 2
	for p := 0; p < m; p++ {
		w := complex(1, 0)
		if m > 1 {
			w = tw[p]
		}
		x0 := x[s*p : s*p+s]
		x1 := x[s*(p+m) : s*(p+m)+s]
		o := y[2*s*p : 2*s*p+2*s]
		y0, y1 := o[:s], o[s:2*s]
		x1, y0, y1 = x1[:len(x0)], y0[:len(x0)], y1[:len(x0)]
		for q := range x0 {
			a, b := x0[q], x1[q]
			y0[q] = a + b
			y1[q] = mul(w, a-b)
		}
	}
}

// mul is a complex product without the NaN and infinity recovery that Go's
// built-in complex multiplication does not do anyway; it is spelled out so
// that the compiler keeps it inline.
func mul(a, b complex128) complex128 {
	return complex(real(a)*real(b)-imag(a)*imag(b), real(a)*imag(b)+imag(a)*real(b))
}

// halfFirst is radix4First with inputs x[p], x[p+m] (converted from
// complex64) and zeros for x[p+2m], x[p+3m].
func halfFirst(y []complex128, x []complex64, m int, tw []complex128) {
	x0, x1 := x[:m], x[m:2*m]
	tw = tw[:3*m]
	y = y[:4*m]
	for p := range x0 {
		a, b := complex128(x0[p]), complex128(x1[p])
		jb := complex(-imag(b), real(b))
		w := tw[3*p : 3*p+3 : 3*p+3]
		o := y[4*p : 4*p+4 : 4*p+4]
		o[0] = a + b
		o[1] = mul(w[0], a-jb)
		o[2] = mul(w[1], a-b)
		o[3] = mul(w[2], a+jb)
	}
}
