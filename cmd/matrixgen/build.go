package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"time"

	"github.com/matrixgen/matrixgen/bucket"
	"github.com/matrixgen/matrixgen/config"
	"github.com/matrixgen/matrixgen/internal/plural"
	"github.com/matrixgen/matrixgen/internal/term"
	"github.com/matrixgen/matrixgen/render"
	"github.com/matrixgen/matrixgen/runfile"
	"github.com/matrixgen/matrixgen/site"
)

var buildCommand = command{
	summary: "build the static site from run files",
	usage: `
Usage: matrixgen build [options]

Reads every run file in the runs folder (and the Markdown notes beside each,
<id>.md) and writes a static site: an index of all runs and one page per run
with its run.json and measurements.csv. Pages link relatively, so the site
works opened from disk and under any URL prefix. A failed build lists every
bad file and leaves the previous site untouched.
`,
	examples: `
  matrixgen build
  matrixgen build -runs runs -o public -base-url https://example.org/bench/
`,
	flags: func(fs *flag.FlagSet) func([]string, io.Writer, io.Writer) error {
		runs := fs.String("runs", "runs", "`place` of the run files: a folder, or a bucket URL such as s3://lab/runs/")
		out := fs.String("o", "public", "`place` to write the site: a folder, rebuilt whole (files no build wrote, such as a CNAME, are kept), or a bucket URL to publish to (s3://lab/site/, file:///srv/site/)")
		baseURL := fs.String("base-url", "", "`URL` the site is published at, for canonical links and a sitemap (overrides [site] base_url)")
		cfgFile := configFlag(fs)
		return func(args []string, stdout, stderr io.Writer) error {
			if err := checkPlaces(*runs, *out); err != nil {
				return err
			}
			cfg, err := cfgFile.load()
			if err != nil {
				return err
			}
			if *baseURL != "" {
				if err := config.CheckBaseURL(*baseURL); err != nil {
					return usagef("-base-url: %v", err)
				}
				cfg.Site.BaseURL = *baseURL
			}
			return buildSite(*runs, *out, cfg.Site, stdout)
		}
	},
}

func buildSite(runsDir, out string, settings config.Site, stdout io.Writer) error {
	start := time.Now()
	// A build streams runs through a small live heap while allocating about
	// a megabyte a page, so Go's default GOGC collects every few pages; at
	// 800, 1,000 runs took 29 cycles, not 141, for a peak of 81 MB, not 43.
	if os.Getenv("GOGC") == "" {
		defer debug.SetGCPercent(debug.SetGCPercent(800))
	}
	ctx, stop := interruptible()
	defer stop()
	files, cleanup, err := runFiles(ctx, runsDir, stdout)
	if err != nil {
		return err
	}
	defer cleanup()
	// The collector works harder as the heap nears buildMemory, rather than
	// let it grow with GOGC's headroom.
	if os.Getenv("GOMEMLIMIT") == "" {
		defer debug.SetMemoryLimit(debug.SetMemoryLimit(buildMemory(len(files))))
	}
	if bucket.IsURL(out) {
		return publish(ctx, files, settings, out, start, stdout)
	}
	stats, err := site.BuildContext(ctx, site.Files(files), renderSite(settings), out)
	if ctx.Err() != nil {
		return errors.New("interrupted; nothing was written, the previous site is as it was")
	}
	if bad, ok := errors.AsType[*render.BadRunsError](err); ok {
		return fmt.Errorf("nothing was written; fix these run files first:\n%w", indent(errors.Join(bad.Errs...)))
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "built %s from %s in %s%s\n", plural.Count(stats.Pages, "page", "pages"), plural.Count(stats.Runs, "run", "runs"), took(start), reusedNote(stats))
	if stats.Runs == 0 {
		// Not a mistake, but most often the wrong folder.
		shown := term.Name(runsDir)
		if bucket.IsURL(runsDir) {
			shown = bucket.Redact(runsDir) // a URL may carry a key
		}
		fmt.Fprintf(stdout, "no run files (*.json) in %s: the site lists no runs (-runs names the folder)\n", shown)
	}
	sayHidden(stdout, stats)
	if misnamed := runfile.Misnamed(runsDir); len(misnamed) > 0 && !bucket.IsURL(runsDir) {
		fmt.Fprintf(stdout, "not read, as run files end in .json (lower case): %s\n", render.Names(misnamed))
	}
	if len(stats.Kept) > 0 {
		fmt.Fprintf(stdout, "kept files no build wrote: %s\n", render.Names(stats.Kept))
	}
	if len(stats.Left) > 0 {
		fmt.Fprintf(stdout, "left out of the new site, not regular files: %s\n", render.Names(stats.Left))
	}
	if len(stats.Unproven) > 0 {
		fmt.Fprintf(stdout, "left alone beside the site, named like a build's work but with no lock file that shows its build was killed (remove by hand if no build is running): %s\n", render.Names(stats.Unproven))
	}
	return nil
}

// buildMemory is the soft limit of the heap of a build of n runs: 192 MiB,
// and render.SummaryBytes more for each run, room for what the build keeps
// of it. Without that room the summaries alone came near a fixed limit and
// the collector ran after every 70 MB or so of allocation.
func buildMemory(n int) int64 {
	return 192<<20 + int64(n)*render.SummaryBytes
}

// indent lists joined errors one per line under the message above them:
// only a join itself, never one wrapped inside another error (a store's
// error wraps the SDK's join of its attempts, for errors.Is, not printing).
func indent(err error) error {
	return eachLeaf(err, func(e error) error { return fmt.Errorf("  %w", e) })
}

// eachLeaf is err with each of its joined errors, at any depth, replaced
// by what change makes of it, still joined.
func eachLeaf(err error, change func(error) error) error {
	joined, ok := err.(interface{ Unwrap() []error })
	if !ok {
		return change(err)
	}
	var list []error
	for _, e := range joined.Unwrap() {
		list = append(list, eachLeaf(e, change))
	}
	return errors.Join(list...)
}

func renderSite(site config.Site) render.Site {
	var pairs []render.Pair
	for _, p := range site.Compare {
		pairs = append(pairs, render.Pair(p))
	}
	return render.Site{Title: site.Title, Description: site.Description, BaseURL: site.BaseURL, Compare: pairs, PublishServerAddress: site.PublishServerAddress}
}

// runFiles lists the run files of place: a folder, or a bucket's runs in a
// mirror kept in this machine's cache (so a build fetches what changed).
func runFiles(ctx context.Context, place string, log io.Writer) (files []string, cleanup func(), err error) {
	if !bucket.IsURL(place) {
		files, err = runfile.Files(place)
		return files, func() {}, err
	}
	store, err := bucket.Open(ctx, place)
	if err != nil {
		return nil, nil, err
	}
	defer store.Close()
	dir, cleanup, err := cachedFolder(ctx, "runs", place, "runs", func() {
		fmt.Fprintf(log, "waiting for another build from %s on this machine to finish\n", store)
	})
	if err != nil {
		return nil, nil, err
	}
	fetched, err := store.FetchRuns(ctx, dir)
	if err != nil {
		cleanup()
		return nil, nil, err
	}
	for _, line := range fetched.Skipped {
		fmt.Fprintln(log, line)
	}
	return fetched.Runs, cleanup, nil
}

// publish builds the site into a folder and publishes it to the bucket at
// place: changed objects written, then the ones it no longer has removed.
func publish(ctx context.Context, files []string, settings config.Site, place string, start time.Time, stdout io.Writer) error {
	store, err := bucket.OpenForWriting(ctx, place)
	if err != nil {
		return err
	}
	defer store.Close()
	// A folder kept from one publish to the next keeps unchanged runs' pages.
	dir, cleanup, err := cachedFolder(ctx, "publish", place, "public", func() {
		fmt.Fprintf(stdout, "waiting for another publish to %s from this machine to finish\n", store)
	})
	if err != nil {
		return err
	}
	defer cleanup()
	stats, err := site.BuildContext(ctx, site.Files(files), renderSite(settings), dir)
	if bad, ok := errors.AsType[*render.BadRunsError](err); ok {
		return fmt.Errorf("nothing was published; fix these run files first:\n%w", indent(errors.Join(bad.Errs...)))
	}
	if err != nil {
		return err
	}
	p, err := store.Publish(ctx, dir)
	switch {
	case err != nil && p.Written == 0: // refused before a page was written (a runs folder's place, say)
		return fmt.Errorf("publishing to %s: %w (no page of the published site changed)", store, err)
	case err != nil:
		return fmt.Errorf("publishing to %s: %w (the objects written so far are the new site's; run the build again)", store, err)
	}
	fmt.Fprintf(stdout, "built %s from %s (%d unchanged since the last publish from here) and published them to %s in %s: %s written, %d unchanged, %d removed\n",
		plural.Count(stats.Pages, "page", "pages"), plural.Count(stats.Runs, "run", "runs"), stats.Reused, store, took(start),
		plural.Count(p.Written, "object", "objects"), p.Unchanged, p.Removed)
	sayHidden(stdout, stats)
	return nil
}

// cachedFolder is the folder name of this machine's cache kept for place
// (by kind: "publish", "runs"), held by one command at a time until
// cleanup; a temporary one where there is no cache folder.
func cachedFolder(ctx context.Context, kind, place, name string, waiting func()) (dir string, cleanup func(), err error) {
	if cache, err := os.UserCacheDir(); err == nil {
		dir := filepath.Join(cache, "matrixgen", kind, bucket.Where(place), name)
		if err := os.MkdirAll(filepath.Dir(dir), 0o755); err == nil {
			unlock, err := lockFolder(ctx, filepath.Dir(dir), waiting)
			if err != nil {
				return "", nil, fmt.Errorf("holding the folder %s: %w", filepath.Dir(dir), err)
			}
			return dir, unlock, nil
		}
	}
	tmp, err := os.MkdirTemp("", "matrixgen-"+kind+"-")
	if err != nil {
		return "", nil, err
	}
	return filepath.Join(tmp, name), func() { os.RemoveAll(tmp) }, nil
}

func took(start time.Time) string { return durationText(time.Since(start)) }

// durationText is "20 ms" under a second, "10.3 s" under a minute, "3 min
// 8 s" past it.
func durationText(d time.Duration) string {
	if d < time.Second {
		return fmt.Sprintf("%d ms", d.Milliseconds())
	}
	if d = d.Round(100 * time.Millisecond); d < time.Minute {
		return fmt.Sprintf("%.1f s", d.Seconds())
	}
	d = d.Round(time.Second)
	return fmt.Sprintf("%d min %d s", int(d.Minutes()), int(d.Seconds())%60)
}

// sayHidden names the runs whose launch command the build hid a secret in,
// every time, until the run file is mended.
func sayHidden(w io.Writer, stats render.Stats) {
	if len(stats.Hidden) > 0 {
		fmt.Fprintf(w, "hid what looks like a secret in the launch command of %s on the site: %s (hide it in the run file too; matrixgen validate names every field)\n",
			plural.Count(len(stats.Hidden), "run", "runs"), render.Names(stats.Hidden))
	}
}

// reusedNote says how many runs' pages a build kept from the site it replaced.
func reusedNote(stats render.Stats) string {
	if stats.Reused == 0 {
		return ""
	}
	return fmt.Sprintf(" (%s unchanged: %s kept)", plural.Count(stats.Reused, "run", "runs"), plural.Noun(stats.Reused, "its pages", "their pages"))
}
