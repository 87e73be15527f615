package stats_test

import (
	"testing"

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
