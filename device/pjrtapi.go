package device

import (
	"fmt"
	"strings"
)

// The PJRT C API version GoMLX's XLA loader was compiled for: go-xla
// v0.1.4's pkg/pjrt/pjrt_c_api.h defines PJRT_API_MAJOR 0 and
// PJRT_API_MINOR 83, and every call the loader makes is compiled against
// that header. The loader never compares it with the version a plugin
// reports, so gotrain reads the plugin's version itself before handing the
// plugin over (readPJRTAPI). TestPJRTAPIMatchesGoXLAHeader reads the header
// in the module cache, so that an upgrade of go-xla cannot leave these
// constants behind.
const (
	// PJRTAPIMajor is the loader's PJRT_API_MAJOR.
	PJRTAPIMajor = 0
	// PJRTAPIMinor is the loader's PJRT_API_MINOR.
	PJRTAPIMinor = 83
	// PJRTLoader names the loader those versions belong to, for messages.
	PJRTLoader = "go-xla v0.1.4"
)

// PJRTCompat says how a plugin's PJRT C API version compares with the
// loader's.
type PJRTCompat string

// The header's rules (pjrt_c_api.h, "Version"): the major version changes
// with any ABI-incompatible change (a method or argument deleted, fields
// rearranged); the minor version changes when fields are added, and an
// implementation stays compatible with older callers by reading the
// struct_size its callers pass. So a plugin with a newer minor version is
// built to serve the loader's older calls, while a plugin with an older
// minor version lacks entries of the function table the loader may call.
const (
	// PJRTMatch is the same major and minor version as the loader's.
	PJRTMatch PJRTCompat = "match"
	// PJRTNewerMinor is the same major and a newer minor version: the
	// header promises compatibility with older callers, so the plugin is
	// loaded, and the difference is reported.
	PJRTNewerMinor PJRTCompat = "newer_minor"
	// PJRTOlderMinor is the same major and an older minor version: the
	// loader may call entries the plugin does not have; not loaded.
	PJRTOlderMinor PJRTCompat = "older_minor"
	// PJRTMajorMismatch is another major version: ABI-incompatible; not
	// loaded.
	PJRTMajorMismatch PJRTCompat = "major_mismatch"
	// PJRTUnknown means the version could not be read.
	PJRTUnknown PJRTCompat = "unknown"
)

// ComparePJRTAPI compares a plugin's PJRT C API version with the loader's.
func ComparePJRTAPI(major, minor int) PJRTCompat {
	switch {
	case major != PJRTAPIMajor:
		return PJRTMajorMismatch
	case minor < PJRTAPIMinor:
		return PJRTOlderMinor
	case minor > PJRTAPIMinor:
		return PJRTNewerMinor
	}
	return PJRTMatch
}

// PJRTAPI is the PJRT C API version a plugin reports, as gotrain read it
// before loading the plugin (PJRT_Api.pjrt_api_version, from the plugin's
// GetPjrtApi).
type PJRTAPI struct {
	// Version is "MAJOR.MINOR", or "unknown".
	Version string `json:"version"`
	// Major and Minor are the numbers read (0 when unknown).
	Major int `json:"major"`
	Minor int `json:"minor"`
	// Loader is the version GoMLX's loader speaks, "MAJOR.MINOR".
	Loader string `json:"loader"`
	// Compat is how the two compare.
	Compat PJRTCompat `json:"compat"`
	// Err says why the version is unknown.
	Err string `json:"error,omitempty"`
}

// LoaderPJRTAPI is the loader's version, "0.83".
func LoaderPJRTAPI() string { return fmt.Sprintf("%d.%d", PJRTAPIMajor, PJRTAPIMinor) }

// NewPJRTAPI returns the record of a version read from a plugin.
func NewPJRTAPI(major, minor int) PJRTAPI {
	return PJRTAPI{Version: fmt.Sprintf("%d.%d", major, minor), Major: major, Minor: minor,
		Loader: LoaderPJRTAPI(), Compat: ComparePJRTAPI(major, minor)}
}

// unknownPJRTAPI is the record of a version that could not be read.
func unknownPJRTAPI(why string) PJRTAPI {
	return PJRTAPI{Version: "unknown", Loader: LoaderPJRTAPI(), Compat: PJRTUnknown, Err: why}
}

// Refused tells whether gotrain does not load a plugin of this version.
func (a PJRTAPI) Refused() bool { return a.Compat == PJRTOlderMinor || a.Compat == PJRTMajorMismatch }

// String describes the version against the loader's, for example "0.83
// (as the loader)" or "0.54 (loader 0.83: older, not loaded)".
func (a PJRTAPI) String() string {
	switch a.Compat {
	case PJRTMatch:
		return a.Version + " (as the loader)"
	case PJRTNewerMinor:
		return fmt.Sprintf("%s (loader %s: newer minor version, loaded)", a.Version, a.Loader)
	case PJRTOlderMinor:
		return fmt.Sprintf("%s (loader %s: older minor version, not loaded)", a.Version, a.Loader)
	case PJRTMajorMismatch:
		return fmt.Sprintf("%s (loader %s: other major version, not loaded)", a.Version, a.Loader)
	}
	if a.Err != "" {
		return "unknown (" + a.Err + ")"
	}
	return "unknown"
}

// PJRTAPIProblem says what is wrong with the plugin's PJRT C API version,
// with both versions: "" when it matches the loader's or is unknown.
func PJRTAPIProblem(p Plugin) string {
	a := p.PJRTAPI
	if a == nil {
		return ""
	}
	switch a.Compat {
	case PJRTMajorMismatch:
		return fmt.Sprintf("plugin %s speaks PJRT C API %s, gotrain's loader (%s) speaks %s: another major version is ABI-incompatible, so the plugin is not loaded (calling it could crash the process)", p.Name, a.Version, PJRTLoader, a.Loader)
	case PJRTOlderMinor:
		return fmt.Sprintf("plugin %s speaks PJRT C API %s, older than the %s gotrain's loader (%s) speaks: the loader may call functions the plugin does not have, so it is not loaded", p.Name, a.Version, a.Loader, PJRTLoader)
	case PJRTNewerMinor:
		return fmt.Sprintf("plugin %s speaks PJRT C API %s, newer than the %s gotrain's loader (%s) speaks: loaded, as the C API keeps newer minor versions compatible with older callers", p.Name, a.Version, a.Loader, PJRTLoader)
	}
	return ""
}

// PJRTAPIFix says how to get a plugin whose PJRT C API version the loader
// speaks, for a plugin whose version differs.
func PJRTAPIFix(p Plugin) string {
	want := LoaderPJRTAPI()
	var parts []string
	if p.Libs != nil {
		pkg := "jax-" + p.Name + "-pjrt" // jax-cuda12-pjrt
		parts = append(parts, fmt.Sprintf("in %s, install the %s release built for PJRT C API %s (`%s -m pip install '%s==VERSION'`, with the jax and jaxlib of the same release)", p.Libs.SitePackages, pkg, want, p.Libs.Interpreter(), pkg))
	}
	setup := "`gotrain setup xla`"
	if p.Class() == "gpu" {
		setup = "`gotrain setup xla --cuda`"
	}
	parts = append(parts,
		fmt.Sprintf("install go-xla's plugins, which are built for PJRT C API %s, with %s", want, setup),
		"pass a plugin built for it with --plugin FILE")
	fix := strings.Join(parts, "; or ")
	if p.PJRTAPI != nil && p.PJRTAPI.Compat == PJRTNewerMinor {
		fix = "if loading or running it fails or crashes: " + fix
	}
	return fix
}

// refusal is the load error of a plugin whose version gotrain does not
// load: the problem, then the fix.
func refusal(p Plugin) error {
	return fmt.Errorf("%s; fix: %s", PJRTAPIProblem(p), PJRTAPIFix(p))
}
