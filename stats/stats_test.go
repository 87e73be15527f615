package stats

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/matrixgen/matrixgen/measure"
)

// ar1 is n samples of x_t = mean + φ(x_{t−1} − mean) + ε_t, ε ~ N(0, sd²),
// started from its stationary distribution: a series whose true mean is
// known and whose neighbours depend on each other, as a server's seconds do.
func ar1(rng *rand.Rand, n int, mean, phi, sd float64) []float64 {
	xs := make([]float64, n)
	x := rng.NormFloat64() * sd / math.Sqrt(1-phi*phi)
	for i := range xs {
		xs[i] = mean + x
		x = phi*x + rng.NormFloat64()*sd
	}
	return xs
}

// coverageSeeds is the fixed list of seeds the coverage is measured over:
// all of them, 1 to 400, none left out.
const coverageSeeds = 400

// coverage is the share of coverageSeeds series whose MeanInterval holds the
// true mean.
func coverage(n int, phi float64) float64 {
	const truth = 1000.0
	hit := 0
	for seed := uint64(1); seed <= coverageSeeds; seed++ {
		xs := ar1(rand.New(rand.NewPCG(seed, 7)), n, truth, phi, 50)
		in, ok := MeanInterval(xs, seed)
		if ok && in.Low <= truth && truth <= in.High {
			hit++
		}
	}
	return float64(hit) / coverageSeeds
}

// TestMeanIntervalCoverage: over 400 seeded series of a known process the
// 95 % interval holds the true mean between 92 % and 98 % of the time, for
// independent seconds and for seconds that lean on their neighbours.
func TestMeanIntervalCoverage(t *testing.T) {
	for _, tt := range []struct {
		name string
		n    int
		phi  float64
	}{
		{"iid, 10 s", 10, 0},
		{"iid, 30 s", 30, 0},
		{"iid, 60 s", 60, 0},
		{"AR(1) φ=0.3, 30 s", 30, 0.3},
		{"AR(1) φ=0.3, 60 s", 60, 0.3},
		{"AR(1) φ=0.3, 120 s", 120, 0.3},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := coverage(tt.n, tt.phi)
			t.Logf("coverage %.1f %%", 100*got)
			if got < 0.92 || got > 0.98 {
				t.Errorf("coverage %.3f, want 0.92…0.98", got)
			}
		})
	}
}

// TestStudentT975 holds the expansion to the published table of Student's
// t (two-sided 95 %, i.e. the 97.5th percentile): 3.182 at 3 degrees of
// freedom, 2.571 at 5, 2.228 at 10, 2.086 at 20, 2.042 at 30.
func TestStudentT975(t *testing.T) {
	for nu, want := range map[float64]float64{3: 3.182, 5: 2.571, 10: 2.228, 20: 2.086, 30: 2.042} {
		tolerance := 0.002
		if nu < 5 {
			tolerance = 0.01
		}
		if got := studentT975(nu); math.Abs(got-want) > tolerance*want {
			t.Errorf("t(%g) = %.4f, want %.3f", nu, got, want)
		}
	}
}

// TestSelectQuantile: selection finds what sorting finds, ties and all.
func TestSelectQuantile(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	for trial := range 300 {
		xs := make([]float64, 1+rng.IntN(300))
		for i := range xs {
			xs[i] = float64(rng.IntN(1 + trial%40)) // many ties in some trials
		}
		for _, q := range []float64{0, 0.025, 0.5, 0.975, 1} {
			if got, want := selectQuantile(append([]float64(nil), xs...), q), measure.Quantile(xs, q); got != want {
				t.Fatalf("trial %d, q %g: %g, want %g", trial, q, got, want)
			}
		}
	}
}

func TestMeanIntervalNeedsSeconds(t *testing.T) {
	if _, ok := MeanInterval(make([]float64, MinSeconds-1), 1); ok {
		t.Errorf("%d seconds gave an interval", MinSeconds-1)
	}
	if _, ok := MeanInterval(make([]float64, MinSeconds), 1); !ok {
		t.Errorf("%d seconds gave none", MinSeconds)
	}
}
