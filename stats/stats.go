// Package stats says how sure a figure is (a 95 % interval from a cell's
// samples) and whether two sets of samples differ by more than their noise,
// as the methodology page states. It is pure and every draw seeded, so the
// same run files give the same intervals on every machine.
package stats

import (
	"math"
	"math/rand/v2"
	"slices"
)

// Level is the confidence of every interval, and 1 − Level the
// significance level of every test.
const (
	Level = 0.95
	Alpha = 1 - Level
)

// Resamples is how many bootstrap resamples an interval draws: its ends
// move well under a tenth of its width from one seed to another.
const Resamples = 2000

// Interval is a range believed to hold the true figure at Level.
type Interval struct {
	Low, High float64
}

// HalfWidthShare is the interval's half width as a share of the figure x
// (0.05: ±5 %); 0 for a figure of 0.
func (i Interval) HalfWidthShare(x float64) float64 {
	if x == 0 {
		return 0
	}
	return (i.High - i.Low) / 2 / math.Abs(x)
}

// BlockLength is the moving-block bootstrap's block length for n samples,
// ⌈n^(1/3)⌉: blocks too short lose dependence, too few blocks add variance.
func BlockLength(n int) int {
	l := int(math.Ceil(math.Cbrt(float64(n)) - 1e-9))
	return max(1, min(l, n))
}

// MeanInterval is the 95 % interval of the mean of samples in time order
// (a cell's tokens per second), by a moving block bootstrap: Resamples
// series of blocks of BlockLength(n) neighbouring samples (slow seconds
// stay together), the percentiles of their means stretched by
// smallSampleStretch: a few dozen dependent seconds show too little spread.
// Over 400 seeded series it held the true mean 92–98 % of the time for
// independent seconds (10 to 60) and for seconds correlated 0.3 (30 to
// 120); at 0.5, about 90 %. ok is false with fewer than MinSeconds samples.
// The same series and seed always give the same interval.
func MeanInterval(xs []float64, seed uint64) (Interval, bool) {
	n := len(xs)
	if n < MinSeconds {
		return Interval{}, false
	}
	l := BlockLength(n)
	starts := n - l + 1
	// prefix[i] is the sum of the first i samples: a block's sum, or the
	// part of one that fills a resample up, is two lookups.
	prefix := make([]float64, n+1)
	for i, x := range xs {
		prefix[i+1] = prefix[i] + x
	}
	whole, rest := n/l, n%l
	rng := rand.NewPCG(seed, 0x0b007) // the source itself: the same draws as rand.New(rng), without its call through an interface
	// Each 64 random bits place two blocks, low half first: a 32-bit half
	// times places, shifted down, has a bias below places/2³², nothing
	// beside the bootstrap's own noise. The draws run in one stream across
	// resamples, each resample's blocks (whole, then the part one) in order.
	perResample := whole + min(rest, 1)
	places := uint64(starts)
	var bits uint64
	halves := 0
	means := make([]float64, Resamples)
	for r := range means {
		sum := 0.0
		for b := range perResample {
			if halves == 0 {
				bits, halves = rng.Uint64(), 2
			}
			halves--
			s := int((bits & 0xffffffff) * places >> 32)
			bits >>= 32
			size := l
			if b == whole {
				size = rest
			}
			sum += prefix[s+size] - prefix[s]
		}
		means[r] = sum / float64(n)
	}
	mean, c := Mean(xs), smallSampleStretch(n, l)
	return Interval{
		Low:  mean - c*(mean-selectQuantile(means, Alpha/2)),
		High: mean + c*(selectQuantile(means, 1-Alpha/2)-mean),
	}, true
}

// MinSeconds is the fewest samples MeanInterval gives an interval from:
// 10 seconds make 5 blocks of 2, the least its coverage was measured at.
const MinSeconds = 10

// smallSampleStretch widens a bootstrap interval of n samples in blocks of
// l as Student's t widens a normal one: with k = n/l blocks, by √(k/(k−1))
// (the bootstrap divides by k) times t(k−1) / z, their 97.5th percentiles.
func smallSampleStretch(n, l int) float64 {
	k := max(2, float64(n)/float64(l))
	return math.Sqrt(k/(k-1)) * studentT975(k-1) / z975
}

// z975 is the normal distribution's 97.5th percentile.
const z975 = 1.959963984540054

// studentT975 is the 97.5th percentile of Student's t with nu degrees of
// freedom by the Cornish–Fisher expansion: within 1 % at 3, 0.2 % from 5.
func studentT975(nu float64) float64 {
	z := z975
	z3, z5, z7 := z*z*z, math.Pow(z, 5), math.Pow(z, 7)
	return z + (z3+z)/(4*nu) + (5*z5+16*z3+3*z)/(96*nu*nu) + (3*z7+19*z5+17*z3-15*z)/(384*nu*nu*nu)
}

// MedianInterval is the interval of the median of a few independent
// measurements (a prefill row's requests) by order statistics: the k-th
// lowest and k-th highest, k the largest that keeps the chance the true
// median lies outside at most 5 %. Below 6 samples no such k exists: the
// interval is the lowest to the highest, level its real confidence (75 %
// for 3, 87.5 % for 4, 93.75 % for 5). ok is false below 3 samples.
func MedianInterval(xs []float64) (in Interval, level float64, ok bool) {
	n := len(xs)
	if n < 3 {
		return Interval{}, 0, false
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	// outside(k): the chance all but fewer than k samples fall on one side,
	// 2·P(X ≤ k − 1) for X ~ Binomial(n, ½), which is when the median lies
	// outside [s[k-1], s[n-k]].
	cdf := binomialCDF(n, n > exactLogBound)
	outside := func(k int) float64 { return 2 * cdf(k-1) }
	k, out := 1, outside(1)
	for k+1 <= n/2 {
		next := outside(k + 1)
		if next > Alpha {
			break
		}
		k, out = k+1, next
	}
	return Interval{Low: s[k-1], High: s[n-k]}, 1 - out, true
}

// binomialCDF is P(X ≤ k) for X ~ Binomial(n, ½), k rising from call to
// call: C(n, i) summed as floats over 2ⁿ, or past exactLogBound trials,
// where they overflow, with logs each term exp(log C(n, i) − n·log 2).
func binomialCDF(n int, logs bool) func(k int) float64 {
	i, sum, c := 0, 0.0, 1.0 // the next term, the terms below it, C(n, i)
	return func(k int) float64 {
		for ; i <= k; i++ {
			if logs {
				sum += math.Exp(logChoose(n, i) - float64(n)*math.Ln2)
				continue
			}
			sum += c
			c = c * float64(n-i) / float64(i+1)
		}
		if logs {
			return sum
		}
		return sum / math.Exp2(float64(n))
	}
}

const exactLogBound = 1000 // 2ⁿ fits a float with room: 2¹⁰²⁴ does not

// logChoose is log C(n, k).
func logChoose(n, k int) float64 {
	ln, _ := math.Lgamma(float64(n + 1))
	lk, _ := math.Lgamma(float64(k + 1))
	lnk, _ := math.Lgamma(float64(n - k + 1))
	return ln - lk - lnk
}

// selectQuantile is the q-quantile of xs by linear interpolation between
// ranks, as measure.Quantile finds it, sorting xs in place.
func selectQuantile(xs []float64, q float64) float64 {
	slices.Sort(xs)
	pos := q * float64(len(xs)-1)
	lo := int(pos)
	if lo+1 >= len(xs) {
		return xs[lo]
	}
	return xs[lo] + (xs[lo+1]-xs[lo])*(pos-float64(lo))
}

// Mean is the arithmetic mean; 0 for none.
func Mean(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	sum := 0.0
	for _, x := range xs {
		sum += x
	}
	return sum / float64(len(xs))
}

// GeoMean is the geometric mean of positive ratios, the typical change;
// ok is false for none, or for a ratio that is not positive.
func GeoMean(ratios []float64) (float64, bool) {
	if len(ratios) == 0 {
		return 0, false
	}
	sum := 0.0
	for _, r := range ratios {
		if !(r > 0) || math.IsInf(r, 1) {
			return 0, false
		}
		sum += math.Log(r)
	}
	return math.Exp(sum / float64(len(ratios))), true
}
