package device

import (
	"errors"
	"strings"
	"testing"
)

var paths = []string{"/home/u/.local/lib/go-xla", "/usr/local/lib/go-xla"}

func invNoXLA() Inventory {
	return Inventory{XLACompiled: false, NoXLAReason: "this binary was built with -tags noxla (pure Go): it cannot load PJRT plugins", SearchPaths: paths}
}

func invEmpty() Inventory {
	return Inventory{XLACompiled: true, SearchPaths: paths, NVIDIA: NVIDIAInfo{Err: "nvidia-smi not found on PATH"}}
}

func invGPU(n int) Inventory {
	inv := invEmpty()
	inv.NVIDIA = NVIDIAInfo{Driver: "550.54", GPUs: []NVIDIAGPU{{Index: 0, Name: "NVIDIA H100"}}}
	p := Plugin{Name: "cuda", Path: "/usr/local/lib/go-xla/nvidia/pjrt_c_api_cuda_plugin.so", Probed: true}
	for i := range n {
		p.Devices = append(p.Devices, XLADevice{Index: i, Description: "NVIDIA H100"})
	}
	inv.Plugins = append(inv.Plugins, p)
	return inv
}

func invXLACPU() Inventory {
	inv := invEmpty()
	inv.Plugins = []Plugin{{Name: "cpu_v0.83.3", Path: "/usr/local/lib/go-xla/pjrt_c_api_cpu_v0.83.3_plugin.so", Probed: true, Devices: []XLADevice{{Index: 0, Description: "cpu"}}}}
	return inv
}

func mustSpec(t *testing.T, s string) Spec {
	t.Helper()
	spec, err := ParseSpec(s)
	if err != nil {
		t.Fatal(err)
	}
	return spec
}

func TestResolve(t *testing.T) {
	brokenCUDA := invEmpty()
	brokenCUDA.Plugins = []Plugin{{Name: "cuda", Path: "/x/pjrt_c_api_cuda_plugin.so", Probed: true, Err: "libcudart.so.12: cannot open shared object file"}}
	zeroCUDA := invEmpty()
	zeroCUDA.Plugins = []Plugin{{Name: "cuda", Path: "/x/pjrt_c_api_cuda_plugin.so", Probed: true}}
	hiddenCUDA := zeroCUDA
	hiddenCUDA.Env = map[string]string{"CUDA_VISIBLE_DEVICES": ""}

	tests := []struct {
		name     string
		spec     string
		inv      Inventory
		opts     Options
		want     string // device name chosen; "" means an error
		errHas   []string
		fellBack bool
		warnHas  string
	}{
		{name: "auto no xla build", spec: "auto", inv: invNoXLA(), want: "cpu"},
		{name: "auto nothing found", spec: "auto", inv: invEmpty(), want: "cpu"},
		{name: "auto gpu present", spec: "auto", inv: invGPU(2), want: "xla:cuda:0"},
		{name: "auto xla cpu before native", spec: "auto", inv: invXLACPU(), want: "xla:cpu_v0.83.3:0"},
		{name: "auto prefer native", spec: "auto", inv: invXLACPU(), opts: Options{PreferNative: true}, want: "cpu"},
		{name: "cpu always", spec: "cpu", inv: invNoXLA(), want: "cpu"},
		{name: "go always", spec: "go", inv: invNoXLA(), want: "go"},
		{name: "gpu present", spec: "gpu", inv: invGPU(1), want: "xla:cuda:0"},
		{name: "gpu:1 present", spec: "gpu:1", inv: invGPU(2), want: "xla:cuda:1"},
		{name: "cuda:1 present", spec: "cuda:1", inv: invGPU(2), want: "xla:cuda:1"},
		{name: "gpu:2 out of range", spec: "gpu:2", inv: invGPU(2), errHas: []string{"device 2 requested but plugin cuda has 2 device(s)"}},
		{name: "gpu absent", spec: "gpu", inv: invEmpty(), errHas: []string{"no CUDA PJRT plugin found in /home/u/.local/lib/go-xla:/usr/local/lib/go-xla", "nvidia-smi not found", "gotrain setup xla --cuda", "--fallback"}},
		{name: "gpu noxla build", spec: "gpu", inv: invNoXLA(), errHas: []string{"built with -tags noxla"}},
		{name: "gpu plugin broken", spec: "gpu", inv: brokenCUDA, errHas: []string{"present but failed to load", "libcudart.so.12"}},
		{name: "gpu plugin zero devices", spec: "gpu", inv: zeroCUDA, errHas: []string{"present but 0 devices"}},
		{name: "gpu hidden by env", spec: "gpu", inv: hiddenCUDA, errHas: []string{"CUDA_VISIBLE_DEVICES"}},
		{name: "tpu absent", spec: "tpu", inv: invEmpty(), errHas: []string{"no TPU PJRT plugin"}},
		{name: "xla:cpu versioned file", spec: "xla:cpu", inv: invXLACPU(), want: "xla:cpu_v0.83.3:0"},
		{name: "xla:cpu absent", spec: "xla:cpu", inv: invEmpty(), errHas: []string{`no "cpu" PJRT plugin found`}},
		{name: "gpu absent fallback", spec: "gpu", inv: invEmpty(), opts: Options{Fallback: true}, want: "cpu", fellBack: true, warnHas: "warning: --device gpu is not available (no CUDA PJRT plugin found"},
		{name: "gpu absent fallback to xla cpu", spec: "gpu", inv: invXLACPU(), opts: Options{Fallback: true}, want: "xla:cpu_v0.83.3:0", fellBack: true, warnHas: "falling back to xla:cpu_v0.83.3:0"},
		{name: "gpu:5 fallback to gpu", spec: "gpu:5", inv: invGPU(1), opts: Options{Fallback: true}, want: "xla:cuda:0", fellBack: true, warnHas: "device 5 requested"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := resolve(mustSpec(t, tt.spec), tt.inv, tt.opts, nil)
			if tt.want == "" {
				if err == nil {
					t.Fatalf("Resolve(%s) chose %s, want error", tt.spec, res.Device.Name)
				}
				if !errors.Is(err, ErrUnavailable) {
					t.Errorf("error %v does not wrap ErrUnavailable", err)
				}
				for _, h := range tt.errHas {
					if !strings.Contains(err.Error(), h) {
						t.Errorf("error %q does not contain %q", err, h)
					}
				}
				return
			}
			if err != nil {
				t.Fatalf("Resolve(%s): %v", tt.spec, err)
			}
			if res.Device.Name != tt.want {
				t.Errorf("chose %s, want %s (attempts %+v)", res.Device.Name, tt.want, res.Attempts)
			}
			if res.FellBack != tt.fellBack {
				t.Errorf("FellBack = %v, want %v", res.FellBack, tt.fellBack)
			}
			if tt.fellBack && !strings.Contains(res.Warning, tt.warnHas) {
				t.Errorf("warning %q does not contain %q", res.Warning, tt.warnHas)
			}
			if !tt.fellBack && res.Warning != "" {
				t.Errorf("unexpected warning %q", res.Warning)
			}
			last := res.Attempts[len(res.Attempts)-1]
			if !last.OK || last.Candidate == "" {
				t.Errorf("last attempt %+v is not the chosen one", last)
			}
			for _, a := range res.Attempts[:len(res.Attempts)-1] {
				if a.OK || a.Reason == "" {
					t.Errorf("rejected attempt %+v has no reason", a)
				}
			}
		})
	}
}

func TestAutoRecordsRejections(t *testing.T) {
	res, err := resolve(mustSpec(t, "auto"), invEmpty(), Options{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	sum := res.Summary()
	for _, h := range []string{"gpu: no CUDA PJRT plugin", "tpu: no TPU PJRT plugin", "xla:cpu: no \"cpu\" PJRT plugin", "chose cpu"} {
		if !strings.Contains(sum, h) {
			t.Errorf("summary %q lacks %q", sum, h)
		}
	}
}

func TestBackendConfig(t *testing.T) {
	res, err := resolve(mustSpec(t, "gpu"), invGPU(1), Options{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Device.BackendConfig(); !strings.HasPrefix(got, "xla:/usr/local/lib/go-xla/nvidia/pjrt_c_api_cuda_plugin.so") {
		t.Errorf("BackendConfig = %q", got)
	}
	if !res.Device.Accelerator() {
		t.Error("a CUDA device is an accelerator")
	}
	cpu, _ := resolve(mustSpec(t, "cpu"), invEmpty(), Options{}, nil)
	if cpu.Device.BackendConfig() != CPUConfig || cpu.Device.Accelerator() {
		t.Errorf("cpu device: config %q accelerator %v", cpu.Device.BackendConfig(), cpu.Device.Accelerator())
	}
}

func TestList(t *testing.T) {
	tests := []struct {
		name  string
		inv   Inventory
		avail []string
		unav  map[string]string
	}{
		{"noxla", invNoXLA(), []string{"cpu", "go"}, map[string]string{"gpu": "noxla", "tpu": "noxla", "xla:cpu": "noxla"}},
		{"empty", invEmpty(), []string{"cpu", "go"}, map[string]string{"gpu": "no CUDA PJRT plugin", "tpu": "no TPU", "xla:cpu": "no \"cpu\""}},
		{"gpu", invGPU(2), []string{"cpu", "go", "xla:cuda:0", "xla:cuda:1"}, map[string]string{"tpu": "no TPU", "xla:cpu": "no \"cpu\""}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := map[string]Entry{}
			for _, e := range List(tt.inv) {
				got[e.Name] = e
			}
			for _, n := range tt.avail {
				if e, ok := got[n]; !ok || !e.Available || e.Device == nil {
					t.Errorf("%s should be available: %+v", n, e)
				}
			}
			for n, why := range tt.unav {
				e, ok := got[n]
				if !ok || e.Available || !strings.Contains(e.Reason, why) {
					t.Errorf("%s should be unavailable because %q: %+v", n, why, e)
				}
			}
			if len(got) != len(tt.avail)+len(tt.unav) {
				t.Errorf("got %d rows, want %d: %v", len(got), len(tt.avail)+len(tt.unav), got)
			}
		})
	}
}
