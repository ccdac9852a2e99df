package device

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestPJRTAPIMatchesGoXLAHeader reads PJRT_API_MAJOR and PJRT_API_MINOR in
// the pjrt_c_api.h of the go-xla module this build uses, and its version,
// so that upgrading go-xla fails here until PJRTAPIMajor, PJRTAPIMinor and
// PJRTLoader say what the new loader speaks.
func TestPJRTAPIMatchesGoXLAHeader(t *testing.T) {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Version}} {{.Dir}}", "github.com/gomlx/go-xla").Output()
	if err != nil {
		t.Skipf("go list -m github.com/gomlx/go-xla: %v", err)
	}
	version, dir, _ := strings.Cut(strings.TrimSpace(string(out)), " ")
	if want := "go-xla " + version; PJRTLoader != want {
		t.Errorf("PJRTLoader = %q, but the build uses %s", PJRTLoader, want)
	}
	header, err := os.ReadFile(filepath.Join(dir, "pkg", "pjrt", "pjrt_c_api.h"))
	if err != nil {
		t.Skipf("go-xla's header: %v", err)
	}
	for name, want := range map[string]int{"PJRT_API_MAJOR": PJRTAPIMajor, "PJRT_API_MINOR": PJRTAPIMinor} {
		m := regexp.MustCompile(`(?m)^#define ` + name + ` (\d+)$`).FindSubmatch(header)
		if m == nil {
			t.Errorf("%s not defined in go-xla's pjrt_c_api.h", name)
			continue
		}
		if got, _ := strconv.Atoi(string(m[1])); got != want {
			t.Errorf("go-xla %s's header defines %s %d; device says %d", version, name, got, want)
		}
	}
}
