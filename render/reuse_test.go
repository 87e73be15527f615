package render

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/matrixgen/matrixgen"
	"github.com/matrixgen/matrixgen/internal/testrun"
)

// TestReusedPagesAreAFreshBuilds: a build over a site it built before
// links the pages of unchanged runs instead of building them, and writes
// exactly what a fresh build writes, with a run changed, one's notes
// changed, one removed and one added, and, across a change of the site's
// title, reuses nothing.
func TestReusedPagesAreAFreshBuilds(t *testing.T) {
	runs := t.TempDir()
	for i := range 5 {
		r := testrun.Full(uint64(i))
		r.Model.Name = fmt.Sprintf("model-%d", i%2) // pairs: compare pages too
		writeRunFile(t, runs, fmt.Sprintf("run-%d", i), r, "")
	}
	site := Site{Title: "Reuse"}
	out := filepath.Join(t.TempDir(), "public")
	build := func(site Site) Stats {
		t.Helper()
		files, err := matrixgen.RunFiles(runs)
		if err != nil {
			t.Fatal(err)
		}
		stats, err := Build(Files(files), site, out)
		if err != nil {
			t.Fatal(err)
		}
		sameAsAFreshBuild(t, runs, out, site)
		return stats
	}
	if s := build(site); s.Reused != 0 {
		t.Errorf("a first build reused %d runs", s.Reused)
	}
	if s := build(site); s.Reused != 5 {
		t.Errorf("an unchanged site reused %d of 5 runs", s.Reused)
	}
	changed := testrun.Full(1)
	changed.Model.Name, changed.Engine.Version = "model-1", "0.31.0"
	writeRunFile(t, runs, "run-1", changed, "")
	if err := os.WriteFile(filepath.Join(runs, "run-2.md"), []byte("New *notes*."), 0o644); err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(runs, "run-3.json"))
	added := testrun.Full(9)
	added.Model.Name = "model-1"
	writeRunFile(t, runs, "run-9", added, "")
	if s := build(site); s.Reused != 2 {
		t.Errorf("after a change, new notes, a removal and an addition: %d runs reused, want 2 (run-0, run-4)", s.Reused)
	}
	if s := build(Site{Title: "Another title"}); s.Reused != 0 {
		t.Errorf("a new title reused %d runs: their pages carry the old one", s.Reused)
	}
}

// TestExecutableHashIsTheBuildID: the test binary's identity is Go's build
// ID, as `go tool buildid` reads it, not a hash of the whole file.
func TestExecutableHashIsTheBuildID(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("go", "tool", "buildid", exe).Output()
	if err != nil {
		t.Fatal("go tool buildid:", err)
	}
	if got, want := executableHash(), "go-build-id:"+strings.TrimSpace(string(out)); got != want {
		t.Errorf("executableHash() = %q, want %q", got, want)
	}
}
