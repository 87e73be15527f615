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
	if len(table.Rows) != 3 || table.Family != 2 {
		t.Fatalf("rows %+v, family %d; want 3 rows, 2 in the family", table.Rows, table.Family)
	}
	want := []Cell{{PhaseDecode, 1024, 1}, {PhaseDecode, 1024, 4}, {PhaseDecode, 2048, 1}}
	for i, r := range table.Rows {
		if r.Cell != want[i] {
			t.Errorf("row %d is %v, want %v", i, r.Cell, want[i])
		}
	}
	same, slow, untested := table.Rows[0], table.Rows[1], table.Rows[2]
	if same.Differ || same.SignificantAfterHolm || same.Ratio != 1 || same.Verdict != VerdictSame {
		t.Errorf("unchanged cell: %+v", same)
	}
	if !slow.Differ || !slow.SignificantAfterHolm || !slow.InFamily || math.Abs(slow.Ratio-0.9) > 1e-12 || slow.PAdjusted == nil || slow.P == nil || *slow.PAdjusted < *slow.P || slow.Verdict != VerdictSlower {
		t.Errorf("slower cell: %+v", slow)
	}
	if untested.Tested() || untested.InFamily || untested.Differ || untested.SignificantAfterHolm || untested.P != nil || untested.PValue() != 1 || untested.PAdjusted != nil || untested.Verdict != VerdictUntested {
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
// to 0.06), so only the first stays significant; a row outside the family
// is neither counted nor corrected.
func TestHolm(t *testing.T) {
	rows := []Row{{P: new(0.01), InFamily: true}, {P: new(0.04), InFamily: true}, {P: new(0.03), InFamily: true}, {}}
	if m := holm(rows); m != 3 {
		t.Fatalf("tests %d, want 3", m)
	}
	for i, want := range []float64{0.03, 0.06, 0.06} {
		if rows[i].PAdjusted == nil || math.Abs(*rows[i].PAdjusted-want) > 1e-12 || rows[i].SignificantAfterHolm != (i == 0) {
			t.Errorf("row %d: adjusted %v significant %v, want %g", i, rows[i].PAdjusted, rows[i].SignificantAfterHolm, want)
		}
	}
	if rows[3].PAdjusted != nil || rows[3].SignificantAfterHolm {
		t.Errorf("a row outside the family was corrected: %+v", rows[3])
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

// TestSetInterval: each cell keeps DecodeInterval's interval and level,
// computed again on each save (a stale one replaced, one of a cell that
// lost its samples dropped); a repeat keeps none of its own.
func TestSetInterval(t *testing.T) {
	var repeated matrixgen.Decode
	for _, rate := range []int{400, 380, 420} {
		repeated.AddRepeat(cellWith(32768, 4, float64(rate), steady(rate, 30)))
	}
	repeated.Repeats[1].Interval = &matrixgen.Interval{Low: 1, High: 2, Level: 0.5}
	stale := cellWith(16384, 4, 400, steady(400, 30))
	stale.Interval = &matrixgen.Interval{Low: 1, High: 2, Level: 0.5}
	bare := cellWith(8192, 4, 400, nil)
	bare.Interval = &matrixgen.Interval{Low: 1, High: 2, Level: 0.5}
	r := &matrixgen.Run{Decode: []matrixgen.Decode{cellWith(8192, 1, 400, steady(400, 30)), stale, bare, repeated}}
	SetInterval(r)
	for i, d := range r.Decode {
		in, level, ok := DecodeInterval(d)
		var want *matrixgen.Interval
		if ok {
			want = &matrixgen.Interval{Low: in.Low, High: in.High, Level: level}
		}
		if (d.Interval == nil) != (want == nil) || want != nil && *d.Interval != *want {
			t.Errorf("cell %d: stored %+v, want %+v", i, d.Interval, want)
		}
	}
	if r.Decode[2].Interval != nil {
		t.Error("a cell without samples kept an interval")
	}
	if got := r.Decode[3].Interval; got == nil || got.Level != 0.75 {
		t.Errorf("over repeats: %+v", got)
	}
	for j, rep := range r.Decode[3].Repeats {
		if rep.Interval != nil {
			t.Errorf("repeat %d kept an interval", j)
		}
	}
}

// TestFamilyExcludesCellsThatCannotReachAlpha: over generated tables of
// cells with 0 to 12 samples a side, a row is in the family exactly where
// its sizes can give p < 0.05 (MinP), the family is their count, Holm's
// multiplier is that count (not the number of rows), and a row outside it
// is never significant, on its own or after correction, however far apart
// its samples.
func TestFamilyExcludesCellsThatCannotReachAlpha(t *testing.T) {
	for seed := range 200 {
		var a, b matrixgen.Run
		want := 0
		for i := range 8 {
			m, n := (seed*7+i*3)%13, (seed*5+i*11)%13
			far := (seed+i)%2 == 0 // B's seconds all below A's
			sa, sb := steady(1000, m), steady(1000, n)
			if far {
				sb = steady(500, n)
			}
			a.Decode = append(a.Decode, cellWith(1024, i+1, 1000, sa))
			b.Decode = append(b.Decode, cellWith(1024, i+1, 1000, sb))
			if m >= MinSamples && n >= MinSamples && MinP(m, n) < Alpha {
				want++
			}
		}
		table := CompareRuns(&a, &b)
		if table.Family != want {
			t.Fatalf("seed %d: family %d, want %d", seed, table.Family, want)
		}
		for _, r := range table.Rows {
			inFamily := r.SamplesA >= MinSamples && r.SamplesB >= MinSamples && MinP(r.SamplesA, r.SamplesB) < Alpha
			if r.InFamily != inFamily || (r.PAdjusted != nil) != inFamily {
				t.Errorf("seed %d, %d+%d samples: in family %v, adjusted %v", seed, r.SamplesA, r.SamplesB, r.InFamily, r.PAdjusted)
			}
			if (r.P != nil) != inFamily || (r.Verdict == VerdictUntested) != !inFamily {
				t.Errorf("seed %d, %d+%d samples: p %v and verdict %q, in the family %v", seed, r.SamplesA, r.SamplesB, r.P, r.Verdict, inFamily)
			}
			if !inFamily && (r.Differ || r.SignificantAfterHolm) {
				t.Errorf("seed %d, %d+%d samples outside the family called significant: %+v", seed, r.SamplesA, r.SamplesB, r)
			}
			if inFamily && *r.P == smallestInFamily(table) && math.Abs(*r.PAdjusted-min(1, float64(table.Family)**r.P)) > 1e-12 {
				t.Errorf("seed %d: the smallest p %g adjusted to %g, not by the family of %d", seed, *r.P, *r.PAdjusted, table.Family)
			}
		}
	}
}

func smallestInFamily(t Table) float64 {
	p := 1.0
	for _, r := range t.Rows {
		if r.InFamily {
			p = min(p, *r.P)
		}
	}
	return p
}

// TestFiguresTooTinyForARatio: figures so small (a hostile file's 5e-324)
// that B / A overflows or underflows have no ratio, are untested and
// stay out of the family and the geometric mean, as a figure of 0 does.
func TestFiguresTooTinyForARatio(t *testing.T) {
	tested := Result{Test: TestRepeats, Tested: true, Significant: true, P: 0.001, Direction: 1, DF: 4, NA: 3, NB: 3}
	for _, ab := range [][2]float64{{5e-324, 1000}, {1000, 5e-324}, {1e-300, 1e300}} {
		r := row(Cell{}, ab[0], ab[1], tested)
		if r.HasRatio() || r.InFamily || r.P != nil || r.Verdict != VerdictUntested {
			t.Errorf("%g against %g: ratio %g, in family %v, verdict %q; want no ratio, untested", ab[0], ab[1], r.Ratio, r.InFamily, r.Verdict)
		}
	}
	if r := row(Cell{}, 100, 90, tested); !r.HasRatio() || !r.InFamily {
		t.Errorf("100 against 90: %+v", r)
	}
}

// TestSetIntervalStopsAtZero: a bootstrap interval stretched for few
// seconds of very uneven counts reaches below 0; a rate cannot, and
// validation refuses a stored interval that does, so it is cut off at 0.
func TestSetIntervalStopsAtZero(t *testing.T) {
	d := cellWith(8192, 1, 20, []int{0, 0, 0, 0, 0, 0, 0, 0, 0, 200})
	if in, _, ok := DecodeInterval(d); !ok || in.Low >= 0 {
		t.Fatalf("the example's interval %+v does not reach below 0: it tests nothing", in)
	}
	r := &matrixgen.Run{Decode: []matrixgen.Decode{d}}
	SetInterval(r)
	if in := r.Decode[0].Interval; in == nil || in.Low != 0 {
		t.Errorf("stored interval = %+v, want low 0", in)
	}
}
