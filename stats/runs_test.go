package stats

import (
	"math"
	"testing"

	"github.com/matrixgen/matrixgen"
)

func cellWith(context, concurrency int, rate float64, seconds []int) matrixgen.Decode {
	return matrixgen.Decode{ContextTokens: context, Concurrency: concurrency, Status: matrixgen.StatusValid,
		TotalTokS: new(rate), PerSecondTokens: seconds}
}

// steady is n seconds of about rate tokens, wobbling by a few.
func steady(rate, n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = rate + (i*7)%11 - 5
	}
	return out
}

// TestCompareRuns: a cell 10 % slower with samples is significant and
// fails a 5 % gate; an unchanged one is not; a cell without samples is
// listed, untested; cells valid in one run only are left out; the
// geometric mean is of every row.
func TestCompareRuns(t *testing.T) {
	a := &matrixgen.Run{Decode: []matrixgen.Decode{
		cellWith(1024, 1, 100, steady(100, 30)),
		cellWith(1024, 4, 400, steady(400, 30)),
		cellWith(2048, 1, 90, nil),
		cellWith(4096, 1, 80, steady(80, 30)),
	}}
	b := &matrixgen.Run{Decode: []matrixgen.Decode{
		cellWith(2048, 1, 90, nil),
		cellWith(1024, 4, 360, steady(360, 30)),
		cellWith(1024, 1, 100, steady(100, 30)),
		{ContextTokens: 4096, Concurrency: 1, Status: matrixgen.StatusError},
	}}
	table := CompareRuns(a, b)
	if len(table.Rows) != 3 || table.Tests != 2 {
		t.Fatalf("rows %+v, tests %d; want 3 rows, 2 tested", table.Rows, table.Tests)
	}
	want := []Cell{{PhaseDecode, 1024, 1}, {PhaseDecode, 1024, 4}, {PhaseDecode, 2048, 1}}
	for i, r := range table.Rows {
		if r.Cell != want[i] {
			t.Errorf("row %d is %v, want %v", i, r.Cell, want[i])
		}
	}
	same, slow, untested := table.Rows[0], table.Rows[1], table.Rows[2]
	if same.Significant || same.Ratio != 1 {
		t.Errorf("unchanged cell: %+v", same)
	}
	if !slow.Significant || math.Abs(slow.Ratio-0.9) > 1e-12 || slow.PAdjusted < slow.P {
		t.Errorf("slower cell: %+v", slow)
	}
	if untested.Tested() || untested.Significant || untested.P != 1 {
		t.Errorf("cell without samples: %+v", untested)
	}
	if got := table.Slowdowns(0.05); len(got) != 1 || got[0].Cell != slow.Cell {
		t.Errorf("gate at 5 %%: %+v", got)
	}
	if got := table.Slowdowns(0.15); len(got) != 0 {
		t.Errorf("gate at 15 %%: %+v", got)
	}
	if want := math.Cbrt(0.9); math.Abs(table.GeoMean-want) > 1e-12 {
		t.Errorf("geomean %g, want %g", table.GeoMean, want)
	}
}

// TestHolm holds the correction to a worked example: p = 0.01, 0.04, 0.03
// over 3 tests adjust to 0.03, 0.06, 0.06 (0.03·2 = 0.06, then 0.04·1 lifted
// to 0.06), so only the first stays significant.
func TestHolm(t *testing.T) {
	rows := []Row{{P: 0.01, SamplesA: 3, SamplesB: 3}, {P: 0.04, SamplesA: 3, SamplesB: 3}, {P: 0.03, SamplesA: 3, SamplesB: 3}}
	if m := holm(rows); m != 3 {
		t.Fatalf("tests %d, want 3", m)
	}
	for i, want := range []float64{0.03, 0.06, 0.06} {
		if math.Abs(rows[i].PAdjusted-want) > 1e-12 || rows[i].Significant != (i == 0) {
			t.Errorf("row %d: adjusted %g significant %v, want %g", i, rows[i].PAdjusted, rows[i].Significant, want)
		}
	}
}

// TestIntervalsOfARun: a decode cell's interval is seeded by its place, so
// the same cell gives the same interval; it brackets the cell's mean.
func TestIntervalsOfARun(t *testing.T) {
	d := cellWith(8192, 4, 400, steady(400, 30))
	in, level, ok := DecodeInterval(d)
	again, _, _ := DecodeInterval(d)
	if !ok || in != again || in.Low > 400 || in.High < 399 || level != Level {
		t.Errorf("interval %+v at %g (again %+v)", in, level, again)
	}
	if _, _, ok := DecodeInterval(cellWith(8192, 4, 400, nil)); ok {
		t.Error("a cell without samples has an interval")
	}
	// Repeated three times: the interval is over the repeats, lowest to
	// highest at 75 %, and the samples are every repeat's seconds.
	var repeated matrixgen.Decode
	for _, rate := range []int{400, 380, 420} {
		repeated.AddRepeat(cellWith(8192, 4, float64(rate), steady(rate, 30)))
	}
	in, level, ok = DecodeInterval(repeated)
	if !ok || in != (Interval{380, 420}) || level != 0.75 || *repeated.TotalTokS != 400 {
		t.Errorf("over repeats: %+v at %g, figure %g", in, level, *repeated.TotalTokS)
	}
	if n := len(DecodeSamples(repeated)); n != 90 {
		t.Errorf("%d samples of 3 repeats of 30 s", n)
	}
	p := matrixgen.Prefill{PromptTokS: new(1000.0), Requests: []matrixgen.PrefillRequest{{PromptTokS: 990}, {PromptTokS: 1000}, {PromptTokS: 1020}}}
	if in, level, ok := PrefillInterval(p); !ok || in != (Interval{990, 1020}) || level != 0.75 {
		t.Errorf("prefill interval %+v at %g", in, level)
	}
}
