// Package plural says how many of a thing there are in English ("1 run",
// "2 runs") for every count the command prints or a page shows.
package plural

import "strconv"

// Count is n and the noun that fits it: one for exactly 1, many otherwise.
func Count(n int, one, many string) string {
	return strconv.Itoa(n) + " " + Noun(n, one, many)
}

// Noun is one for exactly 1 and many otherwise, for a count written
// apart (grouped digits on a page, say).
func Noun(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
