package runner

import (
	"slices"
	"testing"

	"github.com/matrixgen/matrixgen"
)

// TestGiveHardware: a typed hardware value replaces what was detected and
// is recorded as given; one that says what detection found is not.
func TestGiveHardware(t *testing.T) {
	detected := matrixgen.Hardware{Type: "Discrete GPU", GPU: "H200", GPUCount: 1, VRAMGB: 141, CPU: "AMD EPYC 9454", OS: "linux"}
	for _, tt := range []struct {
		name      string
		from      matrixgen.Hardware
		typed     Describe
		wantGiven []string
		wantGPU   string
	}{
		{"nothing typed", detected, Describe{}, nil, "H200"},
		{"the same, spelt as nvidia-smi does", detected, Describe{GPU: "NVIDIA H200", VRAMGB: 141, OS: "Linux"}, nil, "H200"},
		{"another GPU", detected, Describe{GPU: "RTX PRO 6000", VRAMGB: 96}, []string{"gpu", "vram_gb"}, "RTX PRO 6000"},
		{"on a machine without a GPU", matrixgen.Hardware{Type: "CPU", CPU: "EPYC", OS: "linux"},
			Describe{HardwareType: "Discrete GPU", GPU: "RTX PRO 6000", GPUCount: 2, VRAMGB: 96, CPU: "Xeon", OS: "Ubuntu 24.04"},
			[]string{"type", "gpu", "gpu_count", "vram_gb", "cpu", "os"}, "RTX PRO 6000"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h := tt.from
			giveHardware(&h, tt.typed)
			if !slices.Equal(h.Given, tt.wantGiven) || h.GPU != tt.wantGPU {
				t.Errorf("given %v, GPU %q; want %v, %q", h.Given, h.GPU, tt.wantGiven, tt.wantGPU)
			}
			checked := matrixgen.Run{Schema: matrixgen.SchemaVersion, Hardware: h,
				Tool: matrixgen.Tool{Name: "t"}, Engine: matrixgen.Engine{Name: "e"}, Model: matrixgen.Model{Name: "m"}}
			if problems := checked.Validate(); len(problems) > 0 {
				t.Errorf("the run does not validate: %v", problems)
			}
		})
	}
}
