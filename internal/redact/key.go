package redact

import "strings"

// The live key is hidden wherever a piece of it stands that is long
// enough to be its own and no word or figure:
//
//   - every piece of minPiece characters or more (half a key shorter than
//     twice that), anywhere, even inside a longer word: a server that joins
//     the key to its words shows no more than minPiece-1 of its characters;
//   - its start or end of minEdge characters or more standing as a token:
//     what a cut leaves of a key at the text's end or start.
//
// A piece of digits alone is a figure, kept; so is a start or end shorter
// than minPiece that reads as a word (vllm), unless it is half the key or
// more and a cut left it. A key shorter than minPieceKey is looked for
// whole, and by its start or end as a token only: half of a key Nemotron3
// would hide "Nemo" of NVIDIA-Nemotron-3.5.
const (
	minPiece    = 8
	minEdge     = 4
	minPieceKey = 12
)

// keyFinder finds pieces of the live key.
type keyFinder struct {
	key   string
	piece int              // the shortest piece hidden anywhere
	grams map[string][]int // each piece of that length: where it starts in the key
	// wordy: the key is words joined by separators (token-abc123,
	// Qwen3-8B-key), whose pieces a command holds anyway: it is looked for
	// whole, and by its start or end only where a cut left them.
	wordy bool
}

func newKeyFinder(key string) *keyFinder {
	f := &keyFinder{key: key, piece: min(minPiece, len(key)/2), grams: map[string][]int{}, wordy: madeOfWords(key)}
	if len(key) < minPieceKey || f.wordy {
		f.piece = len(key)
	}
	for i := 0; i+f.piece <= len(key); i++ {
		g := key[i : i+f.piece]
		f.grams[g] = append(f.grams[g], i)
	}
	return f
}

// find calls hide with the span of each piece of the key in text.
func (f *keyFinder) find(text string, hide func(start, end int)) {
	for i := 0; i+f.piece <= len(text); {
		starts, ok := f.grams[text[i:i+f.piece]]
		if !ok {
			i++
			continue
		}
		n := 0
		for _, j := range starts {
			n = max(n, commonPrefix(text[i:], f.key[j:]))
		}
		if strings.Trim(text[i:i+n], "0123456789") != "" {
			hide(i, i+n)
		}
		i += n
	}
	f.findEdges(text, hide)
}

// findEdges hides the key's start or end where it stands as a token.
func (f *keyFinder) findEdges(text string, hide func(start, end int)) {
	for n := minEdge; n < f.piece && n < len(f.key); n++ {
		for _, piece := range []string{f.key[:n], f.key[len(f.key)-n:]} {
			word := ordinary(piece)
			if word && n < len(f.key)/2 {
				continue
			}
			// A word with its separator (token- of token-abc123) is as
			// likely a flag's part as the key's.
			cutOnly := word || f.wordy || ordinary(strings.Trim(piece, "-_."))
			for from := 0; ; {
				at := strings.Index(text[from:], piece)
				if at < 0 {
					break
				}
				s, e := from+at, from+at+n
				if (s == 0 || !isAlnum(text[s-1]) || !isAlnum(piece[0])) &&
					(e == len(text) || !isAlnum(text[e]) || !isAlnum(piece[n-1])) &&
					(!cutOnly || cutAt(text, s, e)) {
					hide(s, e)
				}
				from = s + 1
			}
		}
	}
}

// cutAt reports whether the text was cut just after text[s:e] or just
// before it (at its end or start, or beside "…" or "..."): only there is
// a word-like half of the key the key's.
func cutAt(text string, s, e int) bool {
	return e == len(text) || strings.HasPrefix(text[e:], "…") || strings.HasPrefix(text[e:], "...") ||
		s == 0 || strings.HasSuffix(text[:s], "…") || strings.HasSuffix(text[:s], "...")
}

// madeOfWords reports whether every part of a key between separators is
// a word, or shorter than minPiece and a word with a number beside it
// (abc123, Qwen3, 8B): a random key has a long run of letters and digits
// or a part of mixed case (glpat-5FRuj).
func madeOfWords(key string) bool {
	parts := strings.FieldsFunc(key, func(r rune) bool { return r < 0x80 && !isAlnum(byte(r)) })
	for _, p := range parts {
		letters := strings.Trim(p, "0123456789")
		if letters != "" && !ordinary(letters) || len(p) >= minPiece && letters != p {
			return false
		}
	}
	return len(parts) > 1
}

func commonPrefix(a, b string) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}

// ordinary reports whether a piece is a word or a figure: letters of one
// case, a capitalized word (Nemotron), or digits, and nothing else.
func ordinary(p string) bool {
	return strings.Trim(p, "abcdefghijklmnopqrstuvwxyz") == "" ||
		len(p) > 1 && 'A' <= p[0] && p[0] <= 'Z' && strings.Trim(p[1:], "abcdefghijklmnopqrstuvwxyz") == "" ||
		strings.Trim(p, "ABCDEFGHIJKLMNOPQRSTUVWXYZ") == "" || strings.Trim(p, "0123456789") == ""
}
