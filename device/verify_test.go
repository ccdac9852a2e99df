package device

import "testing"

func TestVerifyCPUAndSimpleGo(t *testing.T) {
	inv := Discover(DiscoverOptions{SkipNVIDIA: true})
	for _, spec := range []string{"cpu", "go"} {
		res, err := resolve(mustSpec(t, spec), inv, Options{}, nil)
		if err != nil {
			t.Fatal(err)
		}
		r := Verify(res.Device, 3)
		if !r.OK || r.Err != "" {
			t.Errorf("%s: verification failed: %+v", spec, r)
		}
		if r.RelError > r.Tolerance || r.Repeats != 3 {
			t.Errorf("%s: rel error %g", spec, r.RelError)
		}
	}
}

func TestRelErrorDetectsWrongResult(t *testing.T) {
	a, b, want := verifyInputs()
	got := nativeCheck(a, b)
	if e := relError(got, want); e > verifyTolerance {
		t.Fatalf("correct result has rel error %g", e)
	}
	got[3] += 1
	if e := relError(got, want); e <= verifyTolerance {
		t.Errorf("corrupted result passes with rel error %g", e)
	}
}

// nativeCheck runs the check in plain Go float32 arithmetic.
func nativeCheck(a, b []float32) []float32 {
	c := make([]float32, verifyN)
	row := make([]float32, verifyN)
	for i := 0; i < verifyM; i++ {
		clear(row)
		for p := 0; p < verifyK; p++ {
			av := a[i*verifyK+p]
			for j, bv := range b[p*verifyN : (p+1)*verifyN] {
				row[j] += av * bv
			}
		}
		for j := range c {
			c[j] += row[j]
		}
	}
	return c
}
