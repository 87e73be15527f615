package term

import (
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

func TestClean(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"plain text, 1K × 4", "plain text, 1K × 4"},
		{"bad\x1b]0;pwned\x07\x1b[2J\r\nmatrixgen run: 9 of 9", `bad\x1b]0;pwned\a\x1b[2J\r` + "\nmatrixgen run: 9 of 9"},
		{"tab\tand\nnewline", "tab\tand\nnewline"},
		{"c1 \u009b31m", `c1 \u009b31m`},
		{"\x00\x7f", `\x00\x7f`},
		{"evil\u202egnp.json and \u2066x\u2069", `evil\u202egnp.json and \u2066x\u2069`},
	} {
		if got := Clean(tt.in); got != tt.want {
			t.Errorf("Clean(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestLine(t *testing.T) {
	if got, want := Line("bad\r\nmatrixgen run: 9 of 9\t."), `bad\r\nmatrixgen run: 9 of 9\t.`; got != want {
		t.Errorf("Line = %q, want %q", got, want)
	}
}

func FuzzClean(f *testing.F) {
	f.Add("bad\x1b[2J\r")
	f.Fuzz(func(t *testing.T, s string) {
		for _, r := range Clean(s) {
			if needsEscape(r) {
				t.Fatalf("Clean(%q) kept %q", s, r)
			}
		}
	})
}

// TestNameCannotForgeOrReorder: generated names with every kind of
// character a file system or a bucket allows: whatever they hold, a name
// prints on one line, without a character that moves or reorders text,
// and reads back (strconv.Unquote) as the name it was; a plain name
// prints as it is.
func TestNameCannotForgeOrReorder(t *testing.T) {
	for _, plain := range []string{"a.json", "runs/nemotron-3.5.json", "s3://lab/runs/x.json", "ünïcode-名前.md"} {
		if got := Name(plain); got != plain {
			t.Errorf("Name(%q) = %s, want it as it is", plain, got)
		}
	}
	rng := rand.New(rand.NewPCG(21, 4))
	pieces := []string{"a", "b.json", "/", "\n", "\r", "\t", " ", "\"", "\\", "'", "\x1b[2J", "\u202e", "\u2066", "\u200f",
		"\u2028", "\u0085", "\x00", "\xff", "é", "名", "matrixgen build: built 4 pages", "…"}
	for range 5000 {
		var b strings.Builder
		for n := rng.IntN(8); n >= 0; n-- {
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
		name := b.String()
		got := Name(name)
		for _, r := range got {
			if !unicode.IsPrint(r) && r != ' ' || r == '\n' {
				t.Fatalf("Name(%q) = %s: holds %U", name, got, r)
			}
		}
		if got != name {
			if back, err := strconv.Unquote(got); err != nil || back != name {
				t.Fatalf("Name(%q) = %s: reads back as %q (%v)", name, got, back, err)
			}
		}
	}
}
