package stats

// Result is one cell of two runs set side by side.
type Result struct {
	// Ratio is the mean of b over the mean of a: 1.10 when b is 10 %
	// faster; 0 when a's mean is 0.
	Ratio float64
	// P is the two-sided Mann–Whitney p of the two sets of samples.
	P float64
	// Significant is P below Alpha: a cell on its own, with a 5 % chance
	// of being called significant when nothing changed. A table of many
	// cells corrects for their number (Holm).
	Significant bool
}

// CompareCell compares the samples of one cell in two runs (its tokens per
// second, second by second, of every repeat; or its requests' rates).
func CompareCell(a, b []float64) Result {
	_, p := MannWhitney(a, b)
	r := Result{P: p, Significant: p < Alpha}
	if ma := Mean(a); ma != 0 {
		r.Ratio = Mean(b) / ma
	}
	return r
}
