package device

import (
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// TestReportWriteText checks the text of `gotrain devices`: the host, the
// missing XLA, the table (descriptions, reasons on one line, shortened),
// the selection and the verification table.
func TestReportWriteText(t *testing.T) {
	d := Device{Name: "cpu", Kind: Native, Class: "cpu"}
	r := &Report{
		Host:      "test host",
		Inventory: Inventory{NoXLAReason: "built with -tags noxla"},
		Devices: []Entry{
			{Name: "cpu", Engine: Native, Class: "cpu", Available: true, Description: "native Go", Device: &d},
			{Name: "gpu", Engine: XLAKind, Class: "gpu", Reason: "no plugin\n" + strings.Repeat("x", 200)},
		},
		Selected: &Resolution{RequestedText: "auto", Device: d,
			Attempts: []Attempt{{Candidate: "gpu", Reason: "no plugin"}, {Candidate: "cpu", OK: true}}},
		Verify: []VerifyResult{
			{Device: "cpu", OK: true, RelError: 3.5e-7, FirstMS: 1.25, MedianMS: 0.0375, Repeats: 10},
			{Device: "go", Err: "boom\nbang", RelError: 1, FirstMS: 2, MedianMS: 3, Repeats: 1},
		},
	}
	var b strings.Builder
	if err := r.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	want := `host: test host
xla: built with -tags noxla

DEVICE  ENGINE  CLASS  STATUS       DETAIL
cpu     native  cpu    available    native Go
gpu     xla     gpu    unavailable  no plugin ` + strings.Repeat("x", 147) + `...

selected: device auto chose cpu (rejected gpu: no plugin)

VERIFY  RESULT             REL ERROR  FIRST CALL ms  MEDIAN ms
cpu     verified           3.50e-07   1.250          0.037 (n=10)
go      FAILED: boom bang  1.00e+00   2.000          3.000 (n=1)
`
	if got := b.String(); got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
}

// TestReportAvailableVerifyAll checks that the available devices are the
// table's usable ones and that VerifyAll records every result and counts
// the failures in its error.
func TestReportAvailableVerifyAll(t *testing.T) {
	cpu := Device{Name: "cpu", Kind: Native, Class: "cpu"}
	bad := Device{Name: "xla:nothere", Kind: XLAKind, Class: "gpu", Plugin: &Plugin{Name: "nothere", Path: "/nonexistent/pjrt_c_api_nothere_plugin.so"}}
	r := &Report{Devices: []Entry{
		{Name: "cpu", Available: true, Device: &cpu},
		{Name: "gpu", Reason: "no plugin"},
	}}
	if got := r.Available(); len(got) != 1 || got[0].Name != "cpu" {
		t.Fatalf("Available() = %+v, want [cpu]", got)
	}
	if err := r.VerifyAll([]Device{cpu}, 1); err != nil || len(r.Verify) != 1 || !r.Verify[0].OK {
		t.Fatalf("VerifyAll(cpu) = %v, results %+v", err, r.Verify)
	}
	err := r.VerifyAll([]Device{bad, cpu}, 1)
	if err == nil || !strings.Contains(err.Error(), "1 device(s) failed") || len(r.Verify) != 3 || r.Verify[1].OK {
		t.Errorf("VerifyAll(bad, cpu) = %v, results %+v", err, r.Verify)
	}
}

// TestSurvey checks the report of `gotrain devices`: the device table of
// the inventory, the selection and which devices are verified, and the
// errors of a selection and of a failed verification.
func TestSurvey(t *testing.T) {
	none := Inventory{XLACompiled: true}
	// A CUDA plugin that discovery saw with one device but that cannot be
	// loaded: selecting gpu works, verifying it fails.
	broken := Inventory{XLACompiled: true, Plugins: []Plugin{{
		Name: "cuda", Path: "/nonexistent/pjrt_c_api_cuda_plugin.so", Probed: true,
		Devices: []XLADevice{{Index: 0, Description: "gpu 0"}},
	}}}
	tests := []struct {
		name     string
		opts     SurveyOptions
		selected string   // the selected device's name, "" for none
		fellBack bool     // the selection fell back
		verified []string // the devices verified, in order
		want     string   // the error, or ""
		noReport bool     // the error comes without a report
	}{
		{name: "table only", opts: SurveyOptions{Inventory: &none}},
		{name: "verify all", opts: SurveyOptions{Inventory: &none, Verify: true, Repeats: 1}, verified: []string{"cpu", "go"}},
		{name: "select cpu and verify it", opts: SurveyOptions{Inventory: &none, Select: &Request{Device: "cpu"}, Verify: true, Repeats: 1},
			selected: "cpu", verified: []string{"cpu"}},
		{name: "select go", opts: SurveyOptions{Inventory: &none, Select: &Request{Device: "go"}}, selected: "go"},
		{name: "select auto", opts: SurveyOptions{Inventory: &none, Select: &Request{Device: "auto", PreferNative: true}}, selected: "cpu"},
		{name: "gpu unavailable", opts: SurveyOptions{Inventory: &none, Select: &Request{Device: "gpu"}, Verify: true, Repeats: 1},
			want: "device: requested device is not available: gpu", noReport: true},
		{name: "gpu falls back", opts: SurveyOptions{Inventory: &none, Select: &Request{Device: "gpu", Fallback: true}, Verify: true, Repeats: 1},
			selected: "cpu", fellBack: true, verified: []string{"cpu"}},
		{name: "invalid device", opts: SurveyOptions{Inventory: &none, Select: &Request{Device: "bogus"}}, want: "device: invalid device", noReport: true},
		{name: "verification fails", opts: SurveyOptions{Inventory: &broken, Select: &Request{Device: "gpu"}, Verify: true, Repeats: 1},
			selected: "xla:cuda:0", verified: []string{"xla:cuda:0"}, want: "1 device(s) failed verification"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rep, err := Survey(tt.opts)
			if tt.want == "" && err != nil || tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)) {
				t.Fatalf("err = %v, want %q", err, tt.want)
			}
			if tt.noReport {
				if rep != nil || !errors.Is(err, ErrUnavailable) && !strings.Contains(err.Error(), "invalid") {
					t.Errorf("report %+v with the selection's error %v, want none", rep, err)
				}
				return
			}
			if rep == nil {
				t.Fatal("no report")
			}
			if rep.Host != HostInfo() || !reflect.DeepEqual(rep.Devices, List(*tt.opts.Inventory)) {
				t.Errorf("host %q, devices %+v; want the inventory's table", rep.Host, rep.Devices)
			}
			switch s := rep.Selected; {
			case tt.selected == "" && s != nil:
				t.Errorf("selected %+v, want none", s)
			case tt.selected != "" && (s == nil || s.Device.Name != tt.selected || s.FellBack != tt.fellBack):
				t.Errorf("selected %+v, want %s (fell back: %v)", s, tt.selected, tt.fellBack)
			}
			var verified []string
			for _, v := range rep.Verify {
				verified = append(verified, v.Device)
			}
			if !slices.Equal(verified, tt.verified) {
				t.Errorf("verified %v, want %v", verified, tt.verified)
			}
		})
	}
}
