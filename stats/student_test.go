package stats

import (
	"math"
	"slices"
	"testing"

	"github.com/matrixgen/matrixgen"
)

// TestCriticalTAgainstTables holds CriticalT to the published table of
// Student's t for a two-sided test at α = 0.05 (the 0.975 quantile, as
// printed to three decimals in most statistics textbooks, e.g. Zar,
// Biostatistical Analysis, table B.3, or the NIST/SEMATECH e-Handbook,
// 1.3.6.7.2): a t at the critical value is significant, one a hair below
// it is not.
func TestCriticalTAgainstTables(t *testing.T) {
	for _, tt := range []struct {
		df   int
		want float64
	}{
		{1, 12.706}, {2, 4.303}, {3, 3.182}, {4, 2.776}, {5, 2.571}, {6, 2.447}, {7, 2.365},
		{8, 2.306}, {9, 2.262}, {10, 2.228}, {12, 2.179}, {15, 2.131}, {20, 2.086}, {25, 2.060},
		{30, 2.042}, {40, 2.021}, {60, 2.000}, {100, 1.984}, {120, 1.980},
	} {
		got := CriticalT(tt.df)
		if math.Abs(got-tt.want) > 0.0005 {
			t.Errorf("df %d: critical t %.5f, the table says %.3f", tt.df, got, tt.want)
		}
		if p := StudentP(got, float64(tt.df)); !(p < Alpha) {
			t.Errorf("df %d: p at the critical t is %g, want below %g", tt.df, p, Alpha)
		}
		if p := StudentP(math.Nextafter(got, 0), float64(tt.df)); p < Alpha {
			t.Errorf("df %d: p just below the critical t is %g, want %g or more", tt.df, p, Alpha)
		}
	}
	if CriticalT(0) != 0 || CriticalT(MaxDF+1) != 0 || len(CriticalTs()) != MaxDF || CriticalTs()[0] != CriticalT(1) {
		t.Error("CriticalT outside 1 to MaxDF, or CriticalTs, is not as documented")
	}
}

// TestStudentPClosedForms holds the incomplete beta's p to the t
// distribution's closed forms: with 1 degree of freedom (Cauchy) the
// two-sided p is 1 − (2/π)·atan|t|, with 2 it is 1 − |t|/√(2 + t²); and to
// table p values: t = 2.228 with 10 df is p = 0.050, t = 3.169 with 10 is
// 0.010, t = 1.812 with 10 is 0.100.
func TestStudentPClosedForms(t *testing.T) {
	for _, x := range []float64{0, 0.1, 0.5, 1, 1.96, 3, 4.303, 10, 12.706, 100} {
		if got, want := StudentP(x, 1), 1-2/math.Pi*math.Atan(x); math.Abs(got-want) > 1e-12 {
			t.Errorf("df 1, t %g: p %.15f, want %.15f", x, got, want)
		}
		if got, want := StudentP(-x, 2), 1-x/math.Sqrt(2+x*x); math.Abs(got-want) > 1e-12 {
			t.Errorf("df 2, t %g: p %.15f, want %.15f", -x, got, want)
		}
	}
	for _, tt := range []struct{ t, p float64 }{{2.228, 0.050}, {3.169, 0.010}, {1.812, 0.100}} {
		if got := StudentP(tt.t, 10); math.Abs(got-tt.p) > 0.0005 {
			t.Errorf("df 10, t %g: p %.5f, the table says %.3f", tt.t, got, tt.p)
		}
	}
	if StudentP(math.NaN(), 4) != 1 || StudentP(math.Inf(-1), 4) != 0 {
		t.Error("a NaN t must give p 1 and an infinite one p 0")
	}
}

// TestCompareRepeats: Student's t over repeats, worked by hand. a = 100,
// 102, 98 (mean 100, squares 8) and b = 94, 96, 95 (mean 95, squares 2):
// pooled variance 10/4 = 2.5, standard error √(2.5·⅔) = 1.291, t = −5/1.291
// = −3.873 with 4 df, beyond the table's 2.776: significant, B lower. The
// same b lifted to a mean of 98 (t = −1.549) is not.
func TestCompareRepeats(t *testing.T) {
	a, b := []float64{100, 102, 98}, []float64{94, 96, 95}
	r := CompareRepeats(a, b)
	if !r.Tested || !r.Significant || r.Direction != -1 || r.DF != 4 || math.Abs(r.T+3.873) > 0.001 || r.Test != TestRepeats || r.NA != 3 || r.NB != 3 {
		t.Errorf("5 %% lower: %+v", r)
	}
	if r.P > 0.05 || r.P < 0.01 {
		t.Errorf("p %g, want between 0.01 and 0.05 (t 3.873 with 4 df: the table's 0.02)", r.P)
	}
	r = CompareRepeats(a, []float64{97, 99, 98})
	if !r.Tested || r.Significant || r.Direction != -1 {
		t.Errorf("2 %% lower: %+v", r)
	}
	if r := CompareRepeats(a, []float64{95}); r.Tested || r.Significant || r.P != 1 {
		t.Errorf("1 repeat against 3 was tested: %+v", r)
	}
	// No spread on either side: a difference is infinitely sure, none is
	// nothing.
	if r := CompareRepeats([]float64{100, 100}, []float64{90, 90}); !r.Significant || r.P != 0 || r.Direction != -1 {
		t.Errorf("no spread, 10 %% lower: %+v", r)
	}
	if r := CompareRepeats([]float64{100, 100}, []float64{100, 100}); r.Significant || r.P != 1 || r.Direction != 0 {
		t.Errorf("no spread, no difference: %+v", r)
	}
}

// repeated is a cell measured once per rate, each repeat of 30 s around its
// rate.
func repeated(context, concurrency int, rates ...int) matrixgen.Decode {
	var d matrixgen.Decode
	for _, rate := range rates {
		d.AddRepeat(cellWith(context, concurrency, float64(rate), steady(rate, 30)))
	}
	return d
}

// TestCompareDecodeChoosesItsTest: a cell repeated twice or more in both
// runs is tested over its repeats; once in either, over its seconds.
func TestCompareDecodeChoosesItsTest(t *testing.T) {
	three, two, one := repeated(1024, 1, 100, 101, 99), repeated(1024, 1, 90, 91), repeated(1024, 1, 90)
	if r := CompareDecode(three, two); r.Test != TestRepeats || r.NA != 3 || r.NB != 2 || !r.Significant {
		t.Errorf("3 repeats against 2: %+v", r)
	}
	if r := CompareDecode(three, one); r.Test != TestSamples || r.NA != 90 || r.NB != 30 {
		t.Errorf("3 repeats against 1: %+v", r)
	}
	plain := cellWith(1024, 1, 90, steady(90, 30))
	if r := CompareDecode(plain, three); r.Test != TestSamples || r.NA != 30 {
		t.Errorf("not repeated against 3 repeats: %+v", r)
	}
}

// TestDriftBetweenRepeats: three repeats a side, each a steady 30 s, the
// runs' repeats level with one another but each repeat a few per cent off
// the next (drift on the machine). The seconds inside the repeats call it
// a difference; the repeats do not.
func TestDriftBetweenRepeats(t *testing.T) {
	a, b := repeated(1024, 1, 100, 104, 97), repeated(1024, 1, 97, 101, 99)
	if seconds := CompareCell(DecodeSamples(a), DecodeSamples(b)); !seconds.Significant {
		t.Fatalf("the seconds were meant to call drift a difference: %+v", seconds)
	}
	if r := CompareDecode(a, b); r.Significant || r.Test != TestRepeats {
		t.Errorf("the repeats called drift a difference: %+v", r)
	}
}

// TestDirectionAgainstTheRatio: a test that finds B higher while the
// figures shown (the median repeats) put B lower is "against": not a
// difference, not significant for the gate, never a loss. Here B's repeats
// have the higher mean (one fast outlier) but the lower median.
func TestDirectionAgainstTheRatio(t *testing.T) {
	a := &matrixgen.Run{Decode: []matrixgen.Decode{repeated(1024, 1, 100, 100, 100, 100, 101)}}
	b := &matrixgen.Run{Decode: []matrixgen.Decode{repeated(1024, 1, 99, 99, 99, 99, 140)}}
	r := CompareDecode(a.Decode[0], b.Decode[0])
	if r.Direction != 1 {
		t.Fatalf("the t test should find B higher (by its mean): %+v", r)
	}
	// Significance is forced here: the point is what a row makes of a
	// significant test whose direction the ratio denies.
	r.Significant, r.P = true, 0.001
	got := row(Cell{Phase: PhaseDecode, Context: 1024, Concurrency: 1}, *a.Decode[0].TotalTokS, *b.Decode[0].TotalTokS, r)
	if got.Differ || !got.Against || got.Ratio >= 1 {
		t.Errorf("row %+v: want against, not a difference", got)
	}
	rows := []Row{got}
	holm(rows)
	if rows[0].SignificantAfterHolm || rows[0].FailsGate(0) {
		t.Errorf("an against row passes into the gate: %+v", rows[0])
	}
	// Agreeing, the same row is a difference.
	r.Direction = -1
	if got := row(got.Cell, got.A, got.B, r); !got.Differ || got.Against {
		t.Errorf("agreeing row %+v", got)
	}
}

// TestZeroHasNoRatio: a cell of 0 tok/s in either run has no ratio: not
// tested, not in the family, not in the geometric mean, never a slowdown.
func TestZeroHasNoRatio(t *testing.T) {
	a := &matrixgen.Run{Decode: []matrixgen.Decode{
		cellWith(1024, 1, 100, steady(100, 30)), cellWith(1024, 2, 0, steady(0, 30)), cellWith(1024, 4, 400, steady(400, 30)),
	}}
	b := &matrixgen.Run{Decode: []matrixgen.Decode{
		cellWith(1024, 1, 110, steady(110, 30)), cellWith(1024, 2, 200, steady(200, 30)), cellWith(1024, 4, 0, steady(0, 30)),
	}}
	table := CompareRuns(a, b)
	if len(table.Rows) != 3 || table.Family != 1 {
		t.Fatalf("rows %+v, family %d", table.Rows, table.Family)
	}
	for _, r := range table.Rows[1:] {
		if r.HasRatio() || r.Ratio != 0 || r.InFamily || r.Differ || r.PAdjusted != nil || r.FailsGate(0) {
			t.Errorf("a cell of 0 tok/s: %+v", r)
		}
	}
	if math.Abs(table.GeoMean-1.1) > 1e-12 {
		t.Errorf("geomean %g, want 1.1 (the one cell with a ratio)", table.GeoMean)
	}
}

// TestBeyond: 95 against 100 with a 5 % gate is a slowdown of exactly 5 %,
// not beyond it, whatever the floating point of 95/100 says; 94.9 is.
func TestBeyond(t *testing.T) {
	for _, tt := range []struct {
		a, b, share float64
		want        bool
	}{
		{100, 95, 0.05, false}, {100, 94.9, 0.05, true}, {1000, 950, 0.05, false}, {3, 2.85, 0.05, false},
		{100, 90, 0.10, false}, {100, 89.99, 0.10, true}, {100, 100, 0, false}, {100, 99.9, 0, true},
		{100, 0, 0.05, false},
	} {
		if got := Beyond(tt.b/tt.a, tt.share); got != tt.want {
			t.Errorf("Beyond(%g/%g, %g) = %v, want %v", tt.b, tt.a, tt.share, got, tt.want)
		}
	}
	a, b := 100.0, 95.0 // variables: a constant expression would be exact
	if 1-b/a <= 0.05 {
		t.Error("the float of 95/100 no longer lies past 5 %: the tolerance is untested here")
	}
}

// TestMedianIntervalLarge: past 1,000 samples 2ⁿ overflows a float; the
// interval is computed from logarithms, its ranks those the normal
// approximation gives (n/2 ± 1.96·√n/2), its level at or above 95 % and
// finite. At 1,000 the two ways agree.
func TestMedianIntervalLarge(t *testing.T) {
	for _, n := range []int{1001, 2000, 10000, 100000} {
		xs := make([]float64, n)
		for i := range xs {
			xs[i] = float64(n - i)
		}
		in, level, ok := MedianInterval(xs)
		if !ok || !(level >= Level) || level > 0.97 || math.IsNaN(level) {
			t.Errorf("%d samples: %v at %g", n, in, level)
			continue
		}
		k := float64(n)/2 - 1.96*math.Sqrt(float64(n))/2
		if math.Abs(in.Low-k) > 2 || math.Abs(float64(n+1)-in.High-k) > 2 {
			t.Errorf("%d samples: %v, want about %.0f to %.0f", n, in, k, float64(n+1)-k)
		}
	}
	exact, logs := binomialCDF(1000, false), binomialCDF(1000, true)
	for _, k := range []int{400, 450, 468, 469, 500} {
		if e, l := exact(k), logs(k); math.Abs(e-l) > 1e-12*max(e, 1e-300) && math.Abs(e-l) > 1e-300 {
			t.Errorf("P(X ≤ %d) of 1,000: %g summed, %g from logarithms", k, e, l)
		}
	}
}

// TestCriticalTsAreMonotone: the table falls with the degrees of freedom
// towards the normal's 1.96.
func TestCriticalTsAreMonotone(t *testing.T) {
	ts := CriticalTs()
	if !slices.IsSortedFunc(ts, func(x, y float64) int { return -cmpFloat(x, y) }) || ts[len(ts)-1] < z975 {
		t.Errorf("critical t not falling towards %g: %v … %v", z975, ts[:3], ts[len(ts)-1])
	}
}

func cmpFloat(x, y float64) int {
	switch {
	case x < y:
		return -1
	case x > y:
		return 1
	}
	return 0
}
