package site

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/matrixgen/matrixgen/internal/testrun"
	"github.com/matrixgen/matrixgen/render"
)

// recorder is a pageCache's advice to the kernel, recorded instead.
type recorder struct {
	mu                    sync.Mutex
	dropped               []string
	writebacks, dropFront int
}

func (r *recorder) names() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.dropped)
}

// record makes c advise r instead of the kernel.
func (r *recorder) record(c *pageCache) *pageCache {
	c.drop = func(name string) {
		r.mu.Lock()
		r.dropped = append(r.dropped, name)
		r.mu.Unlock()
	}
	c.writeback = func(fd int, from int64) {
		r.mu.Lock()
		r.writebacks++
		r.mu.Unlock()
	}
	c.dropFront = func(fd int, end int64) {
		r.mu.Lock()
		r.dropFront++
		r.mu.Unlock()
	}
	return c
}

// TestPageCacheLetsGoOfTheOldest: a file goes once the limit's worth of
// bytes has passed after it; files written before the build passed the
// limit, not sent to disk when written, are dropped twice (the first drop
// sends them); files are sent to disk as written only from then on.
func TestPageCacheLetsGoOfTheOldest(t *testing.T) {
	var r recorder
	c := r.record(&pageCache{limit: 100, chunk: 10})
	steps := []struct {
		name      string
		size      int64
		writeback bool
		want      []string
	}{
		{"a", 40, false, nil},
		{"b", 40, false, nil},
		{"c", 30, true, nil}, // 110: past the limit, from now on sent at once
		{"d", 30, true, []string{"a"}},
		{"e", 40, true, []string{"a", "b"}},
		{"f", 100, true, []string{"a", "b", "c", "d", "a", "e", "b"}},
		{"g", 99, true, []string{"a", "b", "c", "d", "a", "e", "b"}},
		{"h", 1, true, []string{"a", "b", "c", "d", "a", "e", "b", "f", "c"}},
	}
	for _, s := range steps {
		c.done(s.name, s.size)
		if got := r.names(); !slices.Equal(got, s.want) {
			t.Fatalf("after %s (%d bytes) dropped %q, want %q", s.name, s.size, got, s.want)
		}
		if got := c.writebackNow() != nil; got != s.writeback {
			t.Fatalf("after %s files written are sent to disk at once: %v, want %v", s.name, got, s.writeback)
		}
	}
	var none *pageCache
	none.done("x", 1<<40) // a build without one: nothing to do, no panic
	if none.writebackNow() != nil {
		t.Error("a build without a page cache's bound sends files to disk")
	}
}

// TestPageCacheFromManyWriters: the build's workers write at once; every
// file is dropped once its due has passed, twice at most, and none whose
// due has passed waits.
func TestPageCacheFromManyWriters(t *testing.T) {
	var r recorder
	c := r.record(&pageCache{limit: 1000, chunk: 10})
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			for i := range 500 {
				c.done(fmt.Sprintf("w%d-%d", w, i), int64(1+i%7))
			}
		})
	}
	wg.Wait()
	seen := map[string]int{}
	for _, name := range r.names() {
		seen[name]++
	}
	for _, f := range c.pending {
		if f.due <= c.total {
			t.Errorf("%s waits, due at %d bytes of %d", f.name, f.due, c.total)
		}
		seen[f.name] += 0
	}
	for name, n := range seen {
		if n > 2 {
			t.Errorf("%s dropped %d times", name, n)
		}
	}
	if len(seen) != 8*500 {
		t.Errorf("%d files dropped or waiting, of %d", len(seen), 8*500)
	}
}

// watchPageCache makes fresh builds' page caches, the system's, advise r
// instead of the kernel, with a limit of one byte so that every file goes
// as soon as the next is done; it gives the last one made.
func watchPageCache(t *testing.T, r *recorder) func() *pageCache {
	var c *pageCache
	newPageCache = func() *pageCache {
		c = pageCacheOfSystem()
		if canDropCache && (c == nil || c.limit != cacheBehind || c.chunk != streamChunk) {
			t.Fatalf("a fresh build's page cache: %+v", c)
		}
		if c == nil {
			return nil
		}
		c.limit, c.chunk = 1, 1
		return r.record(c)
	}
	t.Cleanup(func() { newPageCache = pageCacheOfSystem })
	return func() *pageCache { return c }
}

// TestBuildLetsGoOfWhatItWroteAndRead: a fresh build hands every run file
// it read and every file it wrote into the new site to the page cache's
// bound, and nothing else; sends them to disk, runs.csv as it streams;
// and keeps each run's measurements.csv until runs.csv reads it back.
// Without it a 100,000-run build grew the cache by 25 GB.
func TestBuildLetsGoOfWhatItWroteAndRead(t *testing.T) {
	if !canDropCache {
		t.Skip("this system takes no advice on its page cache")
	}
	var r recorder
	last := watchPageCache(t, &r)
	runs := t.TempDir()
	var files Files
	for i := range 3 {
		files = append(files, testrun.WriteFile(t, runs, fmt.Sprintf("r%d", i), testrun.Full(uint64(i)), ""))
	}
	out := filepath.Join(t.TempDir(), "public")
	if _, err := Build(files, render.Site{}, out); err != nil {
		t.Fatal(err)
	}
	c := last()
	names := r.names()
	for _, f := range c.pending {
		names = append(names, f.name)
	}
	// The build's folder was renamed into out; what it dropped was named
	// under the folder's name then.
	got := map[string]int{} // the first place in names
	for i, name := range names {
		rel := ""
		if r, ok := strings.CutPrefix(name, runs+string(filepath.Separator)); ok {
			rel = "runs folder: " + r
		} else if r, err := filepath.Rel(filepath.Dir(out), name); err != nil || strings.HasPrefix(r, "..") {
			t.Errorf("dropped %s, neither a run file nor the site's", name)
			continue
		} else {
			_, rel, _ = strings.Cut(filepath.ToSlash(r), "/")
		}
		if _, ok := got[rel]; !ok {
			got[rel] = i
		}
	}
	for _, f := range files {
		if _, ok := got["runs folder: "+filepath.Base(f)]; !ok {
			t.Errorf("run file %s was read and not let go of", filepath.Base(f))
		}
	}
	lastPage, firstMeasurements := -1, len(names)
	for _, id := range []string{"r0", "r1", "r2"} {
		for _, name := range render.RunFiles {
			at, ok := got["runs/"+id+"/"+name]
			switch {
			case !ok:
				t.Errorf("runs/%s/%s was written and not let go of", id, name)
			case name == render.MeasurementsFile:
				firstMeasurements = min(firstMeasurements, at)
			default:
				lastPage = max(lastPage, at)
			}
		}
	}
	if firstMeasurements < lastPage {
		t.Errorf("a measurements.csv was let go of (at %d) before the last run's pages (at %d), not once runs.csv read it back", firstMeasurements, lastPage)
	}
	for _, name := range []string{"index.html", "runs.csv"} {
		if _, ok := got[name]; !ok {
			t.Errorf("%s was written and not let go of", name)
		}
	}
	if r.writebacks < len(names)/2 || r.dropFront == 0 {
		t.Errorf("%d files sent to disk as written of %d, %d parts of runs.csv dropped as it streamed", r.writebacks, len(names), r.dropFront)
	}
	if _, err := os.Stat(filepath.Join(out, "index.html")); err != nil {
		t.Error(err)
	}
}

// TestRebuildLetsGoOfTheOldSite: a build over a site reads the old site's
// pages to keep those unchanged, and lets go of them as of its own.
func TestRebuildLetsGoOfTheOldSite(t *testing.T) {
	if !canDropCache {
		t.Skip("this system takes no advice on its page cache")
	}
	runs := t.TempDir()
	files := Files{testrun.WriteFile(t, runs, "r0", testrun.Full(1), ""), testrun.WriteFile(t, runs, "r1", testrun.Full(2), "")}
	out := filepath.Join(t.TempDir(), "public")
	if _, err := Build(files, render.Site{}, out); err != nil {
		t.Fatal(err)
	}
	var r recorder
	watchPageCache(t, &r)
	if _, err := Build(files, render.Site{}, out); err != nil {
		t.Fatal(err)
	}
	old := 0
	for _, name := range r.names() {
		if strings.HasPrefix(name, filepath.Join(out, "runs")+string(filepath.Separator)) {
			old++
		}
	}
	if old < len(files)*len(render.RunFiles) {
		t.Errorf("%d of the old site's run pages let go of, want all %d: %q", old, len(files)*len(render.RunFiles), r.names())
	}
}
