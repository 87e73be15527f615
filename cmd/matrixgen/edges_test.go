package main

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/matrixgen/matrixgen/internal/term"
)

// TestDotFilesAreIgnored: a dot file in runs/ (._a.json, left by macOS on
// some disks) failed the whole build. Names starting with a dot are not
// runs, whatever they hold.
func TestDotFilesAreIgnored(t *testing.T) {
	runs := sampleRuns(t)
	appleDouble := []byte("\x00\x05\x16\x07\x00\x02\x00\x00Mac OS X        ")
	for _, name := range []string{"._" + sampleID + ".json", "._" + sampleID + ".md", ".hidden.json", ".#draft.json", "..json"} {
		writeFile(t, filepath.Join(runs, name), appleDouble)
	}
	out := filepath.Join(t.TempDir(), "public")
	code, stdout, stderr := matrixgenCmd(t, "build", "-runs", runs, "-o", out)
	if code != 0 || !builtMsg.MatchString(stdout) {
		t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
	}
}

// hostileNames are pieces of file names that try to forge a line of the
// command's output, move the cursor or reorder what a reader sees.
var hostileNames = []string{"a", "b", "-", ".", " ", "\n", "\r", "\t", "\x1b[2J", "\x1b]0;pwned\x07", "\u202e", "\u2066",
	"\u200f", "\u2028", "\u0085", "\"", "\\", "é", "名", "\nmatrixgen build: built 9 pages from 9 runs", "\rmatrixgen"}

// TestOutsideNamesCannotForgeOutput: run files whose names hold newlines,
// escape sequences and right-to-left overrides, generated: the build's
// message names each (quoted, as term.Name prints it) on a line of its own
// making, and holds no character that moves or reorders the text.
func TestOutsideNamesCannotForgeOutput(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 5))
	for round := range 10 {
		runs := t.TempDir()
		var names []string
		for range 6 {
			var b strings.Builder
			for n := 1 + rng.IntN(5); n > 0; n-- {
				b.WriteString(hostileNames[rng.IntN(len(hostileNames))])
			}
			name := "x" + b.String() + ".json"
			if os.WriteFile(filepath.Join(runs, name), []byte("{}"), 0o644) == nil {
				names = append(names, filepath.Join(runs, name))
			}
		}
		code, stdout, stderr := matrixgenCmd(t, "build", "-runs", runs, "-o", filepath.Join(t.TempDir(), "public"))
		said := stdout + stderr
		if code != 1 {
			t.Fatalf("round %d: exit %d\n%s", round, code, said)
		}
		if strings.ContainsAny(said, "\r\x1b\u202e\u2066\u200f\u2028\u0085") {
			t.Errorf("round %d: the output holds a control or reordering character: %q", round, said)
		}
		for _, line := range strings.Split(strings.TrimSuffix(said, "\n"), "\n") {
			if !strings.HasPrefix(line, "matrixgen build: ") && !strings.HasPrefix(line, "  ") {
				t.Errorf("round %d: a line the build did not start: %q\n%s", round, line, said)
			}
		}
		for _, name := range names {
			if !strings.Contains(said, term.Name(name)) {
				t.Errorf("round %d: %s is not named:\n%s", round, term.Name(name), said)
			}
		}
	}
}
