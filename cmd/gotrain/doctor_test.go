package main

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/gotrain/gotrain/device"
	"github.com/gotrain/gotrain/doctor"
)

func TestDoctorAuto(t *testing.T) {
	out, _, err := run(t, "doctor", "--burst", "0")
	if err != nil {
		t.Fatalf("doctor: %v\n%s", err, out)
	}
	want := []string{
		"[ok]   build: XLA-capable build",
		"[warn] plugins: no PJRT plugins found",
		"       fix: install plugins with `gotrain setup xla`",
	}
	if !device.Discover(device.DiscoverOptions{SkipNVIDIA: true}).XLACompiled {
		want = []string{"[warn] build: pure-Go build (noxla)", "[skip] plugins: plugins not checked"}
	}
	for _, want := range append(want,
		"[warn] live: no accelerator: --device auto chose cpu",
		"       verify on cpu: ok",
		"no accelerator was exercised",
		"; --device auto resolved to cpu",
	) {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

func TestDoctorJSON(t *testing.T) {
	out, _, err := run(t, "--json", "--device", "go", "doctor")
	if err != nil {
		t.Fatalf("doctor --json: %v\n%s", err, out)
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal([]byte(out), &raw); err != nil {
		t.Fatalf("bad JSON: %v\n%s", err, out)
	}
	for _, k := range []string{"findings", "selected", "ok"} {
		if _, ok := raw[k]; !ok {
			t.Errorf("JSON lacks %q", k)
		}
	}
	var rep struct {
		Findings []doctor.Finding  `json:"findings"`
		Selected device.Resolution `json:"selected"`
		OK       bool              `json:"ok"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	if !rep.OK || rep.Selected.Device.Name != "go" || len(rep.Findings) != 12 {
		t.Errorf("report: ok %v, selected %q, %d findings", rep.OK, rep.Selected.Device.Name, len(rep.Findings))
	}
	for _, f := range rep.Findings {
		if f.ID == "" || f.Title == "" || f.Status == "" {
			t.Errorf("incomplete finding %+v", f)
		}
	}
}

func TestDoctorGPUWithoutGPUFails(t *testing.T) {
	if gpu := gpuHere(t); gpu != "" { // a GPU host: doctor finds it usable
		if out, _, err := runGPU(t, "--device", "gpu", "doctor", "--burst", "500ms"); err != nil || !regexp.MustCompile(`\[ok\]\s+live:`).MatchString(out) {
			t.Errorf("doctor --device gpu on a GPU host (%s): %v\n%s", gpu, err, out)
		}
	}
	out, _, err := run(t, "--device", "gpu", "doctor")
	if err == nil {
		t.Fatalf("doctor --device gpu succeeded on a machine without plugins:\n%s", out)
	}
	reason, failing := "no CUDA PJRT plugin found", "[fail] plugins:"
	if !device.Discover(device.DiscoverOptions{SkipNVIDIA: true}).XLACompiled {
		reason, failing = "built with -tags noxla", "[fail] build:"
	}
	for _, want := range []string{"--device gpu cannot be used", reason, "--fallback"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q: %v", want, err)
		}
	}
	for _, want := range []string{failing, "[fail] live: --device gpu cannot be used", "fix: "} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}

	out, _, err = run(t, "--json", "--device", "gpu", "doctor")
	var rep doctor.Report
	if err == nil || json.Unmarshal([]byte(out), &rep) != nil || rep.OK || rep.Selected != nil || rep.ResolveError == "" {
		t.Errorf("--json --device gpu: err %v, report %s", err, out)
	}

	_, _, err = run(t, "--device", "gpu", "--fallback", "doctor", "--burst", "0")
	if err == nil || !strings.Contains(err.Error(), "falling back to cpu") {
		t.Errorf("--fallback: err = %v, want a failure naming the fallback", err)
	}
}

func TestDoctorInvalidDevice(t *testing.T) {
	if _, _, err := run(t, "--device", "gpu:x", "doctor"); err == nil || !strings.Contains(err.Error(), device.ValidForms) {
		t.Errorf("err = %v, want the valid forms listed", err)
	}
}
