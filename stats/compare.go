package stats

import (
	"math"
	"sync"
)

// MinSamples is the fewest samples a side CompareCell tests. The exact
// test would call one sample against 50 significant (p = 2/51), which says
// nothing of a cell; from 3 a side the two sets each have a spread.
const MinSamples = 3

// Result is one cell of two runs set side by side.
type Result struct {
	// Ratio is the mean of b over the mean of a: 1.10 when b is 10 %
	// faster; 0 when a's mean is 0.
	Ratio float64
	// P is the two-sided Mann–Whitney p of the two sets of samples; 1
	// where they were not tested.
	P float64
	// Tested is both sets having MinSamples or more and sizes that can
	// reach Alpha at all (MinP below it): 3 against 3 cannot (MinP 0.1),
	// so such a cell is never called significant, whatever its values.
	Tested bool
	// Significant is P below Alpha: a cell on its own, with a 5 % chance
	// of being called significant when nothing changed. A table of many
	// cells corrects for their number (Holm).
	Significant bool
}

// CompareCell compares the samples of one cell in two runs (its tokens per
// second, second by second, of every repeat; or its requests' rates): the
// one rule by which a cell's difference is called significant, in the
// regression gate's table (before its correction for many cells) and on
// compare pages, whose script repeats it (the page's test rules say how).
func CompareCell(a, b []float64) Result {
	r := Result{P: 1}
	if ma := Mean(a); ma != 0 {
		r.Ratio = Mean(b) / ma
	}
	if !Testable(len(a), len(b)) {
		return r
	}
	_, r.P = MannWhitney(a, b)
	r.Tested, r.Significant = true, r.P < Alpha
	return r
}

// Testable reports whether samples of m and n can be tested: MinSamples
// or more a side, and sizes whose smallest attainable p (MinP) is below
// Alpha. A cell that can never reach the 5 % level says nothing either way,
// and left in the regression gate's family it would only dilute Holm's
// correction for the cells that can.
func Testable(m, n int) bool {
	return m >= MinSamples && n >= MinSamples && MinP(m, n) < Alpha
}

// MinP is the smallest two-sided Mann–Whitney p that samples of m and n
// can give: the two most extreme of the C(m+n, m) equally likely ways of
// splitting the ranks, 2 / C(m+n, m), at most 1 (and 1 where a side is
// empty). Ties only make the extreme less rare, so it bounds the exact p
// with ties too: 3 against 3 can never go below 0.1, 4 against 4 not below
// 2/70 ≈ 0.029.
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
// computes it, is below Alpha (about 1.96). A z of the normal
// approximation at or above it is significant and one below is not, bit
// for bit as p < Alpha decides: so a page's script, which has no erfc,
// decides by z exactly as this package does by p.
var SignificantZ = sync.OnceValue(func() float64 {
	significant := func(z float64) bool { return math.Erfc(z/math.Sqrt2) < Alpha }
	// Positive floats order as their bits do: bisect the bits.
	lo, hi := math.Float64bits(0), math.Float64bits(10)
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		if significant(math.Float64frombits(mid)) {
			hi = mid
		} else {
			lo = mid
		}
	}
	return math.Float64frombits(hi)
})
