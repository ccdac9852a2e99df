package train

import "testing"

func TestParseBatchSize(t *testing.T) {
	for _, tc := range []struct {
		in   string
		n    int
		auto bool
		err  string
	}{
		{"", 0, false, ""},
		{"64", 64, false, ""},
		{"auto", 0, true, ""},
		{"AUTO", 0, true, ""},
		{"0", 0, false, `BatchSize "0": want a positive integer or auto`},
		{"-3", 0, false, `BatchSize "-3": want a positive integer or auto`},
		{"many", 0, false, `BatchSize "many": want a positive integer or auto`},
	} {
		n, auto, err := ParseBatchSize(tc.in)
		if n != tc.n || auto != tc.auto || (err == nil) != (tc.err == "") || (err != nil && err.Error() != tc.err) {
			t.Errorf("ParseBatchSize(%q) = %d, %v, %v; want %d, %v, %q", tc.in, n, auto, err, tc.n, tc.auto, tc.err)
		}
	}
}
