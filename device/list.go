package device

import "fmt"

// Entry is one row of the device table.
type Entry struct {
	// Name is the --device value that selects this row.
	Name string `json:"name"`
	// Engine is the engine that would run work ("native", "go", "xla").
	Engine Kind `json:"engine"`
	// Class is "cpu", "gpu" or "tpu".
	Class string `json:"class"`
	// Available is true when the device can be used.
	Available bool `json:"available"`
	// Reason says why an unavailable device cannot be used.
	Reason string `json:"reason,omitempty"`
	// Description describes the device.
	Description string `json:"description,omitempty"`
	// Device is the resolved device, for available rows.
	Device *Device `json:"-"`
}

// List returns a row for every backend and device gotrain knows of: the native
// CPU path, simplego, each device of each PJRT plugin found, and a row with the
// reason for each of GPU, TPU and XLA CPU that is not available.
func List(inv Inventory) []Entry {
	var out []Entry
	add := func(spec Spec, class string) {
		d, reason := check(spec, inv)
		e := Entry{Name: spec.String(), Class: class, Available: reason == "", Reason: reason}
		if reason == "" {
			e.Engine, e.Description, e.Device = d.Kind, d.Description, &d
		} else if spec.Kind == CPU {
			e.Engine = Native
		} else {
			e.Engine = XLAKind
		}
		out = append(out, e)
	}
	add(Spec{Kind: CPU, Index: AnyIndex}, "cpu")
	add(Spec{Kind: Go, Index: AnyIndex}, "cpu")
	classes := map[string]bool{}
	for _, p := range inv.Plugins {
		classes[p.Class()] = true
		if !inv.XLACompiled || p.Err != "" || !p.Probed || len(p.Devices) == 0 {
			add(Spec{Kind: XLA, Plugin: p.Name, Index: AnyIndex}, p.Class())
			continue
		}
		for i := range p.Devices {
			add(Spec{Kind: XLA, Plugin: p.Name, Index: i}, p.Class())
		}
	}
	for _, c := range []struct {
		class string
		spec  Spec
	}{
		{"gpu", Spec{Kind: GPU, Plugin: "cuda", Index: AnyIndex}},
		{"tpu", Spec{Kind: TPU, Plugin: "tpu", Index: AnyIndex}},
		{"cpu", Spec{Kind: XLA, Plugin: "cpu", Index: AnyIndex}},
	} {
		if c.class == "cpu" {
			found := false
			for _, p := range inv.Plugins {
				found = found || p.Class() == "cpu"
			}
			if found {
				continue
			}
		} else if classes[c.class] {
			continue
		}
		add(c.spec, c.class)
	}
	return out
}

// String formats an entry for logs.
func (e Entry) String() string {
	if e.Available {
		return fmt.Sprintf("%s: available (%s)", e.Name, e.Description)
	}
	return fmt.Sprintf("%s: unavailable: %s", e.Name, e.Reason)
}
