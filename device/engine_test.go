package device

import (
	"errors"
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
