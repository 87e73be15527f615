//go:build unix

package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"syscall"
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

// TestScaleRunsKeptInAWorkFolder: with a -work folder, the runs are
// written once and reused by the next invocation; a folder whose runs are
// not the ones buildspeed writes (one edited, one missing) is written
// again, and the smaller counts' links always match the largest count's.
func TestScaleRunsKeptInAWorkFolder(t *testing.T) {
	work := t.TempDir()
	inode := func(rel string) uint64 {
		t.Helper()
		info, err := os.Stat(filepath.Join(work, rel))
		if err != nil {
			t.Fatal(err)
		}
		return info.Sys().(*syscall.Stat_t).Ino
	}
	scale := func() []string {
		t.Helper()
		dirs, made, err := scaleRuns(work, []int{2, 3}, true)
		if err != nil {
			t.Fatal(err)
		}
		for _, dir := range made {
			if dir == filepath.Join(work, "runs-3") {
				t.Fatalf("the largest count's runs are listed for removal with -work")
			}
		}
		return dirs
	}
	scale()
	first := inode("runs-3/run-0000.json")
	scale()
	if got := inode("runs-3/run-0000.json"); got != first {
		t.Errorf("the second invocation wrote the runs again (inode %d, was %d)", got, first)
	}
	if err := os.WriteFile(filepath.Join(work, "runs-3", "run-0002.json"), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	scale()
	want, err := syntheticRun(2)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := os.ReadFile(filepath.Join(work, "runs-3", "run-0002.json")); err != nil || !bytes.Equal(got, want) {
		t.Errorf("an edited run was kept: %v", err)
	}
	if err := os.Remove(filepath.Join(work, "runs-3", "run-0001.json")); err != nil {
		t.Fatal(err)
	}
	dirs := scale()
	if inode("runs-2/run-0001.json") != inode("runs-3/run-0001.json") {
		t.Errorf("runs-2 does not link the runs of runs-3")
	}
	if names, _ := filepath.Glob(filepath.Join(dirs[0], "*.json")); len(names) != 2 {
		t.Errorf("runs-2 holds %d runs, want 2", len(names))
	}
}
