package stats

import (
	"math/rand/v2"
	"testing"
)

// BenchmarkMeanInterval: one decode cell's interval, 30 seconds of samples,
// as a build computes it for each cell that kept them.
func BenchmarkMeanInterval(b *testing.B) {
	xs := ar1(rand.New(rand.NewPCG(1, 7)), 30, 1000, 0.3, 50)
	for b.Loop() {
		MeanInterval(xs, 42)
	}
}

// BenchmarkMannWhitneyExact: 30 against 30 seconds without ties, the exact
// distribution.
func BenchmarkMannWhitneyExact(b *testing.B) {
	rng := rand.New(rand.NewPCG(2, 7))
	a, c := ar1(rng, 30, 1000, 0, 50), ar1(rng, 30, 1000, 0, 50)
	for b.Loop() {
		MannWhitney(a, c)
	}
}

// BenchmarkMannWhitneyExact50: 50 against 50 without ties, the largest
// samples read from the exact distribution, as every cell of a compare of
// runs with 50 repeats a cell tests them.
func BenchmarkMannWhitneyExact50(b *testing.B) {
	a, c := make([]float64, 50), make([]float64, 50)
	for i := range a {
		a[i], c[i] = float64(2*i), float64(2*i+1)
	}
	for b.Loop() {
		MannWhitney(a, c)
	}
}
