package stats

import (
	"math"
	"sync"

	"github.com/matrixgen/matrixgen"
)

// MinRepeats is the fewest repeats a side CompareRepeats tests: two give
// each side a spread of its own.
const MinRepeats = 2

// MaxDF is the most degrees of freedom a test of repeats can have: both
// sides at matrixgen.MaxRepeats.
const MaxDF = 2*matrixgen.MaxRepeats - 2

// CompareRepeats compares a cell of two runs by its repeats' tok/s: drift
// moves a whole repeat, so the seconds inside one are not independent; the
// repeats (interleaved passes) are, as far as a sweep can make them. The
// test is the two-sided pooled Student's t, significant where |t| reaches
// CriticalT(m + n − 2), the same as p below Alpha. Fewer than MinRepeats a
// side is not tested (P 1).
func CompareRepeats(a, b []float64) Result {
	r := Result{P: 1, Test: TestRepeats, NA: len(a), NB: len(b)}
	if len(a) < MinRepeats || len(b) < MinRepeats {
		return r
	}
	t, df := PooledT(a, b)
	r.T, r.DF, r.Tested = t, df, true
	switch {
	case t > 0:
		r.Direction = 1
	case t < 0:
		r.Direction = -1
	}
	r.P = StudentP(t, float64(df))
	r.Significant = math.Abs(t) >= CriticalT(df)
	return r
}

// PooledT is Student's two-sample t of b against a with the variances
// pooled, and its degrees of freedom, m + n − 2; ±Inf or NaN for two sides
// without spread. The compare page's script (pooledT in matrixgen.js)
// computes it in the same order, each product rounded on its own (the
// conversions keep the compiler from fusing them), to the same bit.
func PooledT(a, b []float64) (t float64, df int) {
	m, n := len(a), len(b)
	ma, mb := Mean(a), Mean(b)
	ss := 0.0
	for _, x := range a {
		d := x - ma
		ss += float64(d * d)
	}
	for _, x := range b {
		d := x - mb
		ss += float64(d * d)
	}
	df = m + n - 2
	pooled := ss / float64(df)
	se := math.Sqrt(float64(pooled * (1/float64(m) + 1/float64(n))))
	return (mb - ma) / se, df
}

// StudentP is the two-sided p of Student's t with df degrees of freedom,
// I_{df/(df+t²)}(df/2, ½) (regularized incomplete beta); 1 for a NaN t, 0
// for an infinite one.
func StudentP(t, df float64) float64 {
	switch {
	case math.IsNaN(t) || !(df > 0):
		return 1
	case math.IsInf(t, 0):
		return 0
	}
	return regularizedBeta(df/(df+t*t), df/2, 0.5)
}

// regularizedBeta is I_x(a, b) by Numerical Recipes' continued fraction
// (§6.4, modified Lentz) on the side of x where it converges fast.
func regularizedBeta(x, a, b float64) float64 {
	switch {
	case x <= 0:
		return 0
	case x >= 1:
		return 1
	}
	la, _ := math.Lgamma(a)
	lb, _ := math.Lgamma(b)
	lab, _ := math.Lgamma(a + b)
	front := math.Exp(lab - la - lb + a*math.Log(x) + b*math.Log1p(-x))
	if x < (a+1)/(a+b+2) {
		return front * betaFraction(x, a, b) / a
	}
	return 1 - front*betaFraction(1-x, b, a)/b
}

// betaFraction is the continued fraction of I_x(a, b), to within 1e-15.
func betaFraction(x, a, b float64) float64 {
	const eps, rounds = 1e-15, 1000
	c, d := lentzStep(-(a+b)*x/(a+1), math.Inf(1), 1) // c 1, d 1/(1 − (a+b)x/(a+1))
	h := d
	for i := 1; i <= rounds; i++ {
		m := float64(i)
		c, d = lentzStep(m*(b-m)*x/((a+2*m-1)*(a+2*m)), c, d) // the even step
		h *= d * c
		c, d = lentzStep(-(a+m)*(a+b+m)*x/((a+2*m)*(a+2*m+1)), c, d) // the odd step
		step := d * c
		h *= step
		if math.Abs(step-1) < eps {
			break
		}
	}
	return h
}

// lentzTiny keeps the modified Lentz method's c and d off zero.
const lentzTiny = 1e-300

// lentzStep is c and d after one term num of the continued fraction, d
// inverted, as the modified Lentz method takes them.
func lentzStep(num, c, d float64) (float64, float64) {
	d, c = 1+num*d, 1+num/c
	if math.Abs(d) < lentzTiny {
		d = lentzTiny
	}
	if math.Abs(c) < lentzTiny {
		c = lentzTiny
	}
	return c, 1 / d
}

// CriticalT is the smallest |t| with df degrees of freedom whose two-sided
// p (StudentP) is below Alpha (12.71 at 1, 1.98 at 120), so the compare
// page's script, which has no incomplete beta, decides by t as this
// package does. 0 for df below 1 or above MaxDF.
func CriticalT(df int) float64 {
	if df < 1 || df > MaxDF {
		return 0
	}
	return criticalTs()[df]
}

// criticalTs is CriticalT for every df from 1 to MaxDF (index 0 unused).
var criticalTs = sync.OnceValue(func() []float64 {
	out := make([]float64, MaxDF+1)
	for df := 1; df <= MaxDF; df++ {
		out[df] = smallestSignificant(1000, func(t float64) bool { return StudentP(t, float64(df)) < Alpha })
	}
	return out
})

// CriticalTs is CriticalT for df from 1 to MaxDF, at index df − 1: the
// table a compare page's script decides a test of repeats by.
func CriticalTs() []float64 { return criticalTs()[1:] }
