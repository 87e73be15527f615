package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestCommandLine: -h prints help on stdout and exits 0; a command line
// buildspeed cannot use gets one line on stderr naming the mistake and
// exit status 2, before any work.
func TestCommandLine(t *testing.T) {
	for _, tt := range []struct {
		args []string
		code int
		want string // in stdout for 0, in the one line of stderr for 2
	}{
		{[]string{"-h"}, 0, "-rounds"},
		{[]string{"--help"}, 0, "Usage: buildspeed"},
		{[]string{"-rounds", "0"}, 2, "-rounds 0: there must be at least 2 rounds"},
		{[]string{"-rounds", "1"}, 2, "-rounds 1"},
		{[]string{"-rounds", "-3"}, 2, "-rounds -3"},
		{[]string{"-n", "0"}, 2, "-n 0: there must be at least 1 run"},
		{[]string{"-n", "-5"}, 2, "-n -5"},
		{[]string{"-n", "abc"}, 2, `invalid value "abc" for flag -n`},
		{[]string{"-scale", "abc"}, 2, `-scale: "abc" is not a count of runs`},
		{[]string{"-scale", "1000,0"}, 2, `-scale: "0" is not a count of runs`},
		{[]string{"-scale", "1000,-10"}, 2, `"-10" is not a count of runs`},
		{[]string{"-scale", "10", "-rounds", "0"}, 2, "-rounds 0: there must be at least 2 rounds (the first build over a site is not timed), or 1 with -scale"},
		{[]string{"-nope"}, 2, "flag provided but not defined: -nope"},
		{[]string{"extra"}, 2, `unexpected argument "extra"`},
	} {
		var stdout, stderr bytes.Buffer
		code := cli(tt.args, &stdout, &stderr)
		if code != tt.code {
			t.Errorf("%q: exit %d, want %d\nstdout: %s\nstderr: %s", tt.args, code, tt.code, &stdout, &stderr)
			continue
		}
		switch code {
		case 0:
			if !strings.Contains(stdout.String(), tt.want) || stderr.Len() > 0 {
				t.Errorf("%q: stdout %q, stderr %q", tt.args, &stdout, &stderr)
			}
		case 2:
			line := stderr.String()
			if stdout.Len() > 0 || strings.Count(line, "\n") != 1 || !strings.Contains(line, tt.want) {
				t.Errorf("%q: stderr %q, want one line with %q (stdout %q)", tt.args, line, tt.want, &stdout)
			}
		}
	}
}
