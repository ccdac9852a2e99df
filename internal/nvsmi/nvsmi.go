// Package nvsmi reads the NVIDIA driver version and the GPUs from
// nvidia-smi. It is internal: package device re-exports what users need,
// and package train samples GPU use with it without depending on device.
package nvsmi

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// Info is what nvidia-smi reported.
type Info struct {
	// SMIPath is the nvidia-smi binary used, empty when none was found.
	SMIPath string `json:"smi_path,omitempty"`
	// Driver is the driver version.
	Driver string `json:"driver,omitempty"`
	// GPUs are the GPUs nvidia-smi listed.
	GPUs []GPU `json:"gpus,omitempty"`
	// Err says why no GPU information could be read.
	Err string `json:"error,omitempty"`
}

// GPU is one NVIDIA GPU as nvidia-smi sees it.
type GPU struct {
	Index         int    `json:"index"`
	Name          string `json:"name"`
	MemoryTotalMB int    `json:"memory_total_mib"`
	MemoryUsedMB  int    `json:"memory_used_mib"`
	UtilPercent   int    `json:"utilization_percent"`
}

// Query asks nvidia-smi for the driver version and the GPUs. It returns
// an Info with Err set when nvidia-smi is absent or fails.
func Query(ctx context.Context) Info {
	smi, err := exec.LookPath("nvidia-smi")
	if err != nil {
		info := Info{Err: "nvidia-smi not found on PATH (no NVIDIA driver installed?)"}
		if b, err := os.ReadFile("/proc/driver/nvidia/version"); err == nil {
			info.Err = "nvidia-smi not found on PATH, but a driver is loaded: " + strings.TrimSpace(firstLine(string(b)))
		}
		return info
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, smi,
		"--query-gpu=index,name,driver_version,memory.total,memory.used,utilization.gpu",
		"--format=csv,noheader,nounits").Output()
	info := Info{SMIPath: smi}
	if err != nil {
		info.Err = fmt.Sprintf("%s failed: %v", smi, err)
		return info
	}
	gpus, driver, err := Parse(string(out))
	if err != nil {
		info.Err = err.Error()
	}
	info.GPUs, info.Driver = gpus, driver
	return info
}

// Parse parses the CSV that nvidia-smi prints for
// --query-gpu=index,name,driver_version,memory.total,memory.used,utilization.gpu
// --format=csv,noheader,nounits.
func Parse(text string) (gpus []GPU, driver string, err error) {
	sc := bufio.NewScanner(strings.NewReader(text))
	line := 0
	for sc.Scan() {
		line++
		row := strings.TrimSpace(sc.Text())
		if row == "" {
			continue
		}
		f := strings.Split(row, ",")
		if len(f) != 6 {
			return gpus, driver, fmt.Errorf("nvidia-smi output line %d: want 6 fields, got %d: %q", line, len(f), row)
		}
		for i := range f {
			f[i] = strings.TrimSpace(f[i])
		}
		num := func(s string) int { n, _ := strconv.Atoi(s); return n } // "[N/A]" reads as 0
		idx, err := strconv.Atoi(f[0])
		if err != nil {
			return gpus, driver, fmt.Errorf("nvidia-smi output line %d: index %q: %w", line, f[0], err)
		}
		gpus = append(gpus, GPU{Index: idx, Name: f[1], MemoryTotalMB: num(f[3]), MemoryUsedMB: num(f[4]), UtilPercent: num(f[5])})
		driver = f[2]
	}
	return gpus, driver, nil
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return l
}
