package runner

import (
	"bytes"
	"strings"
	"unicode/utf8"

	"github.com/matrixgen/matrixgen"
)

// Loop detection looks at the last words of a stream's output for a unit of
// 1–maxLoopUnit words that repeats to the end, at least three times and
// over half of them: real text almost never does, a looping model always.
const (
	loopWindowWords = 600
	maxLoopUnit     = 150
	minLoopRepeats  = 3
)

// detectLoop returns the evidence of a loop at the end of text, which ends
// at byte offset outputBytes of the stream's output; nil if there is none.
func detectLoop(text []byte, outputBytes int) *matrixgen.LoopEvidence {
	words, starts := splitWords(text)
	if len(words) > loopWindowWords {
		cut := len(words) - loopWindowWords
		words, starts = words[cut:], starts[cut:]
	}
	n := len(words)
	for p := 1; p <= maxLoopUnit && p*minLoopRepeats <= n; p++ {
		run := 0 // positions from the end where the word equals the one p before
		for i := n - 1; i >= p && words[i] == words[i-p]; i-- {
			run++
		}
		covered := run + p
		if run < (minLoopRepeats-1)*p || covered*2 < n {
			continue
		}
		begin := starts[n-covered]
		excerpt := text[begin:]
		if len(excerpt) > 240 {
			excerpt = excerpt[:240]
			for !utf8.Valid(excerpt) {
				excerpt = excerpt[:len(excerpt)-1]
			}
		}
		return &matrixgen.LoopEvidence{
			Unit:        strings.Join(words[n-covered:n-covered+p], " "), // as it first appeared
			StartOffset: outputBytes - (len(text) - begin),
			Excerpt:     string(excerpt),
		}
	}
	return nil
}

// splitWords splits text at white space, with each word's byte offset.
func splitWords(text []byte) (words []string, starts []int) {
	at := 0
	for w := range bytes.FieldsFuncSeq(text, isSpace) {
		at += bytes.Index(text[at:], w) // past the spaces before it
		words, starts = append(words, string(bytes.ToLower(w))), append(starts, at)
		at += len(w)
	}
	return words, starts
}

func isSpace(r rune) bool { return r == ' ' || r == '\n' || r == '\t' || r == '\r' }
