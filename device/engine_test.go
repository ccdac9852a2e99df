package device

import (
	"errors"
	"strings"
	"testing"
)

func TestWithBackend(t *testing.T) {
	want := errors.New("no such device")
	if e, b, err := WithBackend(nil, want); e != nil || b != nil || err != want {
		t.Errorf("WithBackend(nil, err) = %v, %v, %v; want the error through", e, b, err)
	}
	e, err := Select(Request{Device: "go"})
	if err != nil {
		t.Fatal(err)
	}
	e.Close()
	if _, b, err := WithBackend(e, nil); b != nil || err == nil {
		t.Errorf("a closed engine opened a backend: %v, %v", b, err)
	}
	e, b, err := Open("go")
	if err != nil || b == nil || e.Name() != "go" {
		t.Fatalf("Open(go) = %v, %v, %v", e, b, err)
	}
	if again, _ := e.Backend(); again != b {
		t.Error("Backend opened a second backend")
	}
	e.Close()
}

// TestCloseAll checks that CloseAll closes every engine (a closed engine
// opens no backend) and skips nil ones.
func TestCloseAll(t *testing.T) {
	tests := []struct {
		name  string
		specs []string
		extra int // nil engines appended
	}{
		{name: "none"},
		{name: "one", specs: []string{"go"}},
		{name: "two and a nil", specs: []string{"cpu", "go"}, extra: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var es []*Engine
			if tt.specs != nil {
				var err error
				if es, err = SelectEach(tt.specs, Request{Inventory: &Inventory{}}); err != nil {
					t.Fatal(err)
				}
			}
			es = append(es, make([]*Engine, tt.extra)...)
			CloseAll(es)
			for _, e := range es {
				if e == nil {
					continue
				}
				if b, err := e.Backend(); b != nil || err == nil {
					t.Errorf("%s: a closed engine opened a backend: %v, %v", e.Name(), b, err)
				}
			}
		})
	}
}

// TestSelectTimed checks the engines a benchmark times: the CPU first,
// then --device when given (auto aside), else the list (all by default),
// without duplicates; a device that cannot be used is an error.
func TestSelectTimed(t *testing.T) {
	tests := []struct {
		spec, list string
		want       string // engine names, or the error's start
		err        bool
	}{
		{"", "", "cpu go", false},
		{"auto", "", "cpu go", false},
		{" AUTO ", "go", "cpu go", false},
		{"go", "cpu", "cpu go", false},
		{"", "cpu", "cpu", false},
		{"", "go, cpu", "cpu go", false},
		{"cpu", "", "cpu", false},
		{"gpu", "", "device: requested device is not available: gpu:", true},
		{"", "cpu,tpu", "device: requested device is not available: tpu:", true},
	}
	for _, tt := range tests {
		es, err := SelectTimed(tt.spec, tt.list, Request{Inventory: &Inventory{XLACompiled: true, NVIDIA: NVIDIAInfo{Err: "nvidia-smi not found on PATH"}}})
		if tt.err {
			if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
				t.Errorf("SelectTimed(%q, %q) = %v, want an error starting %q", tt.spec, tt.list, err, tt.want)
			}
			continue
		}
		if err != nil {
			t.Fatalf("SelectTimed(%q, %q): %v", tt.spec, tt.list, err)
		}
		var names []string
		for _, e := range es {
			names = append(names, e.Name())
		}
		if got := strings.Join(names, " "); got != tt.want {
			t.Errorf("SelectTimed(%q, %q) = %s, want %s", tt.spec, tt.list, got, tt.want)
		}
		CloseAll(es)
	}
}

// TestZeroInventoryHasNoAccelerator checks that an inventory without XLA
// and without a stated reason (the zero Inventory) offers no accelerator:
// only the native CPU and simplego are available.
func TestZeroInventoryHasNoAccelerator(t *testing.T) {
	for _, e := range List(Inventory{}) {
		if want := e.Name == "cpu" || e.Name == "go"; e.Available != want || (!want && e.Reason == "") {
			t.Errorf("%s: available %v (reason %q), want %v with a reason when not", e.Name, e.Available, e.Reason, want)
		}
	}
	if _, err := Select(Request{Device: "gpu", Inventory: &Inventory{}}); err == nil {
		t.Error("gpu selected from an inventory without XLA")
	}
}
