package bucket

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/matrixgen/matrixgen/internal/redact"
	"github.com/matrixgen/matrixgen/internal/term"
)

// What a store says (an error's code and message, its request ids, a key
// it lists) reaches our errors and lines only through storeWords or
// keyName: clipped, then redacted. A store can say megabytes; a message
// needs its first and last words.

// wordsEdge is how much of a store's words a message keeps at each end.
const wordsEdge = 200

// storeWords is a store's text made fit for one of our messages: one line
// (each run of white space, newlines included, one space), and, when long,
// its first and last wordsEdge bytes or so (cut between words where one
// ends near the cut) with the count of what was left out between; then
// redacted (redact.Text: a secret the clip cut in two is as random as a
// whole one), and its other control characters written as escapes
// (term.Line), so no terminal obeys them wherever it is printed.
func storeWords(s string) string {
	// Through []rune, each byte that is not UTF-8 reads as U+FFFD.
	line := strings.Join(strings.Fields(string([]rune(s))), " ")
	return term.Line(redact.Text(clip(line, true)))
}

// keyName is how a key the store listed is named in a message: clipped at
// both ends as storeWords clips (but its spaces kept: the name must be the
// key's), redacted, then printed as every outside name is (term.Name), on
// one line.
func keyName(key string) string {
	return term.Name(redact.Text(clip(key, false)))
}

// clip keeps the first and last wordsEdge bytes of a long s, at rune
// boundaries, and at a space near the cut when words says to look for one.
func clip(s string, words bool) string {
	if len(s) <= 2*wordsEdge+40 {
		return s
	}
	head := runeStart(s, wordsEdge)
	tail := runeStart(s, len(s)-wordsEdge)
	if words {
		if i := strings.LastIndexByte(s[head-wordsEdge/4:head], ' '); i >= 0 {
			head = head - wordsEdge/4 + i
		}
		if i := strings.IndexByte(s[tail:tail+wordsEdge/4], ' '); i >= 0 {
			tail += i + 1
		}
	}
	return fmt.Sprintf("%s … (%d bytes left out) … %s", s[:head], tail-head, s[tail:])
}

// runeStart is i, or the start of the rune i falls in (bytes that are
// not UTF-8 are cut where they are).
func runeStart(s string, i int) int {
	for k := 1; k < utf8.UTFMax && i > 0 && !utf8.RuneStart(s[i]); k++ {
		i--
	}
	return i
}
