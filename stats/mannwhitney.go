package stats

import (
	"cmp"
	"math"
	"slices"
	"sync"
)

// MaxExactSize is the largest sample a side whose p is exact; past it the
// normal approximation is within a few thousandths.
const MaxExactSize = 50

// MannWhitney is the two-sided Mann–Whitney U test of whether a's values
// tend to be larger or smaller than b's: U counts the pairs where a's is
// larger, a tie one half. Without ties and within MaxExactSize a side p is
// exact; otherwise it is the normal approximation (tie-corrected, ½ for
// continuity), never below MinP(m, n): with ties it could otherwise call 3
// against 3 significant (p ≈ 0.047), which no split of six values can be.
// p is 1 when either side is empty.
func MannWhitney(a, b []float64) (u, p float64) {
	m, n := len(a), len(b)
	if m == 0 || n == 0 {
		return 0, 1
	}
	ranks, tieSum := rank(a, b)
	sumA := 0.0
	for _, r := range ranks[:m] {
		sumA += r
	}
	u = sumA - float64(m*(m+1))/2
	if tieSum == 0 && m <= MaxExactSize && n <= MaxExactSize {
		return u, exactP(u, m, n)
	}
	return u, max(MinP(m, n), normalP(u, m, n, tieSum))
}

// rank gives every value of a then b its rank in both (from 1, ties the
// mean of theirs), and the sum of t³ − t over each group of t tied values.
func rank(a, b []float64) (ranks []float64, tieSum float64) {
	x := slices.Concat(a, b)
	order := make([]int, len(x)) // x's indices by value
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(p, q int) int { return cmp.Compare(x[p], x[q]) })
	ranks = make([]float64, len(x))
	for lo := 0; lo < len(x); {
		hi := lo + 1
		for hi < len(x) && x[order[hi]] == x[order[lo]] {
			hi++
		}
		t := float64(hi - lo)
		tieSum += t*t*t - t
		mean := float64(lo+hi+1) / 2 // mean of ranks lo+1 … hi
		for _, i := range order[lo:hi] {
			ranks[i] = mean
		}
		lo = hi
	}
	return ranks, tieSum
}

// exactP is the two-sided p of U = u for samples of m and n without ties:
// twice the smaller tail, at most 1.
func exactP(u float64, m, n int) float64 {
	freq := cachedUDistribution(m, n)
	total, below, above := 0.0, 0.0, 0.0
	k := int(math.Round(u))
	for v, f := range freq {
		total += f
		if v <= k {
			below += f
		}
		if v >= k {
			above += f
		}
	}
	return min(1, 2*min(below, above)/total)
}

// uDistributions holds each (m, n)'s distribution, computed once: a
// compare tests every cell with the same sizes, and 50 v 50 takes
// milliseconds. At most 50 × 50 of them, 13 MB.
var uDistributions sync.Map // [2]int{m, n} → func() []float64

// cachedUDistribution is uDistribution(m, n), computed once however many
// goroutines ask. Callers only read it.
func cachedUDistribution(m, n int) []float64 {
	k := [2]int{m, n}
	f, ok := uDistributions.Load(k)
	if !ok {
		f, _ = uDistributions.LoadOrStore(k, sync.OnceValue(func() []float64 { return uDistribution(m, n) }))
	}
	return f.(func() []float64)()
}

// uDistribution counts, for each U from 0 to m·n, the orderings of m and n
// distinct values that give it: the largest beats all n or none, so
// count(u; i, j) = count(u−j; i−1, j) + count(u; i, j−1).
func uDistribution(m, n int) []float64 {
	size := m*n + 1
	// prev holds count(·; i−1, j) and cur count(·; i, j) for j = 0…n, each
	// a row of size counts.
	prev, cur := make([]float64, (n+1)*size), make([]float64, (n+1)*size)
	for j := 0; j <= n; j++ {
		prev[j*size] = 1 // no first values: U is 0
	}
	for i := 1; i <= m; i++ {
		clear(cur)
		cur[0] = 1 // no second values: U is 0
		for j := 1; j <= n; j++ {
			row, left, up := cur[j*size:(j+1)*size], cur[(j-1)*size:j*size], prev[j*size:(j+1)*size]
			copy(row, left)
			for v := j; v < size; v++ {
				row[v] += up[v-j]
			}
		}
		prev, cur = cur, prev
	}
	return prev[n*size : (n+1)*size]
}

// normalP is the two-sided p of U = u from the normal approximation, its
// variance reduced for ties by tieSum/(N(N − 1)).
func normalP(u float64, m, n int, tieSum float64) float64 {
	total := m + n
	mn := float64(m) * float64(n)
	variance := mn / 12 * (float64(total+1) - tieSum/(float64(total)*float64(total-1)))
	if variance <= 0 {
		return 1 // every value the same: nothing tells the samples apart
	}
	z := max(0, math.Abs(u-mn/2)-0.5) / math.Sqrt(variance)
	return math.Erfc(z / math.Sqrt2)
}
