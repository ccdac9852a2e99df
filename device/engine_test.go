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
