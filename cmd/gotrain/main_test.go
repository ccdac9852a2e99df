package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/gotrain/gotrain/device"
)

// run executes gotrain with args and returns stdout, stderr and the error.
func run(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	t.Setenv("PJRT_PLUGIN_LIBRARY_PATH", t.TempDir()) // no plugins, whatever the machine has
	var out, errb bytes.Buffer
	cmd := newRootCmd()
	cmd.SetArgs(args)
	cmd.SetOut(&out)
	cmd.SetErr(&errb)
	err := cmd.Execute()
	return out.String(), errb.String(), err
}

func TestDevicesVerify(t *testing.T) {
	out, _, err := run(t, "devices", "--verify", "--repeats", "2")
	if err != nil {
		t.Fatalf("devices --verify: %v\n%s", err, out)
	}
	for _, want := range []string{"cpu", "go", "verified", "unavailable"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

func TestDevicesVerifyJSON(t *testing.T) {
	out, _, err := run(t, "--json", "devices", "--verify", "--repeats", "1")
	if err != nil {
		t.Fatal(err)
	}
	var rep devicesReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("bad JSON: %v\n%s", err, out)
	}
	verified := map[string]bool{}
	for _, v := range rep.Verify {
		verified[v.Device] = v.OK
	}
	if !verified["cpu"] || !verified["go"] {
		t.Errorf("cpu and go not verified: %+v", rep.Verify)
	}
	for _, e := range rep.Devices {
		if e.Name == "xla:cpu" && (e.Available || e.Reason == "") {
			t.Errorf("xla:cpu should be unavailable with a reason: %+v", e)
		}
	}
}

func TestDeviceGPUWithoutGPUFails(t *testing.T) {
	_, _, err := run(t, "--device", "gpu", "devices", "--verify")
	if err == nil {
		t.Fatal("--device gpu succeeded on a machine without plugins")
	}
	if !errors.Is(err, device.ErrUnavailable) || !strings.Contains(err.Error(), "--fallback") {
		t.Errorf("error lacks reason or hint: %v", err)
	}
}

func TestDeviceGPUFallback(t *testing.T) {
	out, stderr, err := run(t, "--device", "gpu", "--fallback", "devices", "--verify", "--repeats", "1")
	if err != nil {
		t.Fatalf("--fallback: %v", err)
	}
	if n := strings.Count(stderr, "warning:"); n != 1 || !strings.Contains(stderr, "falling back to cpu") {
		t.Errorf("want one warning line naming the fallback, got %q", stderr)
	}
	if !strings.Contains(out, "cpu     verified") && !strings.Contains(out, "verified") {
		t.Errorf("cpu not verified:\n%s", out)
	}
}

func TestInvalidDevice(t *testing.T) {
	_, _, err := run(t, "--device", "gpu:x", "devices")
	if err == nil || !strings.Contains(err.Error(), device.ValidForms) {
		t.Errorf("err = %v, want the valid forms listed", err)
	}
}
