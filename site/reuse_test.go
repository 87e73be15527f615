package site

import (
	"crypto/sha256"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/matrixgen/matrixgen/internal/testrun"
	"github.com/matrixgen/matrixgen/render"
	"github.com/matrixgen/matrixgen/runfile"
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
	site := render.Site{Title: "Reuse"}
	out := filepath.Join(t.TempDir(), "public")
	build := func(site render.Site) render.Stats {
		t.Helper()
		files, err := runfile.Files(runs)
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
	if s := build(render.Site{Title: "Another title"}); s.Reused != 0 {
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

// TestForgedCacheChangesNothing: a well-formed cache written into the site
// by someone else (every run's inputs right, its index line and CSV lines
// forged: a model that is a spreadsheet formula) made the build publish an
// index matching no run. A cache not signed with this user's key is
// dropped, whether it carries another key's signature or none; and a page
// changed in the old site is built again, not linked. After each, the
// site is the bytes a fresh build writes.
func TestForgedCacheChangesNothing(t *testing.T) {
	runs, files, site, out := reuseFixture(t, 3)
	build := func() render.Stats {
		t.Helper()
		stats, err := Build(Files(files), site, out)
		if err != nil {
			t.Fatal(err)
		}
		return stats
	}
	build()
	forged := forgeCache(t, files, site, out)
	for _, cache := range [][]byte{forged, forged[:len(forged)-sha256.Size]} {
		os.Remove(filepath.Join(out, cacheFile))
		if err := os.WriteFile(filepath.Join(out, cacheFile), cache, 0o644); err != nil {
			t.Fatal(err)
		}
		if s := build(); s.Reused != 0 {
			t.Errorf("a forged cache was trusted: %d runs reused", s.Reused)
		}
		sameAsAFreshBuild(t, runs, out, site)
	}
	if s := build(); s.Reused != 3 {
		t.Fatalf("a cache of this user's own: %d of 3 runs reused", s.Reused)
	}
	page := filepath.Join(out, "runs", "run-1", "index.html")
	os.Remove(page) // its bytes are linked into the site before: leave them
	os.WriteFile(page, []byte("<script>forged</script>"), 0o644)
	if s := build(); s.Reused != 2 {
		t.Errorf("with one page changed in the old site: %d runs reused, want 2", s.Reused)
	}
	sameAsAFreshBuild(t, runs, out, site)
}

// forgeCache writes what someone without this user's key could: a cache in
// the right format, for the right inputs and pages, signed with their own
// key, whose index lines and CSV lines are theirs.
func forgeCache(t *testing.T, files []string, site render.Site, out string) []byte {
	t.Helper()
	// The right format, inputs and pages: the cache the build over out
	// wrote, read with this user's key.
	real := loadReuse(out, reuseKey(site), cacheSecret())
	if len(real) != len(files) {
		t.Fatalf("the cache holds %d runs, want %d", len(real), len(files))
	}
	forger := &reuse{key: reuseKey(site), secret: []byte("not this user's key, 32 bytes.."), dest: &folder{dir: t.TempDir()}}
	ids := slices.Sorted(maps.Keys(real))
	err := forger.Save(len(ids), func(yield func(render.CachedRun) bool) {
		for _, id := range ids {
			r := real[id]
			r.Row.Model = `=HYPERLINK("https://evil.example/","click")`
			r.Row.CSVPrefix = "=cmd|' /C calc'!A0,forged,"
			if !yield(r) {
				return
			}
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(forger.dest.dir, cacheFile))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestReuseLinksNoLinkOutOfTheSite: a page of the old site replaced by a
// symbolic link to a copy of itself outside the site has the right bytes,
// but os.Link would link the link: the new site would point out of
// itself. No file of the new site is a link.
func TestReuseLinksNoLinkOutOfTheSite(t *testing.T) {
	runs, files, site, out := reuseFixture(t, 2)
	if _, err := Build(Files(files), site, out); err != nil {
		t.Fatal(err)
	}
	outside := filepath.Join(t.TempDir(), "copies")
	os.MkdirAll(outside, 0o755)
	for _, rel := range []string{"runs/run-0/index.html", "runs/run-0/run.json", "index.html", "methodology.html"} {
		page := filepath.Join(out, filepath.FromSlash(rel))
		data, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		copyOut := filepath.Join(outside, strings.ReplaceAll(rel, "/", "_"))
		os.WriteFile(copyOut, data, 0o644)
		os.Remove(page)
		if err := os.Symlink(copyOut, page); err != nil {
			t.Skip("no symbolic links here:", err)
		}
	}
	if _, err := Build(Files(files), site, out); err != nil {
		t.Fatal(err)
	}
	filepath.WalkDir(out, func(path string, d os.DirEntry, err error) error {
		if err == nil && d.Type()&os.ModeSymlink != 0 {
			target, _ := os.Readlink(path)
			t.Errorf("%s is a link to %s", path, target)
		}
		return err
	})
	sameAsAFreshBuild(t, runs, out, site)
}

// reuseFixture writes n full runs and names where their site goes.
func reuseFixture(t *testing.T, n int) (runs string, files []string, site render.Site, out string) {
	t.Helper()
	runs = t.TempDir()
	for i := range n {
		writeRunFile(t, runs, fmt.Sprintf("run-%d", i), testrun.Full(uint64(i)), "")
	}
	files, err := runfile.Files(runs)
	if err != nil {
		t.Fatal(err)
	}
	return runs, files, render.Site{Title: "Reuse"}, filepath.Join(t.TempDir(), "public")
}
