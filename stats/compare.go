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
	// Tested is both sets having MinSamples or more.
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
	if len(a) < MinSamples || len(b) < MinSamples {
		return r
	}
	_, r.P = MannWhitney(a, b)
	r.Tested, r.Significant = true, r.P < Alpha
	return r
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
