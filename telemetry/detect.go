package telemetry

import (
	"context"
	"fmt"
	"math"
	"os"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"

	"github.com/matrixgen/matrixgen"
)

// nvidia-smi's query mode (--format=csv,noheader,nounits: a line per GPU,
// "[N/A]" where it has no value) is documented by `nvidia-smi --help-query-gpu`.

// gpuInfoFields are what the hardware panel needs of each GPU.
const gpuInfoFields = "index,name,memory.total,driver_version,power.limit,power.default_limit,pcie.link.gen.current,pcie.link.width.current"

// gpuInfo is one GPU as nvidia-smi describes it.
type gpuInfo struct {
	index        int
	name         string
	memoryMiB    *float64
	driver       string
	powerLimit   *float64
	defaultLimit *float64
	pcieGen      *float64
	pcieWidth    *float64
}

// notReported is true for the values nvidia-smi prints where a GPU has none.
func notReported(v string) bool {
	return v == "" || strings.HasPrefix(v, "[") // [N/A], [Not Supported], [Unknown Error]
}

// csvFields splits one line of nvidia-smi's CSV.
func csvFields(line string) []string {
	f := strings.Split(strings.TrimSpace(line), ",")
	for i := range f {
		f[i] = strings.TrimSpace(f[i])
	}
	return f
}

// optNumber reads a number, or nothing for a value not reported.
func optNumber(v string) (*float64, error) {
	if notReported(v) {
		return nil, nil
	}
	n, err := strconv.ParseFloat(v, 64)
	if err != nil {
		return nil, fmt.Errorf("want a number, got %q", v)
	}
	return &n, nil
}

// parseGPUInfo reads the answer to the gpuInfoFields query.
func parseGPUInfo(text string) ([]gpuInfo, error) {
	var gpus []gpuInfo
	for i, line := range strings.Split(strings.TrimSpace(text), "\n") {
		f := csvFields(line)
		if len(f) != 8 {
			return nil, fmt.Errorf("nvidia-smi line %d: %d fields, want 8: %q", i+1, len(f), line)
		}
		idx, err := strconv.Atoi(f[0])
		if err != nil {
			return nil, fmt.Errorf("nvidia-smi line %d: index %q", i+1, f[0])
		}
		g := gpuInfo{index: idx, name: f[1], driver: f[3]}
		if notReported(g.driver) {
			g.driver = ""
		}
		numbers := slices.Concat(f[2:3], f[4:]) // the name and driver are text
		for j, dst := range []**float64{&g.memoryMiB, &g.powerLimit, &g.defaultLimit, &g.pcieGen, &g.pcieWidth} {
			v, err := optNumber(numbers[j])
			if err != nil {
				return nil, fmt.Errorf("nvidia-smi line %d: %v", i+1, err)
			}
			*dst = v
		}
		gpus = append(gpus, g)
	}
	return gpus, nil
}

var cudaVersion = regexp.MustCompile(`CUDA Version:\s*([0-9.]+)`)

// nvidiaSMI is the command for NVIDIA GPUs.
const nvidiaSMI = "nvidia-smi"

// NoTool, as the tool, asks nothing: the runner's tests in virtual time
// cannot wait on a process.
const NoTool = "-"

// Detect fills the hardware panel: CPU and kernel from /proc, the OS, and
// the GPUs from the tool, none where it is missing or does not answer.
func Detect(ctx context.Context, tool string) matrixgen.Hardware {
	h := matrixgen.Hardware{Type: "CPU", OS: runtime.GOOS}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for line := range strings.Lines(string(b)) {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				h.CPU = strings.TrimSpace(v)
				break
			}
		}
	}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		h.Kernel = strings.TrimSpace(string(b))
	}
	if tool == NoTool {
		return h
	}
	if isROCm(tool) {
		detectROCm(ctx, &h, tool)
		return h
	}
	out, err := askTool(ctx, tool, "--query-gpu="+gpuInfoFields, "--format=csv,noheader,nounits")
	if err != nil {
		return h
	}
	gpus, err := parseGPUInfo(string(out))
	if err != nil || len(gpus) == 0 {
		return h
	}
	describeGPUs(&h, gpus)
	if header, err := askTool(ctx, tool); err == nil {
		if m := cudaVersion.FindSubmatch(header); m != nil {
			h.CUDA = string(m[1])
		}
	}
	return h
}

// describeGPUs sets the panel's GPU fields from the first GPU, and the
// count of all; a box of mixed GPUs names them all.
func describeGPUs(h *matrixgen.Hardware, gpus []gpuInfo) {
	g := gpus[0]
	h.Type = "Discrete GPU"
	h.GPUCount = len(gpus)
	names := make([]string, len(gpus))
	for i, x := range gpus {
		names[i] = strings.TrimPrefix(x.name, "NVIDIA ")
	}
	h.GPU = strings.Join(slices.Compact(names), " + ")
	if g.memoryMiB != nil {
		// As the vendor states it: a "96 GB" card reports 97,887 MiB.
		h.VRAMGB = math.Round(*g.memoryMiB / 1024)
	}
	h.Driver = g.driver
	if g.powerLimit != nil {
		h.PowerLimitW = *g.powerLimit
	}
	if g.defaultLimit != nil {
		h.DefaultPowerLimitW = *g.defaultLimit
	}
	if g.pcieGen != nil && g.pcieWidth != nil {
		h.PCIe = fmt.Sprintf("Gen %g x%g", *g.pcieGen, *g.pcieWidth)
	}
}
