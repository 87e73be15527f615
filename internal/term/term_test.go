package term

import "testing"

func TestClean(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"plain text, 1K × 4", "plain text, 1K × 4"},
		{"bad\x1b]0;pwned\x07\x1b[2J\r\nmatrixgen run: 9 of 9", `bad\x1b]0;pwned\a\x1b[2J\r` + "\nmatrixgen run: 9 of 9"},
		{"tab\tand\nnewline", "tab\tand\nnewline"},
		{"c1 \u009b31m", `c1 \u009b31m`},
		{"\x00\x7f", `\x00\x7f`},
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
