// Package pjrttest builds fake PJRT plugins and fake shared libraries with
// the C compiler, for the tests of plugin discovery, loading and version
// checks on machines without a GPU or a real plugin.
//
// A fake plugin is compiled against the PJRT C API header of the go-xla
// module gotrain builds with (found in the module cache), so its PJRT_Api
// table has the layout GoMLX's loader reads. It reports the PJRT C API
// version it is told to, implements what the loader calls while loading a
// plugin (PJRT_Plugin_Initialize, PJRT_Plugin_Attributes and the PJRT_Error
// functions) and fails PJRT_Client_Create with an error carrying
// ClientError, so that loading it goes all the way through GoMLX and ends in
// an ordinary error. Fake libraries export one function and may depend on
// other fake libraries: their DT_NEEDED entries name those by soname, with
// no RUNPATH, as NVIDIA's pip libraries are named by a plugin.
package pjrttest

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/gotrain/gotrain/internal/atomicfile"
)

// ClientError is the message of the error a fake plugin's
// PJRT_Client_Create returns.
const ClientError = "gotrain fake PJRT plugin: PJRT_Client_Create is not implemented"

// CC returns the C compiler to build with (gcc, else cc), or an
// error when there is none.
func CC() (string, error) {
	for _, name := range []string{"gcc", "cc"} {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
	}
	return "", errors.New("pjrttest: no C compiler (gcc or cc) on PATH")
}

// PluginTools returns an error, to skip on, when fake plugins cannot be
// built here: there is no C compiler, or no go command to find go-xla's
// PJRT C API header with (a machine that runs test binaries built
// elsewhere, as scripts/gpu-verify.sh does on a GPU host).
func PluginTools() error {
	if _, err := CC(); err != nil {
		return err
	}
	if _, err := exec.LookPath("go"); err != nil {
		return errors.New("pjrttest: no go command on PATH to find go-xla's pjrt_c_api.h with")
	}
	return nil
}

// Library describes a fake shared library to build.
type Library struct {
	// Path is the file to write.
	Path string
	// Soname is its DT_SONAME ("" for none).
	Soname string
	// Needs are the paths of libraries built before, which it is linked
	// against: each becomes a DT_NEEDED entry naming that library's soname.
	Needs []string
}

// BuildLibrary compiles a fake shared library.
func BuildLibrary(l Library) error {
	sym := "gotrain_fake_" + regexp.MustCompile(`[^A-Za-z0-9]`).ReplaceAllString(filepath.Base(l.Path), "_")
	return build(l.Path, l.Soname, fmt.Sprintf("int %s(void) { return 1; }\n", sym), "", l.Needs)
}

// Plugin describes a fake PJRT plugin to build.
type Plugin struct {
	// Path is the file to write.
	Path string
	// Major and Minor are the PJRT C API version its GetPjrtApi reports.
	Major, Minor int
	// Needs are the paths of libraries it is linked against (DT_NEEDED by
	// soname, no RUNPATH).
	Needs []string
	// HeaderDir is the folder of pjrt_c_api.h ("" finds go-xla's with
	// GoXLAHeaderDir).
	HeaderDir string
}

// BuildPlugin compiles a fake PJRT plugin.
func BuildPlugin(p Plugin) error {
	if p.HeaderDir == "" {
		dir, err := GoXLAHeaderDir()
		if err != nil {
			return err
		}
		p.HeaderDir = dir
	}
	src := fmt.Sprintf(pluginSource, ClientError, p.Major, p.Minor)
	return build(p.Path, "", src, p.HeaderDir, p.Needs)
}

// GoXLAHeaderDir returns go-xla's pkg/pjrt folder in the module cache,
// which holds pjrt_c_api.h, by asking `go list -m` from the current
// folder (a package folder of the module, in a test).
func GoXLAHeaderDir() (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, "go", "list", "-m", "-f", "{{.Dir}}", "github.com/gomlx/go-xla").Output()
	if err != nil {
		return "", fmt.Errorf("pjrttest: finding go-xla in the module cache: %w", err)
	}
	dir := filepath.Join(strings.TrimSpace(string(out)), "pkg", "pjrt")
	return dir, nil
}

// build writes src beside out and compiles it into the shared library out.
func build(out, soname, src, includeDir string, needs []string) error {
	cc, err := CC()
	if err != nil {
		return err
	}
	cfile := out + ".c"
	if err := atomicfile.WriteFile(cfile, []byte(src)); err != nil {
		return fmt.Errorf("pjrttest: writing %s: %w", cfile, err)
	}
	args := []string{"-shared", "-fPIC", "-O0", "-o", out, cfile}
	if includeDir != "" {
		args = append(args, "-I", includeDir)
	}
	if soname != "" {
		args = append(args, "-Wl,-soname,"+soname)
	}
	// DT_NEEDED entries for every library given, even unused (some
	// toolchains default to --as-needed); -rpath-link lets the linker
	// follow their own needs without writing a RUNPATH.
	args = append(args, "-Wl,--no-as-needed")
	for _, n := range needs {
		args = append(args, "-Wl,-rpath-link,"+filepath.Dir(n), n)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if msg, err := exec.CommandContext(ctx, cc, args...).CombinedOutput(); err != nil {
		return fmt.Errorf("pjrttest: %s %s: %w\n%s", cc, strings.Join(args, " "), err, msg)
	}
	return nil
}

// pluginSource is the C source of a fake plugin: ClientError, the major
// and the minor version go in.
const pluginSource = `#include <string.h>
#include "pjrt_c_api.h"

struct PJRT_Error { int unused; };
static struct PJRT_Error fake_error;
static const char fake_message[] = %q;

static void fake_error_destroy(PJRT_Error_Destroy_Args* args) { (void)args; }
static void fake_error_message(PJRT_Error_Message_Args* args) {
  args->message = fake_message;
  args->message_size = sizeof(fake_message) - 1;
}
static PJRT_Error* fake_error_get_code(PJRT_Error_GetCode_Args* args) {
  args->code = PJRT_Error_Code_UNIMPLEMENTED;
  return NULL;
}
static PJRT_Error* fake_plugin_initialize(PJRT_Plugin_Initialize_Args* args) { (void)args; return NULL; }
static PJRT_Error* fake_plugin_attributes(PJRT_Plugin_Attributes_Args* args) {
  args->attributes = NULL;
  args->num_attributes = 0;
  return NULL;
}
static PJRT_Error* fake_client_create(PJRT_Client_Create_Args* args) { (void)args; return &fake_error; }

static PJRT_Api api;

const PJRT_Api* GetPjrtApi(void) {
  memset(&api, 0, sizeof api);
  api.struct_size = PJRT_Api_STRUCT_SIZE;
  api.pjrt_api_version.struct_size = PJRT_Api_Version_STRUCT_SIZE;
  api.pjrt_api_version.major_version = %d;
  api.pjrt_api_version.minor_version = %d;
  api.PJRT_Error_Destroy = fake_error_destroy;
  api.PJRT_Error_Message = fake_error_message;
  api.PJRT_Error_GetCode = fake_error_get_code;
  api.PJRT_Plugin_Initialize = fake_plugin_initialize;
  api.PJRT_Plugin_Attributes = fake_plugin_attributes;
  api.PJRT_Client_Create = fake_client_create;
  return &api;
}
`
