//go:build unix

// Command buildspeed times `matrixgen build` on n synthetic full runs and,
// given a Hugo site with a gen.py that writes n run pages, Hugo beside it,
// alternating, printing the medians and their ratio (which does not drift).
//
//	go run ./bench/buildspeed -n 1000 -rounds 5 [-hugo-site DIR]
//	go run ./bench/buildspeed -scale 1000,10000,100000 [-work DIR]
//
// -scale builds a site from nothing for each count of runs, cold where the
// page cache can be dropped, and prints wall time (and until the site is
// synced to disk), CPU, peak RSS and sizes; the runs are written once, the
// smaller counts linked to them, and each site deleted once measured.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/matrixgen/matrixgen/internal/parallel"
	"github.com/matrixgen/matrixgen/internal/plural"
	"github.com/matrixgen/matrixgen/internal/testrun"
	"github.com/matrixgen/matrixgen/runfile"
)

func main() {
	os.Exit(cli(os.Args[1:], os.Stdout, os.Stderr))
}

const usage = `Usage: buildspeed [options]

Times matrixgen build on n synthetic full runs (and Hugo beside it, given
a Hugo site): alternating, several rounds, printing the medians and their
ratio. With -scale, builds once for each count of runs from nothing and
prints wall time, peak RSS and sizes as a table. With -write-runs, only
writes the runs.

Options:
`

// cli is the command: help on stdout and 0 for -h; one line on stderr and
// 2 for a command line it cannot use; 1 when the work fails.
func cli(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("buildspeed", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	n := fs.Int("n", 1000, "runs (and pages), at least 1")
	rounds := fs.Int("rounds", 5, "builds of each, alternating, at least 2 (with -scale: builds of each count, at least 1, and 1 unless given)")
	hugoSite := fs.String("hugo-site", "", "a Hugo `folder` with gen.py, to time beside matrixgen")
	writeOnly := fs.String("write-runs", "", "only write the n synthetic runs into this `folder`, to time builds by hand")
	scale := fs.String("scale", "", "build once for each of these `counts` of runs (1000,10000,100000) and print wall time, peak RSS and sizes")
	workDir := fs.String("work", "", "with -scale, the `folder` to work in, where the runs are kept for the next -scale (default: a temporary one, removed)")
	mistake := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "buildspeed: %s (see buildspeed -h)\n", fmt.Sprintf(format, a...))
		return 2
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(stdout, usage)
			fs.SetOutput(stdout)
			fs.PrintDefaults()
			return 0
		}
		return mistake("%v", err)
	}
	if fs.NArg() > 0 {
		return mistake("unexpected argument %q", fs.Arg(0))
	}
	if *n < 1 {
		return mistake("-n %d: there must be at least 1 run", *n)
	}
	if *rounds < 2 && (*scale == "" || *rounds < 1) {
		return mistake("-rounds %d: there must be at least 2 rounds (the first build over a site is not timed), or 1 with -scale", *rounds)
	}
	scaleRounds := 1 // unless given: a 100,000-run round takes minutes
	fs.Visit(func(f *flag.Flag) {
		if f.Name == "rounds" {
			scaleRounds = *rounds
		}
	})
	var counts []int
	var err error
	if *scale != "" {
		if counts, err = parseCounts(*scale); err != nil {
			return mistake("-scale: %v", err)
		}
	}
	switch {
	case counts != nil:
		err = runScale(counts, scaleRounds, *workDir)
	case *writeOnly != "":
		var bytes int64
		if bytes, err = writeRuns(*writeOnly, *n); err == nil {
			fmt.Printf("wrote %s (%s) into %s\n", plural.Count(*n, "run", "runs"), megabytes(bytes), *writeOnly)
		}
	default:
		err = run(*n, *rounds, *hugoSite)
	}
	if err != nil {
		fmt.Fprintln(stderr, "buildspeed:", err)
		return 1
	}
	return 0
}

// parseCounts reads -scale's list of counts of runs, each at least 1.
func parseCounts(list string) ([]int, error) {
	var counts []int
	for field := range strings.SplitSeq(list, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(field))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("%q is not a count of runs (a whole number, at least 1)", field)
		}
		counts = append(counts, n)
	}
	return counts, nil
}

// timing is one build: wall time, CPU (user + system) and peak RSS.
type timing struct {
	wall, cpu, sys time.Duration
	// synced is the wall time until the site is on disk (-scale only):
	// the build and the sync after it.
	synced time.Duration
	rssMB  float64
}

func run(n, rounds int, hugoSite string) error {
	work, err := os.MkdirTemp("", "buildspeed-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	bin, err := buildMatrixgen(work)
	if err != nil {
		return err
	}
	runs := filepath.Join(work, "runs")
	if _, err := writeRuns(runs, n); err != nil {
		return err
	}
	mg := func(out string) *exec.Cmd {
		return exec.Command(bin, "build", "-runs", runs, "-o", filepath.Join(work, out))
	}
	var hugo func() *exec.Cmd
	if hugoSite != "" {
		site := filepath.Join(work, "hugo")
		if out, err := exec.Command("cp", "-r", hugoSite, site).CombinedOutput(); err != nil {
			return fmt.Errorf("copy the Hugo site: %v\n%s", err, out)
		}
		gen := exec.Command("python3", "gen.py", fmt.Sprint(n))
		gen.Dir = site
		if out, err := gen.CombinedOutput(); err != nil {
			return fmt.Errorf("gen.py: %v\n%s", err, out)
		}
		hugo = func() *exec.Cmd {
			c := exec.Command("hugo", "--quiet")
			c.Dir = site
			return c
		}
	}
	// Each round builds from nothing into a folder of its own, then Hugo
	// over its site. Only then does matrixgen build again over one site, as
	// a lab does after each run: each such build deletes the site it
	// replaces, and files created soon after as many deletions cost the
	// kernel (ext4) a scan of the freed inodes, which belongs to rebuilding,
	// not to building from nothing. The kernel's share is printed apart.
	var first, again, theirs []timing
	for round := range rounds {
		t, err := timed(mg(fmt.Sprintf("fresh-%d", round)))
		if err != nil {
			return fmt.Errorf("matrixgen build: %v", err)
		}
		first = append(first, t)
		if hugo != nil {
			t, err := timed(hugo())
			if err != nil {
				return fmt.Errorf("hugo: %v", err)
			}
			theirs = append(theirs, t)
		}
	}
	for round := range rounds {
		t, err := timed(mg("public"))
		if err != nil {
			return fmt.Errorf("matrixgen build: %v", err)
		}
		if round > 0 {
			again = append(again, t)
		}
	}
	show := func(name string, t timing, of string) {
		fmt.Printf("%-34s %.2f s wall, %.2f s CPU (%.2f s in the kernel), %.0f MB peak RSS (%s)\n", name, t.wall.Seconds(), t.cpu.Seconds(), t.sys.Seconds(), t.rssMB, of)
	}
	f, a := median(first), median(again)
	show(fmt.Sprintf("matrixgen build, %s, first:", plural.Count(n, "run", "runs")), f, fmt.Sprintf("from nothing, median of %d", len(first)))
	show(fmt.Sprintf("matrixgen build, %s, again:", plural.Count(n, "run", "runs")), a, fmt.Sprintf("over its site, median of %d", len(again)))
	if hugo != nil {
		h := median(theirs)
		show(fmt.Sprintf("hugo, %s:", plural.Count(n, "page", "pages")), h, fmt.Sprintf("median of %d", len(theirs)))
		fmt.Printf("ratio matrixgen / hugo: first %.2f wall, %.2f CPU; again %.2f wall, %.2f CPU\n",
			f.wall.Seconds()/h.wall.Seconds(), f.cpu.Seconds()/h.cpu.Seconds(),
			a.wall.Seconds()/h.wall.Seconds(), a.cpu.Seconds()/h.cpu.Seconds())
	}
	return nil
}

// writeRuns writes n synthetic runs into dir, on every core.
func writeRuns(dir string, n int) (bytes int64, err error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return 0, err
	}
	errs := make([]error, n)
	var written atomic.Int64
	parallel.Each(n, func(i int) {
		data, err := syntheticRun(i)
		if err == nil {
			err = os.WriteFile(filepath.Join(dir, runName(i)), data, 0o644)
		}
		written.Add(int64(len(data)))
		errs[i] = err
	})
	return written.Load(), errors.Join(errs...)
}

// syntheticRun is the i-th run writeRuns writes: the same bytes every time.
func syntheticRun(i int) ([]byte, error) {
	// A model of its own each: runs sharing a model and a GPU get
	// compare pages, and Hugo's side has one page a run.
	r := testrun.Full(uint64(i))
	r.Model.Name = fmt.Sprintf("model-%04d", i)
	return runfile.Encode(r)
}

func runName(i int) string { return fmt.Sprintf("run-%04d.json", i) }

// holdsRuns says whether dir holds the n runs writeRuns would write there,
// judged by their count and the first and last run's bytes.
func holdsRuns(dir string, n int) bool {
	names, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil || len(names) != n {
		return false
	}
	for _, i := range []int{0, n - 1} {
		want, err := syntheticRun(i)
		got, readErr := os.ReadFile(filepath.Join(dir, runName(i)))
		if err != nil || readErr != nil || string(got) != string(want) {
			return false
		}
	}
	return true
}

func timed(c *exec.Cmd) (timing, error) {
	c.Stderr = os.Stderr
	start := time.Now()
	if err := c.Run(); err != nil {
		return timing{}, err
	}
	t := timing{wall: time.Since(start), cpu: c.ProcessState.UserTime() + c.ProcessState.SystemTime(), sys: c.ProcessState.SystemTime()}
	if ru, ok := c.ProcessState.SysUsage().(*syscall.Rusage); ok {
		t.rssMB = float64(ru.Maxrss) / 1024 // kilobytes on Linux
	}
	return t, nil
}

// median takes each figure's median on its own.
func median(ts []timing) timing {
	pick := func(get func(timing) float64) float64 {
		v := make([]float64, len(ts))
		for i, t := range ts {
			v[i] = get(t)
		}
		slices.Sort(v)
		// Of an even count, the mean of the middle two: the median of
		// two rounds is not the slower one. Of an odd count both are
		// the middle one.
		return (v[(len(v)-1)/2] + v[len(v)/2]) / 2
	}
	return timing{
		wall:   time.Duration(pick(func(t timing) float64 { return float64(t.wall) })),
		cpu:    time.Duration(pick(func(t timing) float64 { return float64(t.cpu) })),
		sys:    time.Duration(pick(func(t timing) float64 { return float64(t.sys) })),
		synced: time.Duration(pick(func(t timing) float64 { return float64(t.synced) })),
		rssMB:  pick(func(t timing) float64 { return t.rssMB }),
	}
}

// buildMatrixgen builds the command into work.
func buildMatrixgen(work string) (string, error) {
	bin := filepath.Join(work, "matrixgen")
	if out, err := exec.Command("go", "build", "-o", bin, "./cmd/matrixgen").CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build: %v\n%s", err, out)
	}
	return bin, nil
}

// runScale builds a site from nothing for each count of runs, in rounds
// alternating between the counts (so a slower minute falls on every count
// alike), printing a row for each build, then each count's medians and
// their growth over the count before.
func runScale(counts []int, rounds int, work string) error {
	keep := work != ""
	if work == "" {
		tmp, err := os.MkdirTemp("", "buildspeed-scale-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(tmp)
		work = tmp
	} else if err := os.MkdirAll(work, 0o755); err != nil {
		return err
	}
	bin, err := buildMatrixgen(work)
	if err != nil {
		return err
	}
	folders, made, err := scaleRuns(work, counts, keep)
	for _, f := range made {
		defer os.RemoveAll(f)
	}
	if err != nil {
		return err
	}
	dropPageCache() // says, before the tables, whether builds start cold
	fmt.Print("build wall: until the build exits; on disk: until its site is also synced to disk (per run and growth are of this);\n" +
		"CPU: user and kernel time, the kernel's apart; peak RSS: the build's; sizes: of the site built\n\n")
	fmt.Println("| runs | round | build wall | on disk | CPU (kernel) | peak RSS | index.html | runs.csv | site |")
	fmt.Println("|---|---|---|---|---|---|---|---|---|")
	times := make([][]timing, len(counts))
	for round := range rounds {
		for i, n := range counts {
			t, err := scaleRow(bin, work, folders[i], n, round+1)
			if err != nil {
				return err
			}
			times[i] = append(times[i], t)
		}
	}
	fmt.Printf("\nmedians of %s:\n\n", plural.Count(rounds, "round", "rounds"))
	fmt.Println("| runs | build wall | on disk | per run (on disk) | CPU (kernel) | peak RSS | × the count before: wall, on disk |")
	fmt.Println("|---|---|---|---|---|---|---|")
	for i, n := range counts {
		m := median(times[i])
		growth := "–"
		if i > 0 {
			before := median(times[i-1])
			growth = fmt.Sprintf("%.1f×, %.1f× for %.0f× the runs", m.wall.Seconds()/before.wall.Seconds(),
				m.synced.Seconds()/before.synced.Seconds(), float64(n)/float64(counts[i-1]))
		}
		fmt.Printf("| %d | %.2f s | %.2f s | %.2f ms | %.1f s (%.1f s) | %.0f MB | %s |\n", n, m.wall.Seconds(), m.synced.Seconds(),
			m.synced.Seconds()*1000/float64(n), m.cpu.Seconds(), m.sys.Seconds(), m.rssMB, growth)
	}
	return nil
}

// scaleRuns writes the runs for the largest of counts once (kept with keep)
// and gives each count a folder of its first n, hard-linked; it returns
// them, and every folder it made, for the caller to remove.
func scaleRuns(work string, counts []int, keep bool) (dirs, made []string, err error) {
	runs := func(n int) string { return filepath.Join(work, fmt.Sprintf("runs-%d", n)) }
	largest := slices.Max(counts)
	if keep && holdsRuns(runs(largest), largest) {
		fmt.Printf("reusing the %s in %s\n", plural.Count(largest, "run", "runs"), runs(largest))
	} else {
		if err := os.RemoveAll(runs(largest)); err != nil {
			return nil, made, err
		}
		if !keep {
			made = append(made, runs(largest))
		}
		if _, err := writeRuns(runs(largest), largest); err != nil {
			return nil, made, err
		}
	}
	names, err := filepath.Glob(filepath.Join(runs(largest), "*.json"))
	if err != nil {
		return nil, made, err
	}
	slices.Sort(names)
	for _, n := range counts {
		dirs = append(dirs, runs(n))
		if n < largest && !slices.Contains(made, runs(n)) {
			made = append(made, runs(n))
			if err := linkRuns(names[:n], runs(n)); err != nil {
				return nil, made, err
			}
		}
	}
	return dirs, made, nil
}

// linkRuns makes dir anew and puts the files names into it, as hard links
// where it can.
func linkRuns(names []string, dir string) error {
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, name := range names {
		to := filepath.Join(dir, filepath.Base(name))
		if os.Link(name, to) == nil {
			continue
		}
		data, err := os.ReadFile(name)
		if err == nil {
			err = os.WriteFile(to, data, 0o644)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// scaleRow measures one build of the n runs in runs from nothing, prints
// its row, and removes the site.
func scaleRow(bin, work, runs string, n, round int) (timing, error) {
	site := filepath.Join(work, fmt.Sprintf("site-%d", n))
	defer os.RemoveAll(site)
	c := exec.Command(bin, "build", "-runs", runs, "-o", site)
	c.Dir = work // no matrixgen.toml there: the defaults
	// Every build starts with nothing to write back, and is timed again
	// once its site is on disk: a small site is written back after its
	// build, a large one (past the dirty-page threshold) during it.
	syscall.Sync()
	dropPageCache()
	t, err := timed(c)
	if err != nil {
		return t, fmt.Errorf("matrixgen build of %s: %v", plural.Count(n, "run", "runs"), err)
	}
	start := time.Now()
	syscall.Sync()
	t.synced = t.wall + time.Since(start)
	var total int64
	size := map[string]int64{} // by path in the site
	err = filepath.WalkDir(site, func(path string, d os.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			var info os.FileInfo
			if info, err = d.Info(); err == nil {
				total += info.Size()
				size[path] = info.Size()
			}
		}
		return err
	})
	if err != nil {
		return t, err
	}
	fmt.Printf("| %d | %d | %.2f s | %.2f s | %.1f s (%.1f s) | %.0f MB | %s | %s | %s |\n", n, round, t.wall.Seconds(),
		t.synced.Seconds(), t.cpu.Seconds(), t.sys.Seconds(), t.rssMB, megabytes(size[filepath.Join(site, "index.html")]),
		megabytes(size[filepath.Join(site, "runs.csv")]), megabytes(total))
	return t, nil
}

// dropPageCache empties the kernel's page cache where it may (root, on
// Linux), so every build starts cold; it says once whether it could.
func dropPageCache() {
	err := os.WriteFile("/proc/sys/vm/drop_caches", []byte("3"), 0)
	droppedOnce.Do(func() {
		if err != nil {
			fmt.Printf("(the page cache cannot be dropped here, %v: each build starts with what the one before left cached)\n\n", err)
		} else {
			fmt.Print("(each build starts with the page cache dropped)\n\n")
		}
	})
}

var droppedOnce sync.Once

// megabytes shows a size in MB (10^6 bytes), or GB past a thousand.
func megabytes(n int64) string {
	if n >= 1e9 {
		return fmt.Sprintf("%.1f GB", float64(n)/1e9)
	}
	return fmt.Sprintf("%.1f MB", float64(n)/1e6)
}
