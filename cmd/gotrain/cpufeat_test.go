package main

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestUnknownGOTRAIN_CPURefused checks that gotrain refuses to start with
// a GOTRAIN_CPU value it does not know (the kernels would silently run as
// under generic) and starts with each known one.
func TestUnknownGOTRAIN_CPURefused(t *testing.T) {
	for _, c := range []struct {
		setting string
		ok      bool
	}{{"avx3", false}, {"generic", true}, {"avx2", true}, {"auto", true}} {
		cmd := exec.Command(os.Args[0], "version")
		cmd.Env = append(os.Environ(), childEnv+"=1", "GOTRAIN_CPU="+c.setting)
		out, err := cmd.CombinedOutput()
		if (err == nil) != c.ok {
			t.Errorf("GOTRAIN_CPU=%s gotrain version: err %v, want success %v\n%s", c.setting, err, c.ok, out)
		}
		if !c.ok && !strings.Contains(string(out), `GOTRAIN_CPU="avx3": unknown value`) {
			t.Errorf("GOTRAIN_CPU=%s: error does not name the variable and value:\n%s", c.setting, out)
		}
	}
}
