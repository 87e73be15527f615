package site

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/matrixgen/matrixgen/internal/testrun"
	"github.com/matrixgen/matrixgen/render"
	"github.com/matrixgen/matrixgen/runfile"
)

// writeRunFile writes r as <id>.json in dir, its notes beside it; bump
// gives a file a later time.
var writeRunFile, bump = testrun.WriteFile, testrun.Touch

// siteFiles reads every file of a site; the marker as the set of files it
// lists, whose order a build does not promise.
func siteFiles(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		data, err := os.ReadFile(p)
		if rel == siteMarker {
			// The marker as the files it lists, its appended changes
			// applied.
			files, ok := markerFiles(data)
			if !ok {
				t.Errorf("%s is not a marker: %.80q", p, data)
			}
			data = markerText(slices.Sorted(maps.Keys(files)))
		}
		out[filepath.ToSlash(rel)] = string(data)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// sameAsAFreshBuild: after a build over a site, the site is what a full
// build of the same files makes, file for file, byte for byte.
func sameAsAFreshBuild(t *testing.T, runs, out string, site render.Site) {
	t.Helper()
	got, want := siteFiles(t, out), freshBuild(t, runs, site)
	sameFiles(t, got, want)
}

// liveSameAsAFreshBuild: after every update the live site is what a full
// build of the same files makes, file for file, byte for byte, but for
// what serve does not write after a change: runs.csv and its parts, made
// on request and so gone from the folder (what SiteCSV makes is the fresh
// build's), and the reuse cache, the initial build's (a later build over
// the site is checked against a fresh one apart).
func liveSameAsAFreshBuild(t *testing.T, live *Live, runs, out string, site render.Site) {
	t.Helper()
	got, want := siteFiles(t, out), freshBuild(t, runs, site)
	delete(got, cacheFile)
	delete(want, cacheFile)
	if live.csvGone {
		files, _ := markerFiles([]byte(want[siteMarker]))
		maps.DeleteFunc(files, func(name string, _ bool) bool { return name == "runs.csv" || strings.HasPrefix(name, "runs-") })
		want[siteMarker] = string(markerText(slices.Sorted(maps.Keys(files))))
	}
	for name, w := range want {
		if name != "runs.csv" && !strings.HasPrefix(name, "runs-") {
			continue
		}
		if _, ok := got[name]; ok && live.csvGone {
			t.Errorf("the live site still has %s after a change", name)
		}
		var b strings.Builder
		if ok, err := live.SiteCSV(&b, name); err != nil || !ok {
			t.Errorf("SiteCSV(%s): %v, %v", name, ok, err)
		} else if b.String() != w {
			t.Errorf("%s as served differs from a fresh build's", name)
		}
		got[name] = w
	}
	sameFiles(t, got, want)
}

// freshBuild builds the run files in runs into a new folder and reads it.
func freshBuild(t *testing.T, runs string, site render.Site) map[string]string {
	t.Helper()
	files, err := runfile.Files(runs)
	if err != nil {
		t.Fatal(err)
	}
	fresh := filepath.Join(t.TempDir(), "fresh")
	if _, err := Build(Files(files), site, fresh); err != nil {
		t.Fatal(err)
	}
	return siteFiles(t, fresh)
}

func sameFiles(t *testing.T, got, want map[string]string) {
	t.Helper()
	for name, w := range want {
		if g, ok := got[name]; !ok {
			t.Errorf("the site lacks %s", name)
		} else if g != w {
			t.Errorf("%s differs from a fresh build's", name)
		}
	}
	for name := range got {
		if _, ok := want[name]; !ok {
			t.Errorf("the site still has %s", name)
		}
	}
}

// liveUpdater updates live from the run files in runs and checks the
// site out is then what a fresh build makes, giving what it did.
func liveUpdater(t *testing.T, live *Live, runs, out string, site render.Site) func(what string) render.Stats {
	return func(what string) render.Stats {
		t.Helper()
		files, err := runfile.Files(runs)
		if err != nil {
			t.Fatal(err)
		}
		stats, err := live.Update(files)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		liveSameAsAFreshBuild(t, live, runs, out, site)
		return stats
	}
}

// TestLiveUpdates changes a run, its notes, adds one, removes one, and
// breaks one: after each the live site equals a fresh build, only the
// pages the change touches are written, and a bad run writes nothing.
func TestLiveUpdates(t *testing.T) {
	runs := t.TempDir()
	site := render.Site{Title: "Live", BaseURL: "https://example.org/"}
	var files []string
	for i := range 4 {
		r := testrun.Full(uint64(i))
		r.Model.Name, r.Hardware.GPU = "model", "GPU" // one model and GPU: compare pages
		files = append(files, writeRunFile(t, runs, fmt.Sprintf("run-%d", i), r, ""))
	}
	out := filepath.Join(t.TempDir(), "public")
	live, _, err := NewLive(context.Background(), files, site, out)
	if err != nil {
		t.Fatal(err)
	}
	update := liveUpdater(t, live, runs, out, site)
	untouched := filepath.Join(out, "runs", "run-3", "index.html")
	before, _ := os.Stat(untouched)

	changed := testrun.Full(1)
	changed.Model.Name, changed.Hardware.GPU, changed.Engine.Version = "model", "GPU", "0.31.0"
	writeRunFile(t, runs, "run-1", changed, "")
	if s := update("a changed run"); s.Pages != 2 {
		t.Errorf("a changed run rewrote %d pages, want its own and the index", s.Pages)
	}
	if after, _ := os.Stat(untouched); !after.ModTime().Equal(before.ModTime()) {
		t.Error("a run that did not change was written again")
	}
	if err := os.WriteFile(filepath.Join(runs, "run-2.md"), []byte("Some *notes*."), 0o644); err != nil {
		t.Fatal(err)
	}
	bump(t, filepath.Join(runs, "run-2.md"))
	update("new notes")
	if !strings.Contains(read(t, filepath.Join(out, "runs", "run-2", "index.html")), "<em>notes</em>") {
		t.Error("the notes are not on the page")
	}
	added := testrun.Full(9)
	added.Model.Name, added.Hardware.GPU = "model", "GPU"
	writeRunFile(t, runs, "run-9", added, "")
	update("an added run")
	if err := os.Remove(filepath.Join(runs, "run-0.json")); err != nil {
		t.Fatal(err)
	}
	update("a removed run")
	if _, err := os.Stat(filepath.Join(out, "runs", "run-0")); !errors.Is(err, fs.ErrNotExist) {
		t.Error("the removed run's folder is still there")
	}

	// A broken run: the error names it, and nothing is written.
	index := read(t, filepath.Join(out, "index.html"))
	bad := filepath.Join(runs, "run-2.json")
	if err := os.WriteFile(bad, []byte(`{"schema": 1, "tool": 7}`), 0o644); err != nil {
		t.Fatal(err)
	}
	bump(t, bad)
	files, _ = runfile.Files(runs)
	_, err = live.Update(files)
	var badRuns *render.BadRunsError
	if !errors.As(err, &badRuns) || !strings.Contains(err.Error(), "run-2.json") {
		t.Errorf("a broken run: %v", err)
	}
	if read(t, filepath.Join(out, "index.html")) != index {
		t.Error("a failed update wrote the index")
	}
	// Mended, it is taken up.
	mended := testrun.Full(2)
	mended.Model.Name, mended.Hardware.GPU = "model", "GPU"
	writeRunFile(t, runs, "run-2", mended, "")
	update("a mended run")
	if s := update("nothing"); s.Pages != 0 {
		t.Errorf("with nothing changed, %d pages written", s.Pages)
	}
	// The reuse cache is the first build's: a build over the served site
	// builds the runs that changed since, reuses the others, and makes
	// what a fresh build makes, runs.csv and all.
	files, _ = runfile.Files(runs)
	stats, err := Build(Files(files), site, out)
	if err != nil {
		t.Fatal(err)
	}
	if stats.Reused != 1 || len(stats.Kept) > 0 {
		t.Errorf("a build after serve reused %d runs (want run-3, the one unchanged) and kept %v", stats.Reused, stats.Kept)
	}
	sameAsAFreshBuild(t, runs, out, site)
}

// BenchmarkLiveUpdate is `matrixgen serve` after a change to a site of
// 1,000 or 10,000 runs: one run changed (read again, its pages, the page
// of the index it is on and its chunk), or one run added, the newest (its
// pages and what lists it). It reports the files and bytes the update
// wrote (files replaced, found by the file system, not by asking the code
// that wrote them). Target: under 100 ms, and bytes that do not grow with
// the site.
func BenchmarkLiveUpdate(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		for _, how := range []string{"change", "add"} {
			b.Run(fmt.Sprintf("runs=%d/%s", n, how), func(b *testing.B) {
				runs := b.TempDir()
				var files []string
				for i := range n {
					files = append(files, writeRunFile(b, runs, fmt.Sprintf("run-%06d", i), testrun.Full(uint64(i)), ""))
				}
				out := filepath.Join(b.TempDir(), "public")
				live, _, err := NewLive(context.Background(), files, render.Site{}, out)
				if err != nil {
					b.Fatal(err)
				}
				var written, bytes int64
				i := 0
				for b.Loop() {
					b.StopTimer()
					before := fileStates(b, out)
					if how == "add" {
						// A run started an hour after the newest: the index's first.
						files = append(files, writeRunFile(b, runs, fmt.Sprintf("run-%06d", n+i), testrun.Full(uint64(n+i)), ""))
					} else {
						bump(b, files[i%len(files)])
					}
					i++
					b.StartTimer()
					if _, err := live.Update(files); err != nil {
						b.Fatal(err)
					}
					b.StopTimer()
					for name, f := range rewritten(before, fileStates(b, out)) {
						written++
						bytes += f.Size()
						// A file appended to (the marker) costs what was
						// appended, not its size.
						if old, ok := before[name]; ok && os.SameFile(old, f) && f.Size() > old.Size() {
							bytes -= old.Size()
						}
					}
					b.StartTimer()
				}
				b.ReportMetric(float64(written)/float64(b.N), "files/op")
				b.ReportMetric(float64(bytes)/float64(b.N), "written-B/op")
			})
		}
	}
}

// fileStates are the files of the site in dir as the file system has
// them, by slash-separated name.
func fileStates(t testing.TB, dir string) map[string]fs.FileInfo {
	t.Helper()
	out := map[string]fs.FileInfo{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := os.Lstat(p)
		rel, _ := filepath.Rel(dir, p)
		out[filepath.ToSlash(rel)] = info
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// rewritten are the files of after that are not the files of before:
// new, replaced (renamed over: another file) or written in place (another
// time or size).
func rewritten(before, after map[string]fs.FileInfo) map[string]fs.FileInfo {
	out := map[string]fs.FileInfo{}
	for name, a := range after {
		b, ok := before[name]
		if !ok || !os.SameFile(a, b) || !a.ModTime().Equal(b.ModTime()) || a.Size() != b.Size() {
			out[name] = a
		}
	}
	return out
}

// TestLiveUpdateWritesOnlyItsFiles: a changed run costs its own files, the
// page of the index it is on and its chunk, whatever the size of the site:
// no runs.csv, no reuse cache, no other page. A run added, the newest,
// costs its own files, the newest page and the last chunk, and what counts
// every run (site.js, the values scripts) and lists every file (the
// marker); once the newest page is full, also that page under its own
// name and the one before it, whose newer page it now is. The files
// written are found by the file system (a file renamed over another is
// another file), for each run of the site changed in turn, then for runs
// added.
func TestLiveUpdateWritesOnlyItsFiles(t *testing.T) {
	smallIndex(t, 2, 3)
	runs := t.TempDir()
	var files []string
	for i := range 7 {
		files = append(files, writeRunFile(t, runs, fmt.Sprintf("run-%d", i), testrun.Full(uint64(i)), ""))
	}
	out := filepath.Join(t.TempDir(), "public")
	live, _, err := NewLive(context.Background(), files, render.Site{}, out)
	if err != nil {
		t.Fatal(err)
	}
	written := func(what string, want []string, update func()) {
		t.Helper()
		slices.Sort(want)
		before := fileStates(t, out)
		update()
		if _, err := live.Update(files); err != nil {
			t.Fatal(err)
		}
		var got []string
		for name := range rewritten(before, fileStates(t, out)) {
			got = append(got, name)
		}
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Errorf("%s: wrote %q, want %q", what, got, want)
		}
		if _, err := os.Stat(filepath.Join(out, "runs.csv")); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s: runs.csv is in the folder after a change: %v", what, err)
		}
	}
	runFiles := func(id string) []string {
		return []string{"runs/" + id + "/compare.js", "runs/" + id + "/index.html", "runs/" + id + "/measurements.csv", "runs/" + id + "/run.json"}
	}
	// From the oldest: index-1.html run-1 run-0 | index-2.html run-3 run-2 |
	// index-3.html run-5 run-4 | index.html run-6, in chunks run-2 run-1
	// run-0 | run-5 run-4 run-3 | run-6.
	for round, i := range []int{3, 0, 6, 1, 3} {
		id := fmt.Sprintf("run-%d", i)
		page := indexPageName(i/2 + 1)
		if i == 6 {
			page = "index.html"
		}
		want := append(runFiles(id), page, indexChunkName(i/3+1))
		if round == 0 {
			// The first change removes runs.csv from the folder, and from
			// the marker's list.
			want = append(want, siteMarker)
		}
		written(fmt.Sprintf("round %d, %s changed", round, id), want, func() {
			changed := testrun.Full(uint64(i))
			changed.Engine.Version = fmt.Sprintf("0.%d.0", 40+round)
			writeRunFile(t, runs, id, changed, "")
		})
	}
	// Runs of a model of their own on a GPU of another's: no compare pair.
	counted := []string{indexSiteName, siteMarker, indexValuesName("gpu", 1), indexValuesName("model", 1),
		indexValuesName("engine", 1), indexValuesName("quantization", 1)}
	for _, c := range []struct {
		id    string
		index []string
	}{
		// run-7 joins run-6 on the newest page.
		{"run-7", []string{"index.html", indexChunkName(3)}},
		// The newest page is full: run-8 starts another, and run-7 run-6
		// are index-4.html, the newer page of index-3.html.
		{"run-8", []string{"index.html", "index-4.html", "index-3.html", indexChunkName(3)}},
		// A new chunk.
		{"run-9", []string{"index.html", indexChunkName(4)}},
	} {
		written(c.id+" added", slices.Concat(runFiles(c.id), c.index, counted), func() {
			seed, _ := strconv.Atoi(strings.TrimPrefix(c.id, "run-"))
			files = append(files, writeRunFile(t, runs, c.id, testrun.Full(uint64(seed)), ""))
		})
	}
}

// TestBuildCountsEveryPage: the pages a build says it wrote are the HTML
// pages in the site, the index's every page among them, for sites of
// one page of the index to several.
func TestBuildCountsEveryPage(t *testing.T) {
	smallIndex(t, 2, 3)
	for _, n := range []int{1, 2, 3, 5} {
		var entries []runfile.Entry
		for i := range n {
			r := testrun.Full(uint64(i))
			r.Model.Name, r.Hardware.GPU = "model", "GPU" // compare pages too
			entries = append(entries, runfile.Entry{ID: fmt.Sprintf("run-%d", i), Run: r})
		}
		out := filepath.Join(t.TempDir(), "public")
		stats, err := Build(render.Entries(entries), render.Site{}, out)
		if err != nil {
			t.Fatal(err)
		}
		html := 0
		for name := range fileStates(t, out) {
			if strings.HasSuffix(name, ".html") {
				html++
			}
		}
		if stats.Pages != html {
			t.Errorf("%d runs: the build says %d pages, the site has %d", n, stats.Pages, html)
		}
	}
}
