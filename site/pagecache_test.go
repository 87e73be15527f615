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

// recordDrops is a pageCache of the given limit that records what it
// lets go of instead of asking the kernel.
func recordDrops(limit int64) (*pageCache, func() []string) {
	var mu sync.Mutex
	var dropped []string
	c := &pageCache{limit: limit, drop: func(name string) {
		mu.Lock()
		dropped = append(dropped, name)
		mu.Unlock()
	}}
	return c, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(dropped)
	}
}

// TestPageCacheLetsGoOfTheOldest: the oldest files go first, and only
// once more than the limit waits.
func TestPageCacheLetsGoOfTheOldest(t *testing.T) {
	c, dropped := recordDrops(100)
	steps := []struct {
		name string
		size int64
		want []string
	}{
		{"a", 40, nil},
		{"b", 40, nil},
		{"c", 20, nil}, // 100: not more than the limit
		{"d", 1, []string{"a"}},
		{"e", 39, []string{"a"}}, // 100 again
		{"f", 200, []string{"a", "b", "c", "d", "e", "f"}},
		{"g", 10, []string{"a", "b", "c", "d", "e", "f"}},
	}
	for _, s := range steps {
		c.done(s.name, s.size)
		if got := dropped(); !slices.Equal(got, s.want) {
			t.Fatalf("after %s (%d bytes) dropped %q, want %q", s.name, s.size, got, s.want)
		}
	}
	var none *pageCache
	none.done("x", 1<<40) // a build without one: nothing to do, no panic
}

// TestPageCacheFromManyWriters: the build's workers write at once; every
// file is dropped once, and what waits stays within the limit.
func TestPageCacheFromManyWriters(t *testing.T) {
	c, dropped := recordDrops(1000)
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
	for _, name := range dropped() {
		seen[name]++
	}
	for name, n := range seen {
		if n != 1 {
			t.Errorf("%s dropped %d times", name, n)
		}
	}
	if c.bytes > c.limit || len(seen)+len(c.pending)-c.head != 8*500 {
		t.Errorf("%d bytes wait over a limit of %d; %d dropped and %d waiting of %d", c.bytes, c.limit, len(seen), len(c.pending)-c.head, 8*500)
	}
}

// TestBuildLetsGoOfWhatItWroteAndRead: a fresh build hands every run file
// it read and every file it wrote into the new site to the page cache's
// bound, and nothing else. Without it a 100,000-run build grew the cache
// by 25 GB.
func TestBuildLetsGoOfWhatItWroteAndRead(t *testing.T) {
	var c *pageCache
	var dropped func() []string
	newPageCache = func() *pageCache {
		c, dropped = recordDrops(1)
		return c
	}
	t.Cleanup(func() { newPageCache = pageCacheOfSystem })
	runs := t.TempDir()
	var files Files
	for i := range 3 {
		files = append(files, testrun.WriteFile(t, runs, fmt.Sprintf("r%d", i), testrun.Full(uint64(i)), ""))
	}
	out := filepath.Join(t.TempDir(), "public")
	if _, err := Build(files, render.Site{}, out); err != nil {
		t.Fatal(err)
	}
	// With a limit of one byte every file goes as soon as it is done
	// (an empty one waits). The build's folder was renamed into out; what
	// it dropped was named under the folder's name then.
	got := map[string]bool{}
	names := dropped()
	for _, f := range c.pending[c.head:] {
		names = append(names, f.name)
	}
	for _, name := range names {
		if rel, ok := strings.CutPrefix(name, runs+string(filepath.Separator)); ok {
			got["runs folder: "+rel] = true
			continue
		}
		rel, err := filepath.Rel(filepath.Dir(out), name)
		if err != nil || strings.HasPrefix(rel, "..") {
			t.Errorf("dropped %s, neither a run file nor the site's", name)
			continue
		}
		_, rel, _ = strings.Cut(filepath.ToSlash(rel), "/")
		got[rel] = true
	}
	for _, f := range files {
		if !got["runs folder: "+filepath.Base(f)] {
			t.Errorf("run file %s was read and not let go of", filepath.Base(f))
		}
	}
	for _, id := range []string{"r0", "r1", "r2"} {
		for _, name := range render.RunFiles {
			if !got["runs/"+id+"/"+name] {
				t.Errorf("runs/%s/%s was written and not let go of", id, name)
			}
		}
	}
	for _, name := range []string{"index.html", "runs.csv"} {
		if !got[name] {
			t.Errorf("%s was written and not let go of", name)
		}
	}
	if _, err := os.Stat(filepath.Join(out, "index.html")); err != nil {
		t.Error(err)
	}
}
