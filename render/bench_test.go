package render

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/matrixgen/matrixgen"
	"github.com/matrixgen/matrixgen/internal/testrun"
)

// BenchmarkRunPage measures the CPU of one run page: layout, chart option,
// template, CSV and run.json, without the disk. Target: under 2 ms.
func BenchmarkRunPage(b *testing.B) {
	bld, err := newBuilder(Site{Title: "bench"})
	if err != nil {
		b.Fatal(err)
	}
	entries := make([]matrixgen.Entry, 64)
	for i := range entries {
		run := testrun.Full(uint64(i))
		raw, err := matrixgen.EncodeRun(run)
		if err != nil {
			b.Fatal(err)
		}
		entries[i] = matrixgen.Entry{ID: fmt.Sprintf("run-%d", i), Run: run, Raw: raw, Notes: []byte("Some *notes*.")}
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		e := entries[i%len(entries)]
		i++
		page, err := bld.newRunPage(e)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := execute(bld.run, page); err != nil {
			b.Fatal(err)
		}
		if _, err := e.JSON(); err != nil {
			b.Fatal(err)
		}
		_ = measurementsCSV(e.Run)
	}
}

// BenchmarkBuild1000 writes a whole site of 1,000 full runs to disk.
func BenchmarkBuild1000(b *testing.B) {
	entries := make([]matrixgen.Entry, 1000)
	for i := range entries {
		entries[i] = matrixgen.Entry{ID: fmt.Sprintf("run-%04d", i), Run: testrun.Full(uint64(i))}
	}
	out := filepath.Join(b.TempDir(), "public")
	for b.Loop() {
		if _, err := Build(Entries(entries), Site{}, out); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkComparePage measures one compare page: both matrices on one
// scale, the ratio matrix, the settings and the prefill chart.
func BenchmarkComparePage(b *testing.B) {
	bld, err := newBuilder(Site{Title: "bench"})
	if err != nil {
		b.Fatal(err)
	}
	a, c := forComparing(testrun.Full(1)), forComparing(testrun.Full(2))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := execute(bld.compare, bld.newComparePage(Pair{"a", "c"}, a, c)); err != nil {
			b.Fatal(err)
		}
	}
}
