// Package suggest finds the name a person most likely meant: the known
// name nearest a misspelt one, for "unknown field" and "unknown key"
// errors.
package suggest

// Nearest is the known name within a couple of edits of name (one per
// four characters, at least one), the nearest such, the first of equals;
// "" when none is that near. Case differences count as edits.
func Nearest(name string, known []string) string {
	most := max(1, len([]rune(name))/4)
	best, bestDist := "", most+1
	for _, k := range known {
		if d := distance(name, k, bestDist); d < bestDist {
			best, bestDist = k, d
		}
	}
	return best
}

// DidYouMean is `; did you mean "x"?` for Nearest's x, or "".
func DidYouMean(name string, known []string) string {
	if n := Nearest(name, known); n != "" && n != name {
		return `; did you mean "` + n + `"?`
	}
	return ""
}

// distance is the edit distance between a and b (insertions, deletions,
// substitutions and swaps of two neighbours, each one edit: "titel" is one
// from "title"), or limit when it is limit or more.
func distance(a, b string, limit int) int {
	ra, rb := []rune(a), []rune(b)
	if max(len(ra), len(rb))-min(len(ra), len(rb)) >= limit {
		return limit
	}
	before := make([]int, len(rb)+1) // row i-2
	prev := make([]int, len(rb)+1)   // row i-1
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		rowMin := cur[0]
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				cur[j] = min(cur[j], before[j-2]+1)
			}
			rowMin = min(rowMin, cur[j])
		}
		if rowMin >= limit {
			return limit
		}
		before, prev, cur = prev, cur, before
	}
	return min(prev[len(rb)], limit)
}
