package render

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/matrixgen/matrixgen"
	"github.com/matrixgen/matrixgen/internal/testrun"
	"github.com/matrixgen/matrixgen/runfile"
)

// BenchmarkRunPage measures the CPU of one run page: layout, chart option,
// template, CSV and run.json, without the disk. Target: under 2 ms.
func BenchmarkRunPage(b *testing.B) {
	bld, err := NewRenderer(Site{Title: "bench"})
	if err != nil {
		b.Fatal(err)
	}
	entries := make([]runfile.Entry, 64)
	for i := range entries {
		run := testrun.Full(uint64(i))
		raw, err := runfile.Encode(run)
		if err != nil {
			b.Fatal(err)
		}
		entries[i] = runfile.Entry{ID: fmt.Sprintf("run-%d", i), Run: run, Raw: raw, Notes: []byte("Some *notes*.")}
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
	entries := make([]runfile.Entry, 1000)
	for i := range entries {
		entries[i] = runfile.Entry{ID: fmt.Sprintf("run-%04d", i), Run: testrun.Full(uint64(i))}
	}
	out := filepath.Join(b.TempDir(), "public")
	for b.Loop() {
		if _, err := writeSite(Entries(entries), Site{}, out); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCompareScript measures a run's compare.js, written once per
// run: its settings, headline figures, prefill rows and cells.
func BenchmarkCompareScript(b *testing.B) {
	r := testrun.Full(1)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := compareScript("a", r); err != nil {
			b.Fatal(err)
		}
	}
}

// errorGrid is a run of side × side error cells, the shape of a hostile
// file: many cells, each cheap on its own.
func errorGrid(side int) *matrixgen.Run {
	r := &matrixgen.Run{}
	for c := range side {
		for n := range side {
			r.Decode = append(r.Decode, matrixgen.Decode{ContextTokens: 1024 + c, Concurrency: 1 + n, Status: matrixgen.StatusError})
		}
	}
	return r
}

// TestDecodeMatrixWideGrid: a matrix of 200 × 200 cells lays out in well
// under a second. Looking each cell up by a scan of the run took minutes at
// this size (time in the square of the cells).
func TestDecodeMatrixWideGrid(t *testing.T) {
	m, _ := decodeMatrix(errorGrid(200))
	if len(m.Rows) != 200 || len(m.Rows[199].Cells) != 200 {
		t.Fatalf("decodeMatrix of 200 × 200 cells: %d rows, want 200 of 200", len(m.Rows))
	}
}

// BenchmarkDecodeMatrixGrid reports the time a cell at 10,000 and 40,000
// cells: about the same at both if the layout is linear, four times as much
// at 40,000 if it is quadratic.
func BenchmarkDecodeMatrixGrid(b *testing.B) {
	for _, side := range []int{100, 200} {
		r := errorGrid(side)
		b.Run(fmt.Sprintf("cells=%d", side*side), func(b *testing.B) {
			for b.Loop() {
				decodeMatrix(r)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(side*side), "ns/cell")
		})
	}
}
