package stats_test

import (
	"fmt"
	"testing"

	"github.com/matrixgen/matrixgen"
	"github.com/matrixgen/matrixgen/internal/testrun"
	"github.com/matrixgen/matrixgen/stats"
)

// BenchmarkCompareRuns: two full 8 × 8 runs with 30 s of samples a cell,
// as `matrixgen compare` reads them. Outside package stats: testrun stores
// each cell's interval with stats.SetInterval.
func BenchmarkCompareRuns(b *testing.B) {
	a, c := testrun.Full(1), testrun.Full(2)
	for b.Loop() {
		stats.CompareRuns(a, c)
	}
}

// grid is a run of side × side valid cells without samples, the shape of a
// hostile file: many cells, each cheap on its own.
func grid(side int) *matrixgen.Run {
	r := &matrixgen.Run{}
	for c := range side {
		for n := range side {
			r.Decode = append(r.Decode, matrixgen.Decode{ContextTokens: 1024 + c, Concurrency: 1 + n,
				Status: matrixgen.StatusValid, TotalTokS: new(100.0)})
		}
	}
	return r
}

// TestCompareRunsWideGrid: two runs of 200 × 200 cells compare in well under
// a second. Looking each cell of one run up by a scan of the other took
// minutes at this size (time in the square of the cells).
func TestCompareRunsWideGrid(t *testing.T) {
	a, b := grid(200), grid(200)
	if got, want := len(stats.CompareRuns(a, b).Rows), 200*200; got != want {
		t.Fatalf("CompareRuns of two %d-cell runs: %d rows, want %d", want, got, want)
	}
}

// BenchmarkCompareRunsGrid reports the time a cell at 10,000 and 40,000
// cells: about the same at both if CompareRuns is linear, four times as
// much at 40,000 if it is quadratic.
func BenchmarkCompareRunsGrid(b *testing.B) {
	for _, side := range []int{100, 200} {
		x, y := grid(side), grid(side)
		b.Run(fmt.Sprintf("cells=%d", side*side), func(b *testing.B) {
			for b.Loop() {
				stats.CompareRuns(x, y)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(side*side), "ns/cell")
		})
	}
}
