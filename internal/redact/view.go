package redact

import (
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// A view is a text rewritten for matching, with where each of its bytes
// came from: every rule reads views and hides spans mapped back to the
// original, so a rule written once for the plain form finds the secret
// however it was spelled.
type view struct {
	text string
	// from[i] is the original offset of text[i]; from[len(text)] is the
	// original's length. nil: text is the original.
	from []int
}

// original maps the view's span [a, b) back to the original text.
func (v view) original(a, b int) span {
	if v.from == nil {
		return span{a, b}
	}
	return span{v.from[a], v.from[b]}
}

// views returns the views every rule reads:
//
//   - as written, every dash made a hyphen and every space a reader sees
//     (Unicode spaces, escapes such as \n or \u2028, terminal control
//     sequences) a plain space, so a name and its value stand apart;
//   - decoded further: percent-encoding, backslash escapes of quotes and
//     slashes, \u00XX escapes and HTML references, repeatedly for text
//     encoded twice (the first view is kept: there an escaped quote (\")
//     is still part of a quoted value);
//   - for text with '+', decoded with '+' read as a form's space (kept
//     apart: a base64 key holds '+').
func views(s string) []view {
	written := rewrite(view{text: s}, spaceAt)
	out := []view{written}
	// Decoded from the text as written, not from the spaced view: in
	// "\\n" (an escaped backslash, then n) there is no \n.
	if decoded := decodeAll(view{text: s}); decoded.text != written.text {
		out = append(out, decoded)
	}
	if strings.Contains(s, "+") {
		// Read before decoding: a form writes a key's '+' as %2B.
		out = append(out, decodeAll(rewrite(view{text: s}, plusAt)))
	}
	if strings.Contains(s, ",") {
		// A list's words as a shell's: a command written as an exec
		// form (["redis-cli", "-a", "…"]) is read as the command.
		if listed := listView(s); listed.text != s {
			out = append(out, listed)
		}
	}
	if joined := rewrite(view{text: s}, invisibleAt); joined.text != s {
		// Invisible characters dropped: a key cut by them is read whole.
		out = append(out, joined)
	}
	return out
}

// decodeAll decodes v, again while a round changes it (text encoded
// twice), three rounds at most.
func decodeAll(v view) view {
	for range 3 {
		next := rewrite(v, decodedAt)
		if next.text == v.text {
			break
		}
		v = next
	}
	return v
}

func plusAt(s string, i int) (byte, int) {
	if s[i] == '+' {
		return ' ', 1
	}
	return 0, 0
}

// quotedList is a list of quoted words: ["a", "b"], ['a','b'].
var quotedList = regexp.MustCompile(`\[[ \t]*(?:"(?:[^"\\\n]|\\.)*"|'[^'\n]*')(?:[ \t]*,[ \t]*(?:"(?:[^"\\\n]|\\.)*"|'[^'\n]*'))+[ \t]*\]`)

// listView is s with each list of quoted words read as the words apart
// by spaces; a JSON object's members ("a": "b", "c": 1) are left alone.
func listView(s string) view {
	lists := quotedList.FindAllStringIndex(s, -1)
	return rewrite(view{text: s}, func(s string, i int) (byte, int) {
		for len(lists) > 0 && lists[0][1] <= i {
			lists = lists[1:]
		}
		if len(lists) == 0 || i <= lists[0][0] {
			return 0, 0
		}
		return listAt(s, i)
	})
}

// listAt reads the comma between two quoted words of a list ("a", "b"
// or 'a','b'), with their inner quotes, as a space.
func listAt(s string, i int) (byte, int) {
	if n := len(listComma.FindString(s[i:])); n > 0 {
		return ' ', n
	}
	return 0, 0
}

// listComma is a quoted word's end, a comma and the next word's start.
var listComma = regexp.MustCompile(`^(?:"[ \t]*,[ \t]*"|'[ \t]*,[ \t]*')`)

// invisibleAt reads a character no reader sees at s[i] (a format
// character, a combining grapheme joiner, a terminal's control sequence)
// as nothing.
func invisibleAt(s string, i int) (byte, int) {
	switch c := s[i]; {
	case c == 0x1b:
		if n := controlSequence(s[i+1:]); n > 0 {
			return 0, 1 + n
		}
	case c >= utf8.RuneSelf:
		r, n := utf8.DecodeRuneInString(s[i:])
		if unicode.Is(unicode.Cf, r) || r == 0x34f {
			return 0, n
		}
	}
	return 0, 0
}

// rewrite returns v with each piece at returns replaced; at says, for the
// text from i, what byte its piece reads as and how long it is (0: kept);
// a piece read as byte 0 is dropped.
func rewrite(v view, at func(s string, i int) (b byte, n int)) view {
	s := v.text
	var text []byte
	var from []int
	for i := 0; i < len(s); {
		b, n := at(s, i)
		if n == 0 {
			if text != nil {
				text, from = append(text, s[i]), append(from, i)
			}
			i++
			continue
		}
		if text == nil { // the first change: copy what came before
			text = append(make([]byte, 0, len(s)), s[:i]...)
			from = make([]int, i, len(s)+1)
			for j := range from {
				from[j] = j
			}
		}
		if b != 0 {
			text, from = append(text, b), append(from, i)
		}
		i += n
	}
	if text == nil {
		return v
	}
	from = append(from, len(s))
	if v.from != nil { // compose with the view this one was made from
		for i, f := range from {
			from[i] = v.from[f]
		}
	}
	return view{text: string(text), from: from}
}

// spaceAt reads a space a reader sees at s[i], however it is written, and
// a typographic dash as the hyphen a command line means by it.
func spaceAt(s string, i int) (byte, int) {
	c := s[i]
	switch {
	case c == '\\' && strings.HasPrefix(s[i+1:], "\n"):
		return ' ', 2 // a shell's line continuation
	case c == '\\' && strings.HasPrefix(s[i+1:], "\r\n"):
		return ' ', 3
	case c == '\\':
		return ' ', escapedSpace(s[i:])
	case c == 0x1b:
		return ' ', 1 + controlSequence(s[i+1:])
	case c < ' ' && c != '\t' && c != '\n' || c == 0x7f:
		return ' ', 1
	case c >= utf8.RuneSelf:
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == 0x9b { // a C1 control sequence introducer
			return ' ', n + controlSequence("["+s[i+n:min(len(s), i+n+31)]) - 1
		}
		if unicode.IsSpace(r) || unicode.Is(unicode.Cf, r) || unicode.IsControl(r) {
			return ' ', n
		}
		if unicode.Is(unicode.Pd, r) || r == '\u2212' {
			return '-', n // a dash an editor or a page set for a flag's hyphen (—api-key, –-api-key)
		}
	}
	return 0, 0
}

// escapedSpace is the length of an escape at the start of s that stands
// for a control or space character, with the terminal control sequence
// that follows an escaped ESC; 0 when there is none.
func escapedSpace(s string) int {
	if len(s) < 2 {
		return 0
	}
	if strings.IndexByte("abfnrtv", s[1]) >= 0 {
		return 2
	}
	n := 2 + escapeDigits[s[1]]
	if len(s) < n {
		return 0
	}
	switch r, ok := hexValue(s[2:n]); {
	case !ok:
	case r == 0x1b:
		return n + controlSequence(s[n:])
	case r == 0x9b:
		return n + controlSequence("["+s[n:min(len(s), n+31)]) - 1
	case r < ' ' || r == 0x7f || 0x80 <= r && r < 0xa0 || r < utf8.MaxRune && unicode.IsSpace(rune(r)):
		return n
	}
	return 0
}

// escapeDigits are the hex digits of \xHH, \uHHHH and \UHHHHHHHH.
var escapeDigits = map[byte]int{'x': 2, 'u': 4, 'U': 8}

// controlSequence is the length of a terminal's control sequence at the
// start of s, after its ESC: [ parameters and a final letter. It reads 32
// bytes at most, so a C1 introducer's callers put '[' before 31 of them,
// not before the whole rest of a text that may hold thousands.
func controlSequence(s string) int { return len(controlPattern.FindString(s)) }

var controlPattern = regexp.MustCompile(`^\[[0-9;?]{0,30}[A-Za-z]`)

// decodedAt reads an encoded printable ASCII character (or a space) at
// s[i], and a space as spaceAt does: a secret is ASCII, so decoding
// nothing else keeps every other text as it is.
func decodedAt(s string, i int) (byte, int) {
	switch s[i] {
	case '%':
		if v, ok := hexValue(s[min(i+1, len(s)):min(i+3, len(s))]); ok && len(s) >= i+3 {
			if v >= utf8.RuneSelf {
				return encodedSpace(s[i:])
			}
			return printable(v, 3)
		}
	case '\\':
		if i+1 < len(s) && strings.IndexByte(`"'\/`, s[i+1]) >= 0 {
			return s[i+1], 2
		}
		if i+6 <= len(s) && s[i+1] == 'u' {
			if v, ok := hexValue(s[i+2 : i+6]); ok {
				return printable(v, 6)
			}
		}
	case '&':
		for ref, b := range references {
			if strings.HasPrefix(s[i:], ref) {
				return b, len(ref)
			}
		}
	}
	return spaceAt(s, i) // a space once decoded (%5Cn is \n)
}

// encodedSpace reads a percent-encoded UTF-8 space at the start of s (a
// no-break space is %C2%A0) as a space.
func encodedSpace(s string) (byte, int) {
	var b []byte
	for len(b) < utf8.UTFMax && len(s) >= 3*(len(b)+1) && s[3*len(b)] == '%' {
		v, ok := hexValue(s[3*len(b)+1 : 3*len(b)+3])
		if !ok {
			break
		}
		b = append(b, byte(v))
		if utf8.FullRune(b) {
			break
		}
	}
	if r, n := utf8.DecodeRune(b); n > 1 && (unicode.IsSpace(r) || unicode.Is(unicode.Cf, r)) {
		return ' ', 3 * n
	}
	return 0, 0
}

// references are HTML's character references for the characters that
// delimit a secret.
var references = map[string]byte{"&quot;": '"', "&#34;": '"', "&#x22;": '"', "&apos;": '\'', "&#39;": '\'', "&#x27;": '\'',
	"&amp;": '&', "&lt;": '<', "&gt;": '>', "&#61;": '=', "&#x3d;": '=', "&#x3D;": '='}

// printable returns v as the byte it decodes to, for a printable ASCII
// character, and a space for any other space or control character.
func printable(v uint32, n int) (byte, int) {
	switch {
	case ' ' < v && v < 0x7f:
		return byte(v), n
	case v <= ' ' || v == 0x7f:
		return ' ', n
	}
	return 0, 0
}

func hexValue(h string) (uint32, bool) {
	v, err := strconv.ParseUint(h, 16, 32)
	return uint32(v), err == nil
}

// A span is a secret's place in a text: bytes [start, end).
type span struct{ start, end int }

// hideSpans replaces each span of s (merged where they overlap or touch)
// with Mark.
func hideSpans(s string, spans []span) string {
	if len(spans) == 0 {
		return s
	}
	slices.SortFunc(spans, func(a, b span) int { return a.start - b.start })
	var b strings.Builder
	b.Grow(len(s))
	copied := 0
	for i := 0; i < len(spans); {
		cur := spans[i]
		for i++; i < len(spans) && spans[i].start <= cur.end; i++ {
			cur.end = max(cur.end, spans[i].end)
		}
		if cur.end <= cur.start {
			continue
		}
		b.WriteString(s[copied:cur.start])
		b.WriteString(Mark)
		copied = cur.end
	}
	b.WriteString(s[copied:])
	return b.String()
}
