package main

import (
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

// FuzzParseShare: -fail-on takes anything a person types; it never panics,
// and what it accepts is a share from 0 to under 1.
func FuzzParseShare(f *testing.F) {
	for _, s := range []string{"5%", "0.05", "", "100%", "-1", "NaN", "1e309%", " 5 %"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, set, err := parseShare(s)
		if err == nil && set && !(v >= 0 && v < 1) {
			t.Errorf("%q accepted as %g", s, v)
		}
	})
}
