package device_test

import (
	"errors"
	"fmt"

	"github.com/gotrain/gotrain/device"
)

// Select turns a --device value into an engine; the engine opens the GoMLX
// backend (here GoMLX's pure-Go simplego) and says where the work runs.
func ExampleSelect() {
	e, err := device.Select(device.Request{Device: "go"})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer e.Close()
	b, err := e.Backend()
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(e.Name(), e.Native(), e.Accelerator(), b.Name())
	// Output: go false false SimpleGo (go)
}

// A request a machine cannot meet is an error with every reason, never a
// silent fall back. Here the machine has no CUDA plugin.
func ExampleSelect_unavailable() {
	inv := device.Inventory{XLACompiled: true, SearchPaths: []string{"/opt/plugins"}}
	_, err := device.Select(device.Request{Device: "gpu", Inventory: &inv})
	var u *device.UnavailableError
	fmt.Println(errors.Is(err, device.ErrUnavailable), errors.As(err, &u))
	fmt.Println(u.Resolution.Attempts[0].Candidate, "rejected:", u.Resolution.Attempts[0].Reason)

	// With Fallback it continues on the next best device and says why.
	e, err := device.Select(device.Request{Device: "gpu", Fallback: true, Inventory: &inv})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer e.Close()
	fmt.Println(e.Name(), e.Native())
	// Output:
	// true true
	// gpu rejected: no CUDA PJRT plugin found in /opt/plugins
	// cpu true
}

// A workload that runs only on the CPU says so with Accept: an explicit
// request for another device is refused with the workload's reason.
func ExampleRequest_accept() {
	cpuOnly := func(d device.Device) error {
		if d.Kind != device.Native {
			return errors.New("this workload runs on the CPU path only")
		}
		return nil
	}
	_, err := device.Select(device.Request{Device: "go", Accept: cpuOnly})
	fmt.Println(err)
	// Output: device: requested device is not available: go: this workload runs on the CPU path only (hint: run `gotrain devices` to see what is available)
}
