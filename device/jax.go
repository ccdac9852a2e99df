package device

import (
	"bufio"
	"context"
	"debug/elf"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"
)

// JAX's CUDA PJRT plugin, as the Python packages jax-cuda12-pjrt and
// jax-cuda13-pjrt install it:
//
//	<site-packages>/jax_plugins/xla_cuda12/xla_cuda_plugin.so
//	<site-packages>/nvidia/<package>/lib/lib*.so.*   (nvidia-*-cu12 wheels)
//	<site-packages>/nvidia/cuda_nvcc/{bin/ptxas,nvvm/libdevice}
//
// (CUDA 13 wheels put most libraries in nvidia/cu13/lib.) The plugin does
// not find those libraries by itself: JAX loads them from Python before it
// loads the plugin. gotrain does the same (preloadOrder, preloadLibraries).

// Where a plugin was found (Plugin.Source).
const (
	// SourceSearchPath is a plugin file in one of PluginSearchPaths.
	SourceSearchPath = "search_path"
	// SourceJAX is JAX's CUDA plugin in a Python environment's site-packages.
	SourceJAX = "jax"
	// SourceExplicit is the plugin file given explicitly
	// (DiscoverOptions.PluginFile, Request.PluginFile).
	SourceExplicit = "explicit"
)

// JAXPluginFile is the file name of JAX's CUDA PJRT plugin.
const JAXPluginFile = "xla_cuda_plugin.so"

var jaxPluginDirRE = regexp.MustCompile(`^xla_cuda(\d+)$`)

// JAXLayout tells whether path is JAX's CUDA plugin inside a Python
// environment (<site-packages>/jax_plugins/xla_cudaNN/xla_cuda_plugin.so)
// and returns that site-packages folder and the CUDA major version NN.
func JAXLayout(path string) (sitePackages, cuda string, ok bool) {
	if filepath.Base(path) != JAXPluginFile {
		return "", "", false
	}
	dir := filepath.Dir(path)
	m := jaxPluginDirRE.FindStringSubmatch(filepath.Base(dir))
	if m == nil || filepath.Base(filepath.Dir(dir)) != "jax_plugins" {
		return "", "", false
	}
	return filepath.Dir(filepath.Dir(dir)), m[1], true
}

// PluginLibs are the NVIDIA libraries of the Python environment a JAX CUDA
// plugin belongs to, and what gotrain did with them.
type PluginLibs struct {
	// SitePackages is the environment's site-packages folder.
	SitePackages string `json:"site_packages"`
	// Python is the environment's interpreter, when known.
	Python string `json:"python,omitempty"`
	// CUDA is the CUDA major version the plugin was built for ("12", "13").
	CUDA string `json:"cuda"`
	// NVIDIADir is <site-packages>/nvidia.
	NVIDIADir string `json:"nvidia_dir"`
	// Dirs are the library folders <site-packages>/nvidia/*/lib, in the
	// order they are searched (for CUDA 13, nvidia/cu13/lib first).
	Dirs []string `json:"dirs"`
	// Missing are the libraries (sonames) XLA needs for this CUDA version
	// that neither Dirs nor the LD_LIBRARY_PATH gotrain started with hold.
	Missing []string `json:"missing,omitempty"`
	// OnLDPath are those found only on LD_LIBRARY_PATH, as "soname (dir)".
	OnLDPath []string `json:"on_ld_library_path,omitempty"`
	// CUDADataDir is the folder XLA_FLAGS' --xla_gpu_cuda_data_dir is set
	// to (ptxas and libdevice): nvidia/cuda_nvcc, or nvidia/cu13 when it
	// holds them; "" when there is none.
	CUDADataDir string `json:"cuda_data_dir,omitempty"`
	// Preloaded are the libraries loaded before the plugin, in order.
	Preloaded []string `json:"preloaded,omitempty"`
	// PreloadErrors are the libraries that could not be loaded, with why.
	PreloadErrors []string `json:"preload_errors,omitempty"`
	// Conflicts are the libraries not loaded because this process already
	// loaded a library of the same soname from another folder (another
	// environment's plugin): the plugin is refused.
	Conflicts []string `json:"conflicts,omitempty"`
}

// Interpreter is the environment's interpreter to name in a command:
// Python, or python3 when it is not known.
func (l *PluginLibs) Interpreter() string {
	if l.Python != "" {
		return l.Python
	}
	return "python3"
}

// requiredLibs are the libraries XLA's CUDA backend needs to start, by
// CUDA major version: the runtime, cuBLAS/cuBLASLt, cuFFT, cuSOLVER,
// cuSPARSE and cuDNN, as the nvidia-*-cu12/-cu13 wheels name them.
var requiredLibs = map[string][]string{
	"12": {"libcudart.so.12", "libcublas.so.12", "libcublasLt.so.12", "libcufft.so.11", "libcusolver.so.11", "libcusparse.so.12", "libcudnn.so.9"},
	"13": {"libcudart.so.13", "libcublas.so.13", "libcublasLt.so.13", "libcufft.so.12", "libcusolver.so.12", "libcusparse.so.12", "libcudnn.so.9"},
}

// jaxPreload are the libraries JAX's plugin package loads before the
// plugin (jax_plugins/xla_cuda12/__init__.py, _load_nvidia_libraries), in
// its order, by CUDA major version; those absent are skipped.
var jaxPreload = map[string][]string{
	"12": {"libcudart.so.12", "libnvrtc.so.12", "libcublas.so.12", "libcublasLt.so.12", "libnccl.so.2", "libcupti.so.12", "libcusparse.so.12", "libcusolver.so.11", "libcufft.so.11", "libnvshmem_host.so.3", "libcudnn.so.9"},
	"13": {"libcudart.so.13", "libnvrtc.so.13", "libcublas.so.13", "libcublasLt.so.13", "libnccl.so.2", "libcupti.so.13", "libcusparse.so.12", "libcusolver.so.12", "libcufft.so.12", "libnvshmem_host.so.3", "libcudnn.so.9"},
}

// jaxLibs inspects the NVIDIA libraries of the environment at
// sitePackages for a plugin built for CUDA major version cuda. ldPath is
// LD_LIBRARY_PATH as gotrain started with it.
func jaxLibs(sitePackages, cuda, ldPath string) *PluginLibs {
	l := &PluginLibs{SitePackages: sitePackages, CUDA: cuda, NVIDIADir: filepath.Join(sitePackages, "nvidia")}
	matches, _ := filepath.Glob(filepath.Join(l.NVIDIADir, "*", "lib"))
	sort.Strings(matches)
	for _, d := range matches {
		if st, err := os.Stat(d); err == nil && st.IsDir() {
			l.Dirs = append(l.Dirs, d)
		}
	}
	// nvidia/cu13/lib holds CUDA 13's libraries; some sonames (libcusparse.so.12)
	// are also those of CUDA 12 packages, so each version looks in its own first.
	isCU13 := func(d string) bool { return filepath.Base(filepath.Dir(d)) == "cu13" }
	slices.SortStableFunc(l.Dirs, func(a, b string) int {
		pa, pb := isCU13(a) == (cuda == "13"), isCU13(b) == (cuda == "13")
		switch {
		case pa && !pb:
			return -1
		case pb && !pa:
			return 1
		}
		return 0
	})
	index := libIndex(l.Dirs)
	for _, so := range requiredLibs[cuda] {
		if _, ok := index[so]; ok {
			continue
		}
		if dir := findOnPath(so, ldPath); dir != "" {
			l.OnLDPath = append(l.OnLDPath, fmt.Sprintf("%s (%s)", so, dir))
			continue
		}
		l.Missing = append(l.Missing, so)
	}
	// ptxas and libdevice: nvidia-cuda-nvcc-cu12 installs nvidia/cuda_nvcc;
	// CUDA 13's wheels put them in nvidia/cu13.
	candidates := []string{"cuda_nvcc"}
	if cuda == "13" {
		candidates = []string{"cu13", "cuda_nvcc"}
	}
	for _, d := range candidates {
		dir := filepath.Join(l.NVIDIADir, d)
		if isDir(filepath.Join(dir, "nvvm")) || isFile(filepath.Join(dir, "bin", "ptxas")) || d == "cuda_nvcc" && isDir(dir) {
			l.CUDADataDir = dir
			break
		}
	}
	return l
}

// libIndex maps the file names of the shared libraries in dirs (the wheels
// name each file by its soname) to their paths; the first folder wins.
func libIndex(dirs []string) map[string]string {
	index := map[string]string{}
	for _, d := range dirs {
		entries, err := os.ReadDir(d)
		if err != nil {
			continue
		}
		for _, e := range entries {
			n := e.Name()
			if _, seen := index[n]; !seen && strings.HasPrefix(n, "lib") && strings.Contains(n, ".so") && !e.IsDir() {
				index[n] = filepath.Join(d, n)
			}
		}
	}
	return index
}

// findOnPath returns the folder of a colon-separated path list that holds
// the file name, or "".
func findOnPath(name, list string) string {
	for _, d := range strings.Split(list, ":") {
		if d != "" && filepath.IsAbs(d) && isFile(filepath.Join(d, name)) {
			return d
		}
	}
	return ""
}

func isDir(p string) bool  { st, err := os.Stat(p); return err == nil && st.IsDir() }
func isFile(p string) bool { st, err := os.Stat(p); return err == nil && !st.IsDir() }

// elfNeeded returns the DT_NEEDED entries of a shared library (nil when
// it cannot be read as ELF).
func elfNeeded(path string) []string {
	f, err := elf.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	libs, err := f.ImportedLibraries()
	if err != nil {
		return nil
	}
	return libs
}

// preloadOrder returns the libraries of l to load before the plugin at
// pluginPath, each after the libraries it needs: the ones JAX loads
// (jaxPreload) and the plugin's own DT_NEEDED entries found in l.Dirs,
// with what they need in turn, read from their ELF dynamic sections.
//
// Why load them at all: the plugin names its NVIDIA libraries by soname
// (libcublas.so.12), and the dynamic loader resolves a soname first among
// the libraries already loaded in the process, whatever flags they were
// loaded with, before searching folders. LD_LIBRARY_PATH cannot point it
// at site-packages instead: glibc reads LD_LIBRARY_PATH once, when the
// process starts, so setting it in a running gotrain changes nothing for
// dlopen. Loading each library by its full path first, dependencies
// first, is what JAX does from Python, and it works for the plugin and for
// the libraries XLA opens later by soname (cuDNN, cuFFT...).
func preloadOrder(l *PluginLibs, pluginPath string) []string {
	index := libIndex(l.Dirs)
	var order []string
	state := map[string]int{} // 1 visiting, 2 done
	var visit func(path string)
	visit = func(path string) {
		if state[path] != 0 {
			return // done, or a cycle: its members load in DFS order
		}
		state[path] = 1
		for _, dep := range elfNeeded(path) {
			if p, ok := index[dep]; ok {
				visit(p)
			}
		}
		state[path] = 2
		order = append(order, path)
	}
	for _, so := range append(slices.Clone(jaxPreload[l.CUDA]), elfNeeded(pluginPath)...) {
		if p, ok := index[so]; ok {
			visit(p)
		}
	}
	return order
}

// PythonEnv is one Python environment searched for JAX's CUDA plugin.
type PythonEnv struct {
	// From says how it was found: VIRTUAL_ENV, CONDA_PREFIX, python3 (on
	// PATH) or /usr/bin/python3.
	From string `json:"from"`
	// Python is the interpreter asked, or the environment's bin/python.
	Python string `json:"python,omitempty"`
	// SitePackages are its site-packages folders that exist.
	SitePackages []string `json:"site_packages"`
	// Plugins are the JAX CUDA plugin files found in them.
	Plugins []string `json:"plugins,omitempty"`
	// Err says why the interpreter could not be asked (not an error of
	// discovery: a machine without Python has no JAX plugin).
	Err string `json:"error,omitempty"`
}

// Python interpreters asked for their site-packages, and how long each may
// take (a slow shim or a broken interpreter must not hold discovery up).
var (
	pythonOnPath  = "python3"
	systemPython  = "/usr/bin/python3"
	pythonTimeout = 5 * time.Second
)

// sitePackagesScript prints the interpreter's site-packages folders, one a
// line, including those of a virtualenv without site.getsitepackages.
const sitePackagesScript = `import site, sys
paths = []
try:
    paths += site.getsitepackages()
except Exception:
    pass
try:
    paths.append(site.getusersitepackages())
except Exception:
    pass
paths += [p for p in sys.path if p.endswith(("site-packages", "dist-packages"))]
print("\n".join(paths))
`

// FindPythonEnvs lists the Python environments in use: $VIRTUAL_ENV and
// $CONDA_PREFIX when set, python3 on PATH and /usr/bin/python3 when it is
// another interpreter, each with its site-packages folders. Interpreters
// are asked (`python3 -c 'import site...'`) with a time limit; a missing or
// failing interpreter is recorded in its PythonEnv's Err.
func FindPythonEnvs(ctx context.Context) []PythonEnv {
	var envs []PythonEnv
	for _, name := range []string{"VIRTUAL_ENV", "CONDA_PREFIX"} {
		prefix := os.Getenv(name)
		if prefix == "" {
			continue
		}
		env := PythonEnv{From: name}
		if py := filepath.Join(prefix, "bin", "python"); isFile(py) {
			env.Python = py
		}
		for _, pattern := range []string{"lib/python3*/site-packages", "lib64/python3*/site-packages"} {
			m, _ := filepath.Glob(filepath.Join(prefix, pattern))
			sort.Strings(m)
			env.SitePackages = append(env.SitePackages, m...)
		}
		if len(env.SitePackages) == 0 {
			env.Err = fmt.Sprintf("%s=%s has no lib/python3*/site-packages", name, prefix)
		}
		envs = append(envs, env)
	}
	asked := []PythonEnv{{From: pythonOnPath}}
	if p, err := exec.LookPath(pythonOnPath); err != nil {
		asked[0].Err = "not found on PATH"
	} else {
		asked[0].Python = p
	}
	if isFile(systemPython) && !sameFile(systemPython, asked[0].Python) {
		asked = append(asked, PythonEnv{From: systemPython, Python: systemPython})
	}
	var wg sync.WaitGroup
	for i := range asked {
		if asked[i].Python == "" {
			continue
		}
		wg.Add(1)
		go func(e *PythonEnv) {
			defer wg.Done()
			e.SitePackages, e.Err = askSitePackages(ctx, e.Python)
		}(&asked[i])
	}
	wg.Wait()
	return append(envs, asked...)
}

// askSitePackages runs the interpreter to list its site-packages folders
// that exist.
func askSitePackages(ctx context.Context, python string) ([]string, string) {
	ctx, cancel := context.WithTimeout(ctx, pythonTimeout)
	defer cancel()
	out, err := exec.CommandContext(ctx, python, "-c", sitePackagesScript).Output()
	if ctx.Err() != nil {
		return nil, fmt.Sprintf("%s did not answer within %v", python, pythonTimeout)
	}
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) && len(ee.Stderr) > 0 {
			return nil, fmt.Sprintf("%s: %v: %s", python, err, firstLine(string(ee.Stderr)))
		}
		return nil, fmt.Sprintf("%s: %v", python, err)
	}
	var dirs []string
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	for sc.Scan() {
		d := strings.TrimSpace(sc.Text())
		if d != "" && filepath.IsAbs(d) && isDir(d) && !slices.Contains(dirs, d) {
			dirs = append(dirs, d)
		}
	}
	return dirs, ""
}

// sameFile tells whether two paths name the same file.
func sameFile(a, b string) bool {
	if a == "" || b == "" {
		return false
	}
	sa, err1 := os.Stat(a)
	sb, err2 := os.Stat(b)
	return err1 == nil && err2 == nil && os.SameFile(sa, sb)
}

// FindJAXPlugins lists JAX's CUDA plugins in the site-packages folders of
// envs, in order, and records in each PythonEnv the plugin files found
// there. A site-packages folder listed twice is searched once. The plugins
// are named cudaNN after their folder (jax_plugins/xla_cudaNN); Discover
// keeps the first plugin of each name.
func FindJAXPlugins(envs []PythonEnv) []Plugin {
	ldPath := os.Getenv("LD_LIBRARY_PATH")
	var out []Plugin
	searched := map[string]bool{}
	for i := range envs {
		for _, sp := range envs[i].SitePackages {
			key := sp
			if r, err := filepath.EvalSymlinks(sp); err == nil {
				key = r
			}
			if searched[key] {
				continue
			}
			searched[key] = true
			files, _ := filepath.Glob(filepath.Join(sp, "jax_plugins", "xla_cuda*", JAXPluginFile))
			sort.Strings(files)
			for _, f := range files {
				if _, _, ok := JAXLayout(f); !ok {
					continue
				}
				envs[i].Plugins = append(envs[i].Plugins, f)
				p := describePlugin(f, SourceJAX, ldPath)
				p.Libs.Python = envs[i].Python
				out = append(out, p)
			}
		}
	}
	return out
}

// describePlugin returns the plugin of a file: JAX's CUDA plugin (named
// cudaNN, with its environment's libraries), a file named as GoMLX names
// plugins, or any other file, named after its base name up to the first
// dot (libtpu.so is "libtpu").
func describePlugin(path, source, ldPath string) Plugin {
	p := Plugin{Path: path, Source: source}
	if sp, cuda, ok := JAXLayout(path); ok {
		p.Name = "cuda" + cuda
		p.Libs = jaxLibs(sp, cuda, ldPath)
		return p
	}
	if n := PluginNameFromFile(path); n != "" {
		p.Name = n
		return p
	}
	p.Name, _, _ = strings.Cut(filepath.Base(path), ".")
	return p
}

// ExplicitPlugin describes the plugin file given explicitly
// (DiscoverOptions.PluginFile): it must exist and be a file; a relative
// path is made absolute (GoMLX loads plugins by absolute path).
func ExplicitPlugin(path string) (Plugin, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return Plugin{}, fmt.Errorf("plugin file %s: %w", path, err)
	}
	st, err := os.Stat(abs)
	switch {
	case err != nil:
		return Plugin{}, fmt.Errorf("plugin file %s: %w", abs, err)
	case st.IsDir():
		return Plugin{}, fmt.Errorf("plugin file %s is a folder: give the plugin's .so file", abs)
	case strings.Contains(abs, ","):
		// GoMLX's backend configuration is "xla:<path>,<options>".
		return Plugin{}, fmt.Errorf("plugin file %s: its path holds a comma, which GoMLX's backend configuration cannot carry: link or copy it to a path without one", abs)
	}
	return describePlugin(abs, SourceExplicit, os.Getenv("LD_LIBRARY_PATH")), nil
}
