package forest

import (
	"hash/fnv"
	"math"
	"testing"

	"github.com/gotrain/gotrain/data"
)

// TestScoresSameBitsOnEveryArchitecture pins the bits of a fit's scores,
// recorded on amd64: the out-of-bag R², R² and mean squared error of its
// predictions and its permutation importances. Go may fuse a multiply and
// an add into one FMA on arm64 (and ppc64, s390x) unless a conversion
// rounds the product, and the sums of squares would then end in other
// bits there: CI runs this test on arm64 under qemu, where it fails if a
// conversion goes missing.
func TestScoresSameBitsOnEveryArchitecture(t *testing.T) {
	d, err := data.Diabetes()
	if err != nil {
		t.Fatal(err)
	}
	f := fitOrFail(t, d, Options{Trees: 20, Seed: 3, OOB: true})
	pred, err := f.Predict(d.X, d.Rows)
	if err != nil {
		t.Fatal(err)
	}
	mean, std, err := f.PermutationImportance(d.X, d.Rows, d.Y, 3, 5)
	if err != nil {
		t.Fatal(err)
	}
	h := fnv.New64a()
	for _, v := range append(mean, std...) {
		b := math.Float64bits(v)
		_, _ = h.Write([]byte{byte(b), byte(b >> 8), byte(b >> 16), byte(b >> 24), byte(b >> 32), byte(b >> 40), byte(b >> 48), byte(b >> 56)})
	}
	got := map[string]uint64{
		"OOBScore":              math.Float64bits(f.OOBScore),
		"R2":                    math.Float64bits(R2(pred, d.Y)),
		"MeanSquaredError":      math.Float64bits(MeanSquaredError(pred, d.Y)),
		"PermutationImportance": h.Sum64(),
	}
	want := map[string]uint64{
		"OOBScore":              0x3fd680710b94fbc8,
		"R2":                    0x3fed1791820ea6cf,
		"MeanSquaredError":      0x4080d6ee7068880a,
		"PermutationImportance": 0x437febc6c83a3e1d,
	}
	for k, v := range got {
		if w := want[k]; v != w {
			t.Errorf("%s: bits %#x, want %#x (amd64's)", k, v, w)
		}
	}
}
