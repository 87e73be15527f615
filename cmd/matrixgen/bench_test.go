package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/matrixgen/matrixgen"
	"github.com/matrixgen/matrixgen/config"
	"github.com/matrixgen/matrixgen/internal/testrun"
)

// BenchmarkBuild1000 is `matrixgen build` on 1,000 full runs (8 × 8 decode
// cells, 9 prefill rows, percentiles and per-second counts each): reading
// and decoding every file, rendering, writing, swapping the site in.
// Target: under 3 s an operation.
func BenchmarkBuild1000(b *testing.B) {
	runs := filepath.Join(b.TempDir(), "runs")
	if err := os.MkdirAll(runs, 0o755); err != nil {
		b.Fatal(err)
	}
	for i := range 1000 {
		data, err := matrixgen.EncodeRun(testrun.Full(uint64(i)))
		if err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(runs, fmt.Sprintf("run-%04d.json", i)), data, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	out := filepath.Join(b.TempDir(), "public")
	for b.Loop() {
		if err := buildSite(runs, out, config.Site{}, io.Discard); err != nil {
			b.Fatal(err)
		}
	}
}
