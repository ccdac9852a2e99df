package gctarget

import (
	"os"
	"runtime/debug"
	"testing"
)

func TestApply(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100)) // restore the test binary's
	for _, tc := range []struct {
		name  string
		gogc  string // "" unsets it
		start int    // the target before Apply
		want  int
	}{
		{"GOGC unset", "", 100, Percent},
		{"GOGC set", "200", 200, 200}, // the runtime read it at start; Apply keeps it
		{"GOGC=off", "off", -1, -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("GOGC", tc.gogc)
			if tc.gogc == "" {
				os.Unsetenv("GOGC")
			}
			debug.SetGCPercent(tc.start)
			if got := Apply(); got != tc.want {
				t.Errorf("Apply() = %d, want %d", got, tc.want)
			}
			if now := debug.SetGCPercent(100); now != tc.want {
				t.Errorf("target in force %d, want %d", now, tc.want)
			}
		})
	}
}
