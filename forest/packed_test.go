package forest

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/gotrain/gotrain/data"
)

// packedCase is a packed histogram of nc classes (cs = nc+2 int64s a
// code) over codes 1..ncode, a random subset of them present (codes),
// guard values -7 where no code is, and what a plain loop over the codes
// in order makes of it: the histogram cleared (want), each code's score
// and the sums through it (after).
type packedCase struct {
	cs             int
	orig, want     []int64
	codes          []uint8
	tc             [16]int64
	tw, tt         int64
	scores         []float64
	after          []packedSums
	lc             [16]int64 // the left side's class weights through every code
	nl, wl, s1, s2 int64     // and its sums
}

type packedSums struct{ nl, wl, s1, s2 int64 }

func newPackedCase(r *rand.Rand, nc, ncode int) *packedCase {
	cs := nc + 2
	pc := &packedCase{cs: cs, orig: make([]int64, (ncode+2)*cs)}
	orig := pc.orig
	for i := range orig {
		orig[i] = -7 // guard values where no code is
	}
	for c := 1; c <= ncode; c++ {
		if r.IntN(3) == 0 {
			continue
		}
		pc.codes = append(pc.codes, uint8(c))
		orig[c*cs], orig[c*cs+1] = 1, 0
		for q := 0; q < nc; q++ {
			var v int64
			if r.IntN(2) == 0 || q == int(c)%nc { // every code holds rows
				rows := int64(1 + r.IntN(50))
				v = rows<<32 | (rows + int64(r.IntN(20)))
			}
			orig[c*cs+2+q] = v
			pc.tc[q] += v & (1<<32 - 1)
		}
	}
	for _, v := range pc.tc {
		pc.tw += v
		pc.tt += v * v
	}
	pc.tw++ // one more unit of weight on the right: every score finite

	// The reference: sums, scores and the cleared histogram.
	want := append([]int64(nil), orig...)
	lc := &pc.lc
	for _, c := range pc.codes {
		for q := 0; q < nc; q++ {
			v := want[int(c)*cs+2+q]
			pc.nl += v >> 32
			v &= 1<<32 - 1
			pc.s1 += v * (2*lc[q] + v)
			pc.s2 += pc.tc[q] * v
			lc[q] += v
			pc.wl += v
			want[int(c)*cs+2+q] = 0
		}
		want[int(c)*cs] = 0
		pc.scores = append(pc.scores, float64(pc.s1)/float64(pc.wl)+float64(pc.tt-2*pc.s2+pc.s1)/float64(pc.tw-pc.wl))
		pc.after = append(pc.after, packedSums{pc.nl, pc.wl, pc.s1, pc.s2})
	}
	pc.want = want
	return pc
}

// sumsBefore are the sums through the codes before codes[i].
func (pc *packedCase) sumsBefore(i int) packedSums {
	if i == 0 {
		return packedSums{}
	}
	return pc.after[i-1]
}

// TestScanPackedAsm checks the packed scans' kernels (scanPackedAsm, and
// scanPacked8Asm for the class counts it takes):
// their sums, scores, clearing, stop and resumption against a plain loop
// over the same packed histogram, for every class count up to 16, and
// that they write nothing outside the codes they read.
func TestScanPackedAsm(t *testing.T) {
	needAVX512(t)
	r := rand.New(rand.NewPCG(9, 10))
	for nc := 1; nc <= 16; nc++ {
		pc := newPackedCase(r, nc, 40)
		cs, codes, tc, tw, tt, scores := pc.cs, pc.codes, pc.tc, pc.tw, pc.tt, pc.scores
		nl, wl, s1, s2, lc := pc.nl, pc.wl, pc.s1, pc.s2, pc.lc
		type kernel struct {
			name string
			scan func(h *int64, cs int, codes *uint8, n int, s *packedScan) int
		}
		kernels := []kernel{{"scanPackedAsm", scanPackedAsm}}
		if nc <= 8 {
			kernels = append(kernels, kernel{"scanPacked8Asm", scanPacked8Asm})
		}
		for _, k := range kernels {
			h := append([]int64(nil), pc.orig...)
			s := packedScan{tc: tc, tw: tw, tt: tt, best: math.Inf(1)}
			if got := k.scan(&h[0], cs, &codes[0], len(codes), &s); got != len(codes) {
				t.Fatalf("%s nc=%d: stopped at %d of %d codes with best +Inf", k.name, nc, got, len(codes))
			}
			if s.nl != nl || s.wl != wl || s.s1 != s1 || s.s2 != s2 || s.lc != lc {
				t.Fatalf("%s nc=%d: sums %d %d %d %d %v, want %d %d %d %d %v", k.name, nc, s.nl, s.wl, s.s1, s.s2, s.lc, nl, wl, s1, s2, lc)
			}
			for i := range h {
				if h[i] != pc.want[i] {
					t.Fatalf("%s nc=%d: h[%d] = %d, want %d", k.name, nc, i, h[i], pc.want[i])
				}
			}

			// With the best at a middle code's score, the scan stops at the
			// first code whose score reaches it, with that score's bits;
			// resumed after it, it ends with the sums of all codes.
			m := len(scores) / 2
			first := 0
			for scores[first] < scores[m] {
				first++
			}
			h = append(h[:0], pc.orig...)
			s = packedScan{tc: tc, tw: tw, tt: tt, best: scores[m]}
			got := k.scan(&h[0], cs, &codes[0], len(codes), &s)
			a := pc.after[first]
			if got != first || math.Float64bits(s.score) != math.Float64bits(scores[first]) || s.nl != a.nl || s.wl != a.wl || s.s1 != a.s1 || s.s2 != a.s2 {
				t.Fatalf("%s nc=%d: stopped at %d with score %v, want %d with %v", k.name, nc, got, s.score, first, scores[first])
			}
			if first+1 < len(codes) {
				s.best = math.Inf(1)
				if rest := k.scan(&h[0], cs, &codes[first+1], len(codes)-first-1, &s); rest != len(codes)-first-1 {
					t.Fatalf("%s nc=%d: resumed scan stopped at %d", k.name, nc, rest)
				}
				if s.nl != nl || s.wl != wl || s.s1 != s1 || s.s2 != s2 || s.lc != lc {
					t.Fatalf("%s nc=%d: resumed sums %d %d %d %d, want %d %d %d %d", k.name, nc, s.nl, s.wl, s.s1, s.s2, nl, wl, s1, s2)
				}
			}
		}
	}
}

// TestScanBatchAsm checks the batched packed scans (scanBatch8Asm,
// scanBatch16Asm) against the plain loop of newPackedCase, for every class
// count up to 16 and code counts around the batch of eight: with no score
// reaching the best they take every code, with the sums and the cleared
// histogram of the loop; with the best at a code's score they stop at the
// start of the batch holding the first code that reaches it, the sums
// those of the codes before that batch, the histogram of those codes
// cleared and nothing else touched; resumed with no best they end as the
// full scan does; and the state's zero entry stays zero.
func TestScanBatchAsm(t *testing.T) {
	needAVX512(t)
	r := rand.New(rand.NewPCG(11, 12))
	for nc := 1; nc <= 16; nc++ {
		batch, name := scanBatch16Asm, "scanBatch16Asm"
		if nc <= 8 {
			batch, name = scanBatch8Asm, "scanBatch8Asm"
		}
		for _, ncode := range []int{1, 3, 9, 12, 13, 24, 25, 40, 100} {
			pc := newPackedCase(r, nc, ncode)
			n := len(pc.codes)
			if n == 0 {
				continue
			}
			codes := append(pc.codes[:n:n], 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF) // read, not used
			check := func(what string, s *packedScan, want packedSums, lcWant [16]int64) {
				t.Helper()
				if s.nl != want.nl || s.wl != want.wl || s.s1 != want.s1 || s.s2 != want.s2 || s.lc != lcWant {
					t.Fatalf("%s nc=%d codes=%d %s: sums %d %d %d %d %v, want %d %d %d %d %v", name, nc, n, what, s.nl, s.wl, s.s1, s.s2, s.lc, want.nl, want.wl, want.s1, want.s2, lcWant)
				}
				if s.zero != ([18]int64{}) {
					t.Fatalf("%s nc=%d codes=%d %s: the zero entry holds %v", name, nc, n, what, s.zero)
				}
			}
			lcBefore := func(i int) (lc [16]int64) {
				for _, c := range pc.codes[:i] {
					for q := 0; q < nc; q++ {
						lc[q] += pc.orig[int(c)*pc.cs+2+q] & (1<<32 - 1)
					}
				}
				return lc
			}

			h := append([]int64(nil), pc.orig...)
			s := packedScan{tc: pc.tc, tw: pc.tw, tt: pc.tt, best: math.Inf(1)}
			if got := batch(&h[0], pc.cs, &codes[0], n, &s); got != n {
				t.Fatalf("%s nc=%d codes=%d: took %d codes with best +Inf", name, nc, n, got)
			}
			check("all", &s, pc.sumsBefore(n), pc.lc)
			if !slices.Equal(h, pc.want) {
				t.Fatalf("%s nc=%d codes=%d: histogram %v, want %v", name, nc, n, h, pc.want)
			}

			for _, m := range []int{0, n / 2, n - 1} {
				first := 0
				for pc.scores[first] < pc.scores[m] {
					first++
				}
				start := first &^ 7
				h = append(h[:0], pc.orig...)
				s = packedScan{tc: pc.tc, tw: pc.tw, tt: pc.tt, best: pc.scores[m]}
				if got := batch(&h[0], pc.cs, &codes[0], n, &s); got != start {
					t.Fatalf("%s nc=%d codes=%d: stopped at %d with the best at code %d's score, want %d (first reaching it: %d)", name, nc, n, got, m, start, first)
				}
				check("stopped", &s, pc.sumsBefore(start), lcBefore(start))
				for i := range h {
					want := pc.orig[i]
					if c := i / pc.cs; slices.Contains(pc.codes[:start], uint8(c)) {
						want = pc.want[i]
					}
					if h[i] != want {
						t.Fatalf("%s nc=%d codes=%d stopped at %d: h[%d] = %d, want %d", name, nc, n, start, i, h[i], want)
					}
				}
				s.best = math.Inf(1)
				if rest := batch(&h[0], pc.cs, &codes[start], n-start, &s); rest != n-start {
					t.Fatalf("%s nc=%d codes=%d: resumed at %d, took %d", name, nc, n, start, rest)
				}
				check("resumed", &s, pc.sumsBefore(n), pc.lc)
				if !slices.Equal(h, pc.want) {
					t.Fatalf("%s nc=%d codes=%d: resumed histogram %v, want %v", name, nc, n, h, pc.want)
				}
			}
		}
	}
}

// TestBlockConstants checks blockConstants against a plain comparison of
// every code with the column's first: columns of one code, and columns
// differing only at their first or their last row, features skipped.
func TestBlockConstants(t *testing.T) {
	const p = 70
	for _, m := range []int{1, 2, 3, 17, 64, 65} {
		loc := make([]uint8, m*p)
		skip := make([]uint64, 2)
		for j := 0; j < p; j++ {
			col := loc[j*m : (j+1)*m]
			for i := range col {
				col[i] = uint8(j)
			}
			switch j % 4 {
			case 1:
				col[0]++
			case 2:
				col[m-1]++
			}
			if j%9 == 0 {
				skip[j>>6] |= 1 << (j & 63)
			}
		}
		dst := []uint64{^uint64(0), ^uint64(0)}
		blockConstants(dst, loc, m, p, skip)
		for j := 0; j < p; j++ {
			want := skip[j>>6]&(1<<(j&63)) == 0 && m >= 2
			for _, c := range loc[j*m : (j+1)*m] {
				want = want && c == loc[j*m]
			}
			if got := dst[j>>6]&(1<<(j&63)) != 0; got != want {
				t.Fatalf("m=%d feature %d: constant %v, want %v", m, j, got, want)
			}
		}
	}
}

// TestHistNode checks the byte kernels of scanLocalGini's histogram:
// histNodeAsm adds what histPacked adds (from each row's weight and class
// entry, in the order of the rows), leaves the codes' first words alone
// and marks each row's code in seen; presentSeen turns the marks into the
// bitmap of the codes present and clears them. Codes span all four bitmap
// words, classes up to maxPacked, row counts odd and even.
func TestHistNode(t *testing.T) {
	if !useVBMI2 {
		t.Skip("no AVX-512 VBMI2 kernel on this CPU or build")
	}
	r := rand.New(rand.NewPCG(11, 12))
	for _, nc := range []int{1, 2, 3, 10, 16, maxPacked} {
		for _, m := range []int{1, 2, 3, 7, 64, 501} {
			cs := nc + 2
			const nrows = 600
			col := make([]uint8, nrows)
			lv := make([]int64, nrows)
			var cm [maxPacked]int
			for q := 0; q < nc; q++ {
				cm[q] = 2 + (q*7)%nc // the node's entries in another order
			}
			for i := range col {
				col[i] = uint8(r.IntN(256))
				if r.IntN(2) == 0 {
					col[i] = uint8(r.IntN(3)) // runs of few codes
				}
				lv[i] = int64(r.IntN(nc))<<56 | 1<<32 | int64(1+r.IntN(1000))
			}
			rows := make([]int32, m)
			nw := make([]int64, m)
			for i := range rows {
				rows[i] = int32(r.IntN(nrows))
				w := lv[rows[i]]
				nw[i] = (w&(1<<56-1))<<8 + int64(cm[w>>56])
			}
			want := make([]int64, 256*cs)
			histPacked(want, col, rows, lv, &cm, cs)
			got := make([]int64, 256*cs)
			var seen [256]uint8
			histNodeAsm(&got[0], &col[0], &rows[0], m, &nw[0], cs, &seen[0])
			var present, wantPresent [4]uint64
			for c := 0; c < 256; c++ {
				if want[c*cs] != 0 {
					wantPresent[c>>6] |= 1 << (c & 63)
				}
				if got[c*cs] != 0 {
					t.Fatalf("classes %d, %d rows: code %d's first word %d, want 0", nc, m, c, got[c*cs])
				}
				for q := 1; q < cs; q++ {
					if got[c*cs+q] != want[c*cs+q] {
						t.Fatalf("classes %d, %d rows: code %d entry %d = %#x, want %#x", nc, m, c, q, got[c*cs+q], want[c*cs+q])
					}
				}
			}
			presentSeen(&seen, &present)
			if present != wantPresent {
				t.Fatalf("classes %d, %d rows: present %x, want %x", nc, m, present, wantPresent)
			}
			if seen != [256]uint8{} {
				t.Fatalf("classes %d, %d rows: seen not cleared", nc, m)
			}
		}
	}
}

// TestFewGiniKeepsTrees checks that scanFewGini, the histogram-free search
// of nodes of at most fewNode rows, grows the trees (the model file, byte
// for byte) the packed histogram scans grow: ten classes, two classes,
// missing values (left to the histogram), sample weights, features of few
// codes (many ties between rows), and the settings that keep it off.
func TestFewGiniKeepsTrees(t *testing.T) {
	if !useVBMI2 {
		t.Skip("no AVX-512 VBMI2 kernel on this CPU or build: scanFewGini does not run")
	}
	dig, two, weighted := digitsVariants(t)
	coarse := toDS(dig, all(dig.Rows))
	for i := range coarse.X {
		coarse.X[i] = float64(int(coarse.X[i]) / 6)
	}
	for _, c := range append(giniCases(dig, two, weighted),
		giniCase{"few codes", coarse, Options{Task: Classification, Trees: 4, Seed: 5, MaxFeatures: "log2"}},
		giniCase{"sparse wide", sparseWide(900, 200, 5, false), Options{Task: Classification, Trees: 3, Seed: 6}},
		giniCase{"leaf 2", toDS(dig, all(dig.Rows)), Options{Task: Classification, Trees: 3, Seed: 7, MinSamplesLeaf: 2}},
	) {
		t.Run(c.name, func(t *testing.T) {
			defer func() { fewRows = fewNode }()
			if !fitsAgree(t, c.d, c.opt, func(on bool) {
				fewRows = 0 // the histogram for every node
				if on {
					fewRows = fewNode
				}
			}) {
				t.Fatal("scanFewGini grows other trees than the histogram scans")
			}
		})
	}
}

// TestColumnBits checks columnBits against a plain loop: the bitmap of
// nonzero codes (bits past the last code clear) and whether all codes
// are equal, for lengths around the 64-code words.
func TestColumnBits(t *testing.T) {
	if !useVBMI2 {
		t.Skip("no AVX-512 VBMI2 kernel on this CPU or build")
	}
	r := rand.New(rand.NewPCG(13, 14))
	for _, n := range []int{1, 2, 63, 64, 65, 127, 128, 129, 1000} {
		for _, kind := range []string{"zero", "one code", "sparse", "last differs"} {
			col := make([]uint8, n+64) // codes past n must not count
			for i := range col {
				col[i] = uint8(1 + r.IntN(255))
			}
			for i := 0; i < n; i++ {
				switch kind {
				case "zero":
					col[i] = 0
				case "one code", "last differs":
					col[i] = 7
				case "sparse":
					if r.IntN(4) > 0 {
						col[i] = 0
					}
				}
			}
			if kind == "last differs" {
				col[n-1] = 0
			}
			words := (n + 63) / 64
			nz := make([]uint64, words+1)
			nz[words] = 0xDEAD // must stay
			same := columnBits(&col[0], n, &nz[0])
			want := make([]uint64, words+1)
			want[words] = 0xDEAD
			wantSame := true
			for i := 0; i < n; i++ {
				if col[i] != 0 {
					want[i>>6] |= 1 << (i & 63)
				}
				if col[i] != col[0] {
					wantSame = false
				}
			}
			if same != wantSame {
				t.Fatalf("n=%d %s: all equal %v, want %v", n, kind, same, wantSame)
			}
			for w := range want {
				if nz[w] != want[w] {
					t.Fatalf("n=%d %s: word %d = %#x, want %#x", n, kind, w, nz[w], want[w])
				}
			}
		}
	}
}

// TestHistSparse checks histSparseAsm against histPacked over the rows in
// both bitmaps: the entries added (from each row's rowW), the codes
// marked, the rows listed.
func TestHistSparse(t *testing.T) {
	if !useVBMI2 {
		t.Skip("no AVX-512 VBMI2 kernel on this CPU or build")
	}
	r := rand.New(rand.NewPCG(15, 16))
	for _, nc := range []int{2, 10, maxPacked} {
		for _, n := range []int{1, 64, 100, 3000} {
			cs := nc + 2
			words := (n + 63) / 64
			col := make([]uint8, n)
			nodeBits := make([]uint64, words)
			colBits := make([]uint64, words)
			rowW := make([]int64, n)
			lv := make([]int64, n)
			var cm [maxPacked]int
			for q := 0; q < nc; q++ {
				cm[q] = 2 + q
			}
			var rows []int32
			for i := 0; i < n; i++ {
				if r.IntN(3) > 0 {
					col[i] = uint8(1 + r.IntN(255))
					colBits[i>>6] |= 1 << (i & 63)
				}
				class := r.IntN(nc)
				w := int64(1 + r.IntN(100))
				lv[i] = int64(class)<<56 | 1<<32 | w
				rowW[i] = (1<<32|w)<<8 | int64(cm[class])
				if r.IntN(2) == 0 {
					nodeBits[i>>6] |= 1 << (i & 63)
					if col[i] != 0 {
						rows = append(rows, int32(i))
					}
				}
			}
			want := make([]int64, 256*cs)
			histPacked(want, col, rows, lv, &cm, cs)
			got := make([]int64, 256*cs)
			var seen [256]uint8
			list := make([]uint16, n+32)
			listed := histSparseAsm(&got[0], &col[0], &nodeBits[0], &colBits[0], words, &rowW[0], cs, &seen[0], &list[0], &make([]uint64, words+8)[0])
			if listed != len(rows) {
				t.Fatalf("classes %d, %d rows: %d listed, want %d", nc, n, listed, len(rows))
			}
			for k, i := range rows {
				if int32(list[k]) != i {
					t.Fatalf("classes %d, %d rows: list[%d] = %d, want %d", nc, n, k, list[k], i)
				}
			}
			for c := 0; c < 256; c++ {
				if (seen[c] != 0) != (want[c*cs] != 0) {
					t.Fatalf("classes %d, %d rows: code %d marked %v", nc, n, c, seen[c] != 0)
				}
				for q := 2; q < cs; q++ {
					if got[c*cs+q] != want[c*cs+q] {
						t.Fatalf("classes %d, %d rows: code %d entry %d = %#x, want %#x", nc, n, c, q, got[c*cs+q], want[c*cs+q])
					}
				}
			}
		}
	}
}

// TestSparseGiniKeepsTrees checks that scanSparseGini, the histogram of a
// large node's nonzero codes only, grows the trees (the model file, byte
// for byte) the histogram of every row grows: digits (mostly 0 pixels),
// two classes, twenty, missing values, sample weights, codes of which few
// are 0.
func TestSparseGiniKeepsTrees(t *testing.T) {
	if !useVBMI2 {
		t.Skip("no AVX-512 VBMI2 kernel on this CPU or build: scanSparseGini does not run")
	}
	dig, two, weighted := digitsVariants(t)
	shifted := toDS(dig, all(dig.Rows))
	for i := range shifted.X {
		shifted.X[i] = float64((int(shifted.X[i]) + i) % 17) // code 0 rare
	}
	twenty := toDS(dig, all(dig.Rows)) // more classes than the vector sums of code 0 take
	for i := range twenty.Y {
		twenty.Y[i] += float64(10 * (i % 2))
	}
	for _, c := range append(giniCases(dig, two, weighted),
		giniCase{"few zeros", shifted, Options{Task: Classification, Trees: 3, Seed: 5}},
		giniCase{"leaf 3", toDS(dig, all(dig.Rows)), Options{Task: Classification, Trees: 3, Seed: 7, MinSamplesLeaf: 3}},
		giniCase{"twenty classes", twenty, Options{Task: Classification, Trees: 3, Seed: 8}},
	) {
		t.Run(c.name, func(t *testing.T) {
			defer func(v int) { sparseAt = v }(sparseAt)
			if !fitsAgree(t, c.d, c.opt, func(on bool) {
				sparseAt = 1 << 30 // the histogram of every row
				if on {
					sparseAt = 64 // most searched nodes
				}
			}) {
				t.Fatal("scanSparseGini grows other trees than the histogram of every row")
			}
		})
	}
}

// TestListCodes checks listCodes against the set's bits read one by one:
// empty, full, and random sets.
func TestListCodes(t *testing.T) {
	if !useVBMI2 {
		t.Skip("no AVX-512 VBMI2 kernel on this CPU or build")
	}
	r := rand.New(rand.NewPCG(17, 18))
	sets := [][4]uint64{{}, {^uint64(0), ^uint64(0), ^uint64(0), ^uint64(0)}, {1, 0, 0, 1 << 63}}
	for range 50 {
		sets = append(sets, [4]uint64{r.Uint64() & r.Uint64(), r.Uint64(), 0, r.Uint64() & r.Uint64() & r.Uint64()})
	}
	for _, set := range sets {
		buf := make([]uint8, 256+64)
		got := buf[:listCodes(&set, &buf[0])]
		var want []uint8
		for c := 0; c < 256; c++ {
			if set[c>>6]&(1<<(c&63)) != 0 {
				want = append(want, uint8(c))
			}
		}
		if string(got) != string(want) {
			t.Fatalf("set %x: codes %v, want %v", set, got, want)
		}
	}
}

// digitsVariants returns the embedded digits, all its rows: as they are,
// in two classes (even and odd digits), and with sample weights.
func digitsVariants(t *testing.T) (dig, two, weighted *data.Dataset) {
	t.Helper()
	dig = loadEmbedded(t, "digits")
	two = toDS(dig, all(dig.Rows))
	for i := range two.Y {
		two.Y[i] = float64(int(two.Y[i]) % 2)
	}
	weighted = toDS(dig, all(dig.Rows))
	weighted.Weights = make([]float64, weighted.Rows)
	for i := range weighted.Weights {
		weighted.Weights[i] = 0.5 + float64(i%5)
	}
	return dig, two, weighted
}

// giniCase is a fit for the tests that compare two paths' trees.
type giniCase struct {
	name string
	d    *data.Dataset
	opt  Options
}

// giniCases are the fits those tests share: digits in ten classes, in
// two, with missing values, with weights (digitsVariants).
func giniCases(dig, two, weighted *data.Dataset) []giniCase {
	return []giniCase{
		{"ten classes", toDS(dig, all(dig.Rows)), Options{Task: Classification, Trees: 4, Seed: 1}},
		{"two classes", two, Options{Task: Classification, Trees: 4, Seed: 2}},
		{"nan", withNaNs(toDS(dig, all(dig.Rows)), 7), Options{Task: Classification, Trees: 4, Seed: 3}},
		{"weights", weighted, Options{Task: Classification, Trees: 4, Seed: 4}},
	}
}
