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
// cells, 9 prefill rows, percentiles and per-second counts each), a model
// each so no two get a compare page: reading and decoding every file,
// rendering, writing, swapping the site in. The side-by-side with Hugo is
// go run ./bench/buildspeed; the target there is half of Hugo's wall time.
func BenchmarkBuild1000(b *testing.B) {
	runs := filepath.Join(b.TempDir(), "runs")
	if err := os.MkdirAll(runs, 0o755); err != nil {
		b.Fatal(err)
	}
	for i := range 1000 {
		r := testrun.Full(uint64(i))
		r.Model.Name = fmt.Sprintf("model-%04d", i)
		data, err := matrixgen.EncodeRun(r)
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
