//go:build ((linux && amd64) || darwin) && !noxla

package device

/*
#cgo linux LDFLAGS: -ldl
#include <dlfcn.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

// The head of PJRT_Api (pjrt_c_api.h): its size, the extension chain, then
// PJRT_Api_Version {struct_size, extension_start, major_version,
// minor_version}. These fields open every version of the struct.
typedef struct {
	size_t struct_size;
	void* extension_start;
	int major_version;
	int minor_version;
} gotrain_pjrt_api_version;

typedef struct {
	size_t struct_size;
	void* extension_start;
	gotrain_pjrt_api_version pjrt_api_version;
} gotrain_pjrt_api_head;

typedef const gotrain_pjrt_api_head* (*gotrain_get_pjrt_api)(void);

// gotrain_dlopen opens path with the flags GoMLX's loader uses, or copies
// dlerror's message into msg and returns NULL (dlerror's buffer belongs to
// the thread, so it is read here, on the same thread).
static void* gotrain_dlopen(const char* path, char* msg, size_t n) {
	dlerror();
	void* h = dlopen(path, RTLD_LAZY | RTLD_LOCAL);
	if (h == NULL) {
		const char* e = dlerror();
		snprintf(msg, n, "%s", e ? e : "dlopen failed");
	}
	return h;
}

// gotrain_pjrt_version calls the plugin's GetPjrtApi and reads the head of
// the PJRT_Api it returns: 0 when read, 1 without GetPjrtApi, 2 when it
// returns NULL, 3 when the struct is too small to hold the version.
static int gotrain_pjrt_version(void* h, size_t* api_size, size_t* version_size, int* major, int* minor) {
	dlerror();
	void* sym = dlsym(h, "GetPjrtApi");
	if (sym == NULL) {
		return 1;
	}
	const gotrain_pjrt_api_head* api = ((gotrain_get_pjrt_api)sym)();
	if (api == NULL) {
		return 2;
	}
	*api_size = api->struct_size;
	*version_size = api->pjrt_api_version.struct_size;
	if (api->struct_size < sizeof(gotrain_pjrt_api_head) || api->pjrt_api_version.struct_size < sizeof(gotrain_pjrt_api_version)) {
		return 3;
	}
	*major = api->pjrt_api_version.major_version;
	*minor = api->pjrt_api_version.minor_version;
	return 0;
}
*/
import "C"

import (
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"unsafe"
)

// handles keeps every library gotrain opened, by path. They are never
// closed: a preloaded library must stay loaded for the plugin to find it,
// and a plugin GoMLX then loads by the same path gets the same handle, so
// its static initialisers run once (XLA's plugins do not survive being
// unloaded and loaded again).
var (
	handlesMu sync.Mutex
	handles   = map[string]unsafe.Pointer{}
	// preloadedBy maps the file name (the soname, as the wheels name
	// them) of each library preloadLibraries loaded to its path.
	preloadedBy = map[string]string{}
)

// dlopenKeep opens the shared library at path (once per path) and keeps
// it open.
func dlopenKeep(path string) (unsafe.Pointer, error) {
	handlesMu.Lock()
	defer handlesMu.Unlock()
	if h, ok := handles[path]; ok {
		return h, nil
	}
	cpath := C.CString(path)
	defer C.free(unsafe.Pointer(cpath))
	var msg [512]C.char
	h := C.gotrain_dlopen(cpath, &msg[0], C.size_t(len(msg)))
	if h == nil {
		return nil, errors.New(C.GoString(&msg[0]))
	}
	handles[path] = h
	return h, nil
}

// preloadLibraries loads the NVIDIA libraries of a JAX plugin's
// environment, dependencies first (preloadOrder explains why), and
// records what was loaded and what could not be in l. A library that
// cannot be loaded is not an error here: the plugin's own load names the
// library it lacks.
//
// A library whose soname this process already loaded from another folder
// (another environment's plugin was prepared first) is not loaded: the
// dynamic loader would hand this plugin the copy loaded first, a library
// of another environment. It is recorded in l.Conflicts, and
// preparePlugin refuses the plugin.
func preloadLibraries(l *PluginLibs, pluginPath string) {
	l.Preloaded, l.PreloadErrors, l.Conflicts = nil, nil, nil
	for _, path := range preloadOrder(l, pluginPath) {
		so := filepath.Base(path)
		handlesMu.Lock()
		prev, seen := preloadedBy[so]
		handlesMu.Unlock()
		if seen && prev != path {
			l.Conflicts = append(l.Conflicts, fmt.Sprintf("%s is already loaded from %s", so, filepath.Dir(prev)))
			continue
		}
		if _, err := dlopenKeep(path); err != nil {
			l.PreloadErrors = append(l.PreloadErrors, firstLine(err.Error()))
			continue
		}
		handlesMu.Lock()
		preloadedBy[so] = path
		handlesMu.Unlock()
		l.Preloaded = append(l.Preloaded, path)
	}
}

// readPJRTAPI opens the plugin at path (kept open) and reads the PJRT C
// API version from the PJRT_Api its GetPjrtApi returns. An error means the
// plugin cannot be loaded or is not a PJRT plugin.
func readPJRTAPI(path string) (PJRTAPI, error) {
	h, err := dlopenKeep(path)
	if err != nil {
		return unknownPJRTAPI("cannot be loaded"), fmt.Errorf("loading %s: %w", path, err)
	}
	var apiSize, versionSize C.size_t
	var major, minor C.int
	switch C.gotrain_pjrt_version(h, &apiSize, &versionSize, &major, &minor) {
	case 1:
		return unknownPJRTAPI("no GetPjrtApi"), fmt.Errorf("%s does not export GetPjrtApi: it is not a PJRT plugin", path)
	case 2:
		return unknownPJRTAPI("GetPjrtApi returned NULL"), fmt.Errorf("%s: GetPjrtApi returned NULL", path)
	case 3:
		return unknownPJRTAPI("PJRT_Api too small"), fmt.Errorf("%s: GetPjrtApi returned a PJRT_Api of %d bytes with a version struct of %d bytes, too small to be one", path, apiSize, versionSize)
	}
	return NewPJRTAPI(int(major), int(minor)), nil
}
