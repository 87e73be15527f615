package site

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/matrixgen/matrixgen/internal/sitesize"
	"github.com/matrixgen/matrixgen/internal/testrun"
	"github.com/matrixgen/matrixgen/render"
)

// smallIndex makes the index's pages and chunks a few runs each for the
// test, so a handful of runs make a site of many pages.
func smallIndex(t *testing.T, pageRuns, chunkRuns int) {
	t.Helper()
	page, chunk := sitesize.IndexPageRuns, sitesize.IndexChunkRuns
	sitesize.IndexPageRuns, sitesize.IndexChunkRuns = pageRuns, chunkRuns
	t.Cleanup(func() { sitesize.IndexPageRuns, sitesize.IndexChunkRuns = page, chunk })
}

// TestLiveIndexPages: serving a site of many index pages, a changed run
// rewrites its own folder, the one page of the index it is on and its
// chunk, no other; a run added, the newest, rewrites the newest page
// alone, or, once that page is full, writes it as a page of its own and
// starts a new newest, the page before linking it as newer; a page no
// longer needed goes. After each, the site is a fresh build's.
func TestLiveIndexPages(t *testing.T) {
	smallIndex(t, 2, 3)
	runs := t.TempDir()
	site := render.Site{Title: "Live", BaseURL: "https://example.org/"}
	var files []string
	for i := range 7 {
		files = append(files, writeRunFile(t, runs, fmt.Sprintf("run-%d", i), testrun.Full(uint64(i)), ""))
	}
	out := filepath.Join(t.TempDir(), "public")
	live, _, err := NewLive(context.Background(), files, site, out)
	if err != nil {
		t.Fatal(err)
	}
	// From the oldest: index-1.html run-1 run-0 | index-2.html run-3 run-2 |
	// index-3.html run-5 run-4 | index.html run-6, in chunks run-2 run-1
	// run-0 | run-5 run-4 run-3 | run-6.
	index := []string{"index-1.html", "index-2.html", "index-3.html", "index-4.html", "index.html",
		"assets/index/chunk-0001.js", "assets/index/chunk-0002.js", "assets/index/chunk-0003.js"}
	// Every file's time is set back, so a rewrite shows whatever the clock.
	old := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
	setBack := func() {
		for _, f := range index {
			if err := os.Chtimes(filepath.Join(out, f), old, old); err != nil && !errors.Is(err, fs.ErrNotExist) {
				t.Fatal(err)
			}
		}
	}
	rewrote := func(what string, want ...string) {
		t.Helper()
		for _, f := range index {
			info, err := os.Stat(filepath.Join(out, f))
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			if err != nil {
				t.Fatal(err)
			}
			if rewritten := !info.ModTime().Equal(old); rewritten != slices.Contains(want, f) {
				t.Errorf("after %s, %s rewritten: %v, want %v", what, f, rewritten, !rewritten)
			}
		}
	}
	update := liveUpdater(t, live, runs, out, site)
	setBack()
	changed := testrun.Full(3)
	changed.Engine.Version = "0.31.0"
	writeRunFile(t, runs, "run-3", changed, "")
	if s := update("a changed run"); s.Pages != 2 {
		t.Errorf("a changed run rewrote %d pages, want its own and its page of the index", s.Pages)
	}
	rewrote("run-3 changed", "index-2.html", "assets/index/chunk-0002.js")

	setBack()
	writeRunFile(t, runs, "run-9", testrun.Full(9), "")
	if s := update("a run added"); s.Pages != 1+1 {
		t.Errorf("a run added, the newest, rewrote %d pages, want its own and the newest page of the index", s.Pages)
	}
	rewrote("run-9 added", "index.html", "assets/index/chunk-0003.js")

	// The newest page is full (run-9 run-6): the next run starts another.
	setBack()
	writeRunFile(t, runs, "run-10", testrun.Full(10), "")
	if s := update("a run added to a full page"); s.Pages != 1+3 {
		t.Errorf("a run added past a full newest page rewrote %d pages, want its own, the new newest, the full one and the one before", s.Pages)
	}
	rewrote("run-10 added", "index.html", "index-4.html", "index-3.html", "assets/index/chunk-0003.js")

	for _, id := range []string{"run-10", "run-9", "run-6", "run-5"} {
		if err := os.Remove(filepath.Join(runs, id+".json")); err != nil {
			t.Fatal(err)
		}
	}
	update("four runs removed")
	for _, gone := range []string{"index-3.html", "index-4.html"} {
		if _, err := os.Stat(filepath.Join(out, gone)); err == nil {
			t.Errorf("five runs at two a page left %s", gone)
		}
	}
}
