package stats

import (
	"cmp"
	"math"
	"sync"
)

// MinSamples is the fewest samples a side CompareCell tests: one against
// 50 would be significant (p = 2/51) and say nothing; 3 have a spread.
const MinSamples = 3

// The tests a cell of two runs is compared by, as Result.Test and Row.Test
// name them.
const (
	// TestSamples is the two-sided Mann–Whitney U over the samples inside
	// the cell (CompareCell): its seconds, of every repeat, or a prefill
	// row's requests.
	TestSamples = "mann-whitney-u"
	// TestNone is a compared cell put to no test: no ratio (a figure of
	// 0), or too few samples in a run to test.
	TestNone = "none"
	// TestRepeats is Student's two-sample t over the cell's repeats
	// (CompareRepeats), where both runs measured it twice or more.
	TestRepeats = "t"
)

// Result is one cell of two runs set side by side.
type Result struct {
	// Test is which test the cell was put to (TestSamples or TestRepeats).
	Test string
	// P is the two-sided Mann–Whitney p of the two sets of samples; 1
	// where they were not tested.
	P float64
	// Tested is both sets being Testable.
	Tested bool
	// Significant is P below Alpha, for the cell on its own (a table of
	// many cells corrects for their number, Holm).
	Significant bool
	// Direction is the way the test found b to lie from a: 1 higher, −1
	// lower, 0 neither (or untested); a caller reads a difference only where
	// it agrees with the figures shown (a cell's median repeat).
	Direction int
	// T and DF are the t statistic and its degrees of freedom of a test of
	// repeats; 0 for a Mann–Whitney test.
	T  float64
	DF int
	// NA and NB are how many samples (or repeats) each side had.
	NA, NB int
}

// CompareCell compares the samples of one cell in two runs (its seconds'
// tokens, of every repeat, or a prefill row's requests' rates) by a
// two-sided Mann–Whitney U: the test of a prefill row, or of a decode cell
// not repeated twice in both runs (CompareDecode), in the gate's table and
// on compare pages, whose script repeats it.
func CompareCell(a, b []float64) Result {
	r := Result{P: 1, Test: TestSamples, NA: len(a), NB: len(b)}
	if !Testable(len(a), len(b)) {
		return r
	}
	var u float64
	u, r.P = MannWhitney(a, b)
	r.Tested, r.Significant = true, r.P < Alpha
	// U counts the pairs in which a's value is the larger: below its
	// middle, b's values tend to be the larger.
	r.Direction = cmp.Compare(float64(len(a))*float64(len(b))/2, u)
	return r
}

// Testable reports whether samples of m and n can be tested: MinSamples
// or more a side, and MinP below Alpha. A cell that can never reach 5 %
// would only dilute Holm's correction for the cells that can.
func Testable(m, n int) bool {
	return m >= MinSamples && n >= MinSamples && MinP(m, n) < Alpha
}

// MinP is the smallest two-sided Mann–Whitney p that samples of m and n
// can give, with ties or without: 2 / C(m+n, m), at most 1 (1 where a side
// is empty). 3 against 3 can never go below 0.1, 4 against 4 not below 0.029.
func MinP(m, n int) float64 {
	if m <= 0 || n <= 0 {
		return 1
	}
	k, big := min(m, n), max(m, n)
	c := 1.0 // C(big+i, i), built up exactly while it fits a float
	for i := 1; i <= k; i++ {
		c = c * float64(big+i) / float64(i)
	}
	return min(1, 2/c)
}

// SignificantZ is the smallest z whose normal p, erfc(z/√2) as MannWhitney
// computes it, is below Alpha (about 1.96), so a page's script, which has
// no erfc, decides by z bit for bit as this package does by p.
var SignificantZ = sync.OnceValue(func() float64 {
	return smallestSignificant(10, func(z float64) bool { return math.Erfc(z/math.Sqrt2) < Alpha })
})

// smallestSignificant is the smallest positive float below upTo at which
// significant turns true (and stays), exact to the bit: bisected over the
// floats' bits, which order as positive floats do.
func smallestSignificant(upTo float64, significant func(float64) bool) float64 {
	lo, hi := math.Float64bits(0), math.Float64bits(upTo)
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		if significant(math.Float64frombits(mid)) {
			hi = mid
		} else {
			lo = mid
		}
	}
	return math.Float64frombits(hi)
}
