package runfile

import (
	"strings"
	"testing"
)

// TestHardwareGivenAndCacheMode: hardware.given names only the fields a
// person can give, each once, and sweep.cache_mode only the two modes;
// what is right decodes and says so.
func TestHardwareGivenAndCacheMode(t *testing.T) {
	for _, tt := range []struct {
		name, hardware, sweep, want string
	}{
		{"given", `{"gpu": "RTX 4090", "given": ["gpu", "vram_gb"]}`, ``, ""},
		{"every field given", `{"given": ["type", "gpu", "gpu_count", "vram_gb", "cpu", "os"]}`, ``, ""},
		{"unknown field", `{"given": ["gpu", "driver"]}`, ``, `hardware.given[1]: unknown "driver"`},
		{"named twice", `{"given": ["gpu", "cpu", "gpu"]}`, ``, `hardware.given[2]: "gpu" is named twice`},
		{"not a list", `{"given": "gpu"}`, ``, `hardware.given: want an array`},
		{"cache mode", `{}`, `, "cache_mode": "distinct"`, ""},
		{"unknown cache mode", `{}`, `, "cache_mode": "mixed"`, `sweep.cache_mode: unknown "mixed"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			doc := strings.Replace(minimal, `"hardware": {}`, `"hardware": `+tt.hardware, 1)
			doc = strings.Replace(doc, `"concurrency": [1, 2]}`, `"concurrency": [1, 2]`+tt.sweep+`}`, 1)
			r, err := Decode("f.json", []byte(doc))
			switch {
			case tt.want == "" && err != nil:
				t.Fatal(err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Fatalf("error %v, want %q", err, tt.want)
			case tt.want == "" && tt.name == "given" && (!r.Hardware.IsGiven("gpu") || r.Hardware.IsGiven("cpu")):
				t.Errorf("given %v", r.Hardware.Given)
			}
		})
	}
}
