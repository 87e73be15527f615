// Package term makes text from servers and files safe to print on a
// terminal: control characters are shown escaped instead of obeyed.
package term

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Clean returns s with every control character but newline and tab, and
// every bidirectional control (U+202E), written as a Go escape (\x1b, \r).
func Clean(s string) string {
	if strings.IndexFunc(s, needsEscape) < 0 {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if needsEscape(r) {
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// Line is Clean for text that must stay on one line, such as a server's
// error message: newlines and tabs are escaped too, so the text cannot start
// a line of its own that looks like the program's.
func Line(s string) string {
	return strings.NewReplacer("\n", `\n`, "\t", `\t`).Replace(Clean(s))
}

// Name is how every outside name (a file's, a run's id, a bucket's key) is
// printed in a message: as it is when plain (printable, not empty, no space,
// quote or backslash), otherwise quoted with Go's escapes, so a newline
// cannot forge a line and a format character (U+202E) cannot reorder it.
func Name(name string) string {
	if name == "" || strings.IndexFunc(name, notPlain) >= 0 {
		return strconv.Quote(name)
	}
	return name
}

func notPlain(r rune) bool {
	return !unicode.IsPrint(r) || r == ' ' || r == '"' || r == '\\' || r == '\'' || r == utf8.RuneError
}

func needsEscape(r rune) bool {
	return r != '\n' && r != '\t' && (unicode.IsControl(r) || r == '\u2028' || r == '\u2029' || unicode.In(r, unicode.Bidi_Control))
}
