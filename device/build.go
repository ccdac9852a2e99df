package device

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
)

// Build describes the running binary; its JSON is that of `gotrain
// version --json`.
type Build struct {
	// Version is the module version, or "(devel)" for a source build.
	Version string `json:"version"`
	// Go is the Go release the binary was built with.
	Go string `json:"go"`
	// OSArch is GOOS/GOARCH.
	OSArch string `json:"os_arch"`
	// Build says whether the binary can load PJRT plugins (an XLA-capable
	// cgo build) or is pure Go (built with -tags noxla).
	Build string `json:"build"`
}

// BuildInfo returns the description of the running binary.
func BuildInfo() Build {
	b := Build{Version: "(devel)", Go: runtime.Version(), OSArch: runtime.GOOS + "/" + runtime.GOARCH,
		Build: "xla-capable (cgo, PJRT plugins loaded at run time)"}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
		b.Version = bi.Main.Version
	}
	if !xlaCompiled {
		b.Build = "pure Go (noxla)"
	}
	return b
}

// WriteText writes b as one line: gotrain VERSION (GO, OS/ARCH, BUILD).
func (b Build) WriteText(w io.Writer) error {
	_, err := fmt.Fprintf(w, "gotrain %s (%s, %s, %s)\n", b.Version, b.Go, b.OSArch, b.Build)
	return err
}
