package device

import (
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
