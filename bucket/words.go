package bucket

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/matrixgen/matrixgen/internal/redact"
	"github.com/matrixgen/matrixgen/internal/term"
)

// What a store says (an error, a request id, a key) reaches our messages
// only through storeWords or keyName: clipped (a store can say megabytes),
// then redacted.

// wordsEdge is how much of a store's words a message keeps at each end.
const wordsEdge = 200

// storeWords is a store's text made fit for a message: one line, each run
// of white space one space, clipped, redacted (a secret clipped in two is
// as random as whole), control characters escaped (term.Line).
func storeWords(s string) string {
	// Through []rune, each byte that is not UTF-8 reads as U+FFFD.
	line := strings.Join(strings.Fields(string([]rune(s))), " ")
	return term.Line(redact.Text(clip(line, true)))
}

// keyName is a key in a message: clipped (spaces kept), redacted, term.Name.
func keyName(key string) string {
	return term.Name(redact.Text(clip(key, false)))
}

// clip keeps the first and last wordsEdge bytes of a long s, and the count
// left out, cut at rune boundaries, and at a near space if words.
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

// runeStart is i, or the start of the rune i falls in.
func runeStart(s string, i int) int {
	for k := 1; k < utf8.UTFMax && i > 0 && !utf8.RuneStart(s[i]); k++ {
		i--
	}
	return i
}
