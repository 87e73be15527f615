package main

import (
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/matrixgen/matrixgen"
)

// FuzzRunID: whatever a server calls its model and the machine calls
// itself, a new run's id is one the build accepts, starting with its time.
func FuzzRunID(f *testing.F) {
	for _, s := range []string{"", "nvidia/NVIDIA-Nemotron-3.5", "../..", "a..b", "...", "ÿ\x00/\n", strings.Repeat("x", 500)} {
		f.Add(s, s)
	}
	at := time.Date(2026, 12, 4, 16, 24, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, model, host string) {
		id := newRunID(at, model, host)
		if !matrixgen.ValidID(id) || !strings.HasPrefix(id, "2026-12-04-1624-") {
			t.Fatalf("model %q, host %q: id %q", model, host, id)
		}
	})
}

// FuzzCommandLineValues: -contexts and -concurrency either accept a value
// or refuse it with an error, never panic, and what they accept the run
// takes as it is.
func FuzzCommandLineValues(f *testing.F) {
	for _, s := range []string{"8K,32K,max", "1,2,4", "", ",", "0", "-1", "1M", "99999999999999999999", "8K,,16K", " max "} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if list, err := contextList(s); err == nil {
			for _, l := range list {
				if _, perr := matrixgen.ParseContext(l); perr != nil && !strings.EqualFold(l, "max") {
					t.Fatalf("%q accepted %q, which does not parse: %v", s, l, perr)
				}
			}
		}
		if levels, err := levelList(s); err == nil {
			for _, n := range levels {
				if n < 1 {
					t.Fatalf("%q accepted level %d", s, n)
				}
			}
		}
	})
}

// FuzzShellQuote: a quoted argument reads back as itself.
func FuzzShellQuote(f *testing.F) {
	for _, s := range []string{"", "a b", "it's", `'\''`, "http://x/?a=1&b=2", "$HOME", "\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got := shellWords(t, shellQuote(s)); len(got) != 1 || got[0] != s {
			t.Fatalf("%q quoted as %q reads back as %q", s, shellQuote(s), got)
		}
	})
}

// FuzzParsePercent: -fail-on takes anything a person types; it never
// panics, what it accepts is a percentage from 0 up to 100 read as a share
// under 1 (never −0), and the same with "%" or without; given, it is never
// silently no gate.
func FuzzParsePercent(f *testing.F) {
	for _, s := range []string{"5%", "0.05", "", "100%", "-1", "NaN", "1e309%", " 5 %", "99.99", "0x1p3", "Inf", "-0", " ", "-0%"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, set, err := parsePercent(s, true)
		if err == nil && (!set || !(v >= 0 && v < 1) || math.Signbit(v)) {
			t.Errorf("%q accepted as %g (a gate: %v)", s, v, set)
		}
		if err != nil && !strings.Contains(err.Error(), "percentage from 0 up to 100") {
			t.Errorf("%q: the error %q does not say what was expected", s, err)
		}
		if s != "" && !strings.HasSuffix(strings.TrimSpace(s), "%") {
			w, _, err2 := parsePercent(s+"%", true)
			if (err == nil) != (err2 == nil) || w != v {
				t.Errorf("%q gives %g (%v), with %% %g (%v)", s, v, err, w, err2)
			}
		}
	})
}

// FuzzParseFlags: flags anywhere on a command line are parsed; what comes
// back as arguments is the command line's non-flags, in their order, and
// a line without a flag comes back whole.
func FuzzParseFlags(f *testing.F) {
	for _, s := range []string{"a b -format json", "-runs x a", "a -- -b", "a - b", "-h", "a -fail-on", "-force a -force=false b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		args := strings.Fields(line)
		fs := newFlagSet("fuzz")
		fs.String("runs", "runs", "")
		fs.String("format", "text", "")
		fs.Bool("force", false, "")
		positional, err := parseFlags(fs, args)
		if err != nil {
			return
		}
		rest := args
		for _, p := range positional {
			i := slices.Index(rest, p)
			if i < 0 {
				t.Fatalf("%q: argument %q is not on the line, or out of order (%q)", line, p, positional)
			}
			rest = rest[i+1:]
		}
		if !slices.ContainsFunc(args, func(a string) bool { return strings.HasPrefix(a, "-") }) && !slices.Equal(positional, args) {
			t.Fatalf("%q: a line without flags came back as %q", line, positional)
		}
	})
}
