package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/matrixgen/matrixgen/config"
	"github.com/matrixgen/matrixgen/internal/testrun"
	"github.com/matrixgen/matrixgen/runfile"
)

// BenchmarkBuild1000 is `matrixgen build` on 1,000 full runs (8 × 8 decode
// cells, 9 prefill rows, percentiles and per-second counts each), a model
// each so no two get a compare page, over the site the build before made:
// reading every file, keeping unchanged runs' pages, swapping the site in.
// The side-by-side with Hugo is go run ./bench/buildspeed.
func BenchmarkBuild1000(b *testing.B) {
	runs := writeBenchRuns(b, 1000)
	out := filepath.Join(b.TempDir(), "public")
	for b.Loop() {
		if err := buildSite(runs, out, config.Site{}, io.Discard); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkBuildFresh1000 is the same build from nothing, each time into a
// folder of its own: decoding every run, laying out and writing every page.
// The target, side by side in go run ./bench/buildspeed, is half of Hugo's
// wall time for as many pages.
func BenchmarkBuildFresh1000(b *testing.B) {
	runs := writeBenchRuns(b, 1000)
	outs := b.TempDir()
	i := 0
	for b.Loop() {
		i++
		if err := buildSite(runs, filepath.Join(outs, fmt.Sprint(i)), config.Site{}, io.Discard); err != nil {
			b.Fatal(err)
		}
	}
}

// writeBenchRuns writes n synthetic full runs, a model each, and returns
// their folder.
func writeBenchRuns(b testing.TB, n int) string {
	runs := filepath.Join(b.TempDir(), "runs")
	if err := os.MkdirAll(runs, 0o755); err != nil {
		b.Fatal(err)
	}
	for i := range n {
		r := testrun.Full(uint64(i))
		r.Model.Name = fmt.Sprintf("model-%04d", i)
		data, err := runfile.Encode(r)
		if err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(runs, fmt.Sprintf("run-%04d.json", i)), data, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	return runs
}
