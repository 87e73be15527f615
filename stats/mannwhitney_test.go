package stats

import (
	"math"
	"slices"
	"sync"
	"testing"
)

// samplesWithU builds samples of m and n distinct values whose U (pairs
// where a's value is larger) is exactly u: b is 0 … n−1, and each value of a
// sits just below the b it does not beat.
func samplesWithU(m, n, u int) (a, b []float64) {
	for j := range n {
		b = append(b, float64(j))
	}
	for i := range m {
		k := min(n, u) // this value beats k of b
		u -= k
		a = append(a, float64(k)-0.5+float64(i)*1e-6)
	}
	return a, b
}

// TestMannWhitneyCriticalValues holds the exact test to the published table
// of critical values of U for a two-sided test at α = 0.05 (the table
// printed in most statistics textbooks, e.g. Zar, Biostatistical Analysis,
// table B.11): a U at the critical value is significant, one above it is
// not. Values used: n1×n2 = 4×4: 0, 5×5: 2, 6×6: 5, 7×7: 8, 8×8: 13,
// 10×10: 23, 20×20: 127, 5×10: 8, 6×9: 10, 4×8: 4; and 3×3 has none, its
// smallest two-sided p being 2/20 = 0.10.
func TestMannWhitneyCriticalValues(t *testing.T) {
	for _, tt := range []struct{ m, n, critical int }{
		{4, 4, 0}, {5, 5, 2}, {6, 6, 5}, {7, 7, 8}, {8, 8, 13}, {10, 10, 23},
		{20, 20, 127}, {5, 10, 8}, {6, 9, 10}, {4, 8, 4},
	} {
		a, b := samplesWithU(tt.m, tt.n, tt.critical)
		u, p := MannWhitney(a, b)
		if u != float64(tt.critical) || p > 0.05 {
			t.Errorf("%d×%d at U = %d: got U %g, p %.4f, want p ≤ 0.05", tt.m, tt.n, tt.critical, u, p)
		}
		a, b = samplesWithU(tt.m, tt.n, tt.critical+1)
		if _, p := MannWhitney(a, b); p <= 0.05 {
			t.Errorf("%d×%d at U = %d: p %.4f, want above 0.05", tt.m, tt.n, tt.critical+1, p)
		}
	}
	a, b := samplesWithU(3, 3, 0)
	if _, p := MannWhitney(a, b); math.Abs(p-0.1) > 1e-12 {
		t.Errorf("3×3 at U = 0: p %g, want 0.10", p)
	}
}

// TestMannWhitneyNormal: past the exact sizes the normal approximation
// agrees with the exact distribution, and ties shrink the variance as the
// correction says.
func TestMannWhitneyNormal(t *testing.T) {
	for _, u := range []int{600, 700, 800} {
		a, b := samplesWithU(40, 40, u)
		_, tieSum := rank(a, b)
		exact, normal := exactP(float64(u), 40, 40), normalP(float64(u), 40, 40, tieSum)
		if math.Abs(exact-normal) > 0.003 {
			t.Errorf("40×40 at U = %d: exact %.5f, normal %.5f", u, exact, normal)
		}
	}
	// a = {1, 2, 2}, b = {2, 3, 3, 3}: ranks 1, 3, 3 | 3, 6, 6, 6; U = 7 − 6
	// = 1; ties of 3 and 3: Σ(t³ − t) = 48; variance = 12/12 · (8 − 48/42)
	// = 6.857; z = (|1 − 6| − ½)/2.6186 = 1.7185; p = 0.0857.
	u, p := MannWhitney([]float64{1, 2, 2}, []float64{2, 3, 3, 3})
	if u != 1 || math.Abs(p-0.0857) > 0.0005 {
		t.Errorf("with ties: U %g, p %.4f, want 1, 0.0857", u, p)
	}
	if _, p := MannWhitney([]float64{5, 5}, []float64{5, 5, 5}); p != 1 {
		t.Errorf("all tied: p %g, want 1", p)
	}
	if _, p := MannWhitney(nil, []float64{1}); p != 1 {
		t.Errorf("empty: p %g, want 1", p)
	}
}

// TestMedianInterval holds the order-statistics interval to the tables of
// confidence intervals for a median: for 10 samples the 2nd to the 9th
// (97.9 %), for 3 the lowest to the highest (75 %).
func TestMedianInterval(t *testing.T) {
	xs := []float64{10, 3, 7, 1, 9, 5, 2, 8, 4, 6}
	in, level, ok := MedianInterval(xs)
	if !ok || in != (Interval{2, 9}) || math.Abs(level-0.9785) > 0.0001 {
		t.Errorf("10 samples: %v at %.4f, want {2 9} at 0.9785", in, level)
	}
	in, level, ok = MedianInterval([]float64{3, 1, 2})
	if !ok || in != (Interval{1, 3}) || level != 0.75 {
		t.Errorf("3 samples: %v at %g, want {1 3} at 0.75", in, level)
	}
	if _, _, ok := MedianInterval([]float64{1, 2}); ok {
		t.Error("2 samples gave an interval")
	}
}

func TestGeoMean(t *testing.T) {
	if g, ok := GeoMean([]float64{2, 0.5, 1}); !ok || math.Abs(g-1) > 1e-12 {
		t.Errorf("GeoMean(2, ½, 1) = %g, want 1", g)
	}
	if g, ok := GeoMean([]float64{1.1, 1.1}); !ok || math.Abs(g-1.1) > 1e-12 {
		t.Errorf("GeoMean(1.1, 1.1) = %g", g)
	}
	if _, ok := GeoMean([]float64{1, 0}); ok {
		t.Error("a zero ratio gave a mean")
	}
}

func TestCompareCell(t *testing.T) {
	a := []float64{100, 101, 99, 100, 102, 98, 100, 101, 99, 100}
	b := []float64{90, 91, 89, 90, 92, 88, 90, 91, 89, 90}
	r := CompareCell(a, b)
	if !r.Significant || r.P >= 0.001 {
		t.Errorf("10 %% slower: %+v", r)
	}
	if r := CompareCell(a, a); r.Significant {
		t.Errorf("same samples: %+v", r)
	}
}

// TestCompareCellNeedsThreeASide: below MinSamples on either side nothing
// is tested, however far apart the samples (one second against fifty would
// otherwise be significant, p = 2/51); from three a side, it is.
func TestCompareCellNeedsThreeASide(t *testing.T) {
	many := make([]float64, 50)
	for i := range many {
		many[i] = float64(100 + i)
	}
	for _, few := range [][]float64{nil, {1}, {1, 2}} {
		if r := CompareCell(few, many); r.Tested || r.Significant || r.P != 1 {
			t.Errorf("%d against 50: %+v", len(few), r)
		}
		if r := CompareCell(many, few); r.Tested || r.Significant || r.P != 1 {
			t.Errorf("50 against %d: %+v", len(few), r)
		}
	}
	if r := CompareCell([]float64{1, 2, 3}, many); !r.Tested || !r.Significant {
		t.Errorf("3 against 50, all below: %+v", r)
	}
}

// TestSignificantZ: the critical z is the normal quantile at 1 − Alpha/2,
// and it splits p < Alpha exactly: the floats just below it are not
// significant and those from it up are, a thousand of each checked.
func TestSignificantZ(t *testing.T) {
	z := SignificantZ()
	if math.Abs(z-1.959963984540054) > 1e-9 {
		t.Errorf("critical z %.15g", z)
	}
	below, above := z, z
	for range 1000 {
		below = math.Nextafter(below, 0)
		if p := math.Erfc(below / math.Sqrt2); p < Alpha {
			t.Fatalf("z %.17g below the critical one has p %.17g < Alpha", below, p)
		}
		if p := math.Erfc(above / math.Sqrt2); p >= Alpha {
			t.Fatalf("z %.17g from the critical one up has p %.17g ≥ Alpha", above, p)
		}
		above = math.Nextafter(above, 10)
	}
}

// TestMinP holds MinP to exact small cases, counted by hand from
// C(m+n, m) (2 of its splits are the two extremes), and to the exact
// distribution itself: the p of the most extreme U (0: every value of a
// below every value of b) is MinP for every size up to 8 a side.
func TestMinP(t *testing.T) {
	for _, tt := range []struct {
		m, n int
		want float64
	}{
		{0, 5, 1}, {5, 0, 1}, {1, 1, 1}, {1, 3, 0.5}, {2, 2, 2.0 / 6}, {3, 3, 0.1}, {3, 4, 2.0 / 35},
		{4, 3, 2.0 / 35}, {3, 5, 2.0 / 56}, {4, 4, 2.0 / 70}, {2, 8, 2.0 / 45}, {1, 39, 0.05}, {1, 40, 2.0 / 41},
		{5, 5, 2.0 / 252}, {10, 10, 2.0 / 184756},
	} {
		if got := MinP(tt.m, tt.n); math.Abs(got-tt.want) > 1e-15 {
			t.Errorf("MinP(%d, %d) = %g, want %g", tt.m, tt.n, got, tt.want)
		}
	}
	for m := 1; m <= 8; m++ {
		for n := 1; n <= 8; n++ {
			a, b := make([]float64, m), make([]float64, n)
			for i := range a {
				a[i] = float64(i)
			}
			for i := range b {
				b[i] = float64(100 + i)
			}
			if _, p := MannWhitney(a, b); math.Abs(p-MinP(m, n)) > 1e-12 {
				t.Errorf("%d against %d, all apart: exact p %g, MinP %g", m, n, p, MinP(m, n))
			}
		}
	}
	if Testable(3, 3) || Testable(3, 4) || !Testable(3, 5) || !Testable(4, 4) || Testable(2, 50) {
		t.Error("Testable disagrees with MinP below 0.05 and 3 a side")
	}
}

// TestTiesNeverBeatMinP: with ties the normal approximation gives 3
// against 3 a p below 0.1 (0.072 here; other ties reach 0.047) though no
// split of six values can; p is held at MinP, and such a cell is not tested
// at all.
func TestTiesNeverBeatMinP(t *testing.T) {
	a, b := []float64{1, 1, 2}, []float64{5, 6, 6}
	if _, p := MannWhitney(a, b); p < MinP(3, 3) {
		t.Errorf("3 against 3 with ties: p %g below MinP %g", p, MinP(3, 3))
	}
	if r := CompareCell(a, b); r.Tested || r.Significant {
		t.Errorf("3 against 3: %+v", r)
	}
	// Generated tied samples of every size up to 6 a side: p is never
	// below MinP.
	for seed := range 500 {
		m, n := 1+seed%6, 1+(seed/6)%6
		a, b := make([]float64, m), make([]float64, n)
		for i := range a {
			a[i] = float64((seed + i*3) % 3)
		}
		for i := range b {
			b[i] = float64(2 + (seed+i)%3)
		}
		if _, p := MannWhitney(a, b); p < MinP(m, n)-1e-15 {
			t.Errorf("%v against %v: p %g below MinP %g", a, b, p, MinP(m, n))
		}
	}
}

// TestCachedUDistribution: goroutines asking at once all get the one
// distribution uDistribution computes, for each pair of sizes.
func TestCachedUDistribution(t *testing.T) {
	var wg sync.WaitGroup
	got := make([][]float64, 8)
	for i := range got {
		wg.Go(func() { got[i] = cachedUDistribution(7, 5+i%2) })
	}
	wg.Wait()
	for i, g := range got {
		if want := uDistribution(7, 5+i%2); !slices.Equal(g, want) {
			t.Errorf("cachedUDistribution(7, %d) = %v, want %v", 5+i%2, g, want)
		}
	}
	if &got[0][0] != &got[2][0] {
		t.Error("cachedUDistribution(7, 5) computed twice, want once")
	}
}
