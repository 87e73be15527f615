package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"syscall"
	"time"

	"github.com/matrixgen/matrixgen"
	"github.com/matrixgen/matrixgen/config"
	"github.com/matrixgen/matrixgen/render"
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

Examples:
  matrixgen build
  matrixgen build -runs runs -o public -base-url https://example.org/bench/
`,
	flags: func(fs *flag.FlagSet) func([]string, io.Writer) error {
		runs := fs.String("runs", "runs", "folder of run files (`dir`)")
		out := fs.String("o", "public", "output folder (`dir`), replaced as a whole")
		baseURL := fs.String("base-url", "", "URL the site is published at, for canonical links (overrides [site] base_url)")
		cfgFile := fs.String("config", config.DefaultFile, "configuration `file`; the default may be absent")
		return func(args []string, stdout io.Writer) error {
			if len(args) > 0 {
				return fmt.Errorf("unexpected arguments %q", args)
			}
			cfg, err := loadConfig(fs, *cfgFile)
			if err != nil {
				return err
			}
			if *baseURL != "" {
				cfg.Site.BaseURL = *baseURL
				if cfg, err = config.Validated(cfg); err != nil {
					return err
				}
			}
			return buildSite(*runs, *out, cfg.Site, stdout)
		}
	},
}

func buildSite(runsDir, out string, site config.Site, stdout io.Writer) error {
	start := time.Now()
	// A build streams runs through a small heap: collect garbage less often
	// than Go's default (which would run hundreds of cycles on a big site)
	// unless the person running it chose a GOGC.
	if os.Getenv("GOGC") == "" {
		defer debug.SetGCPercent(debug.SetGCPercent(400))
	}
	files, err := matrixgen.RunFiles(runsDir)
	if err != nil {
		return err
	}
	var pairs []render.Pair
	for _, p := range site.Compare {
		pairs = append(pairs, render.Pair{A: p.A, B: p.B})
	}
	// Ctrl-C stops the build and removes what it began; the previous site
	// stays as it was.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	stats, err := render.BuildContext(ctx, render.Files(files), render.Site{Title: site.Title, Description: site.Description, BaseURL: site.BaseURL, Compare: pairs}, out)
	if ctx.Err() != nil {
		return errors.New("interrupted; nothing was written, the previous site is as it was")
	}
	var bad *render.BadRunsError
	if errors.As(err, &bad) {
		return fmt.Errorf("nothing was written; fix these run files first:\n%w", indent(errors.Join(bad.Errs...)))
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "built %d pages from %d runs in %d ms\n", stats.Pages, stats.Runs, time.Since(start).Milliseconds())
	if len(stats.Kept) > 0 {
		fmt.Fprintf(stdout, "kept files no build wrote: %s\n", strings.Join(stats.Kept, ", "))
	}
	return nil
}

// indent lists joined errors one per line under the message above them.
func indent(err error) error {
	var joined interface{ Unwrap() []error }
	if !errors.As(err, &joined) {
		return fmt.Errorf("  %w", err)
	}
	var list []error
	for _, e := range joined.Unwrap() {
		list = append(list, indent(e))
	}
	return errors.Join(list...)
}
