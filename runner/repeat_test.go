package runner

import (
	"context"
	"errors"
	"io"
	"path/filepath"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/matrixgen/matrixgen"
	"github.com/matrixgen/matrixgen/stats"
)

// checkRepeats holds a finished run of n repeats: every cell has n, its
// figures are its median repeat's, and the repeats are interleaved — every
// cell's k-th measurement came before any cell's (k+1)-th.
func checkRepeats(t *testing.T, run *matrixgen.Run, n int) {
	t.Helper()
	if run.Sweep.Repeats != n || run.Incomplete {
		t.Fatalf("sweep.repeats %d, incomplete %v", run.Sweep.Repeats, run.Incomplete)
	}
	lastOf, firstOf := make([]time.Time, n), make([]time.Time, n)
	for _, d := range run.Decode {
		if len(d.Repeats) != n {
			t.Fatalf("%s × %d: %d repeats, want %d", d.ContextLabel(), d.Concurrency, len(d.Repeats), n)
		}
		var totals []float64
		for k, r := range d.Repeats {
			if r.Status != matrixgen.StatusValid || len(r.Repeats) > 0 {
				t.Errorf("%s × %d repeat %d: %s, %d nested", d.ContextLabel(), d.Concurrency, k, r.Status, len(r.Repeats))
				continue
			}
			totals = append(totals, *r.TotalTokS)
			if lastOf[k].Before(r.WindowStart) {
				lastOf[k] = r.WindowStart
			}
			if firstOf[k].IsZero() || r.WindowStart.Before(firstOf[k]) {
				firstOf[k] = r.WindowStart
			}
		}
		slices.Sort(totals)
		median := d.Repeats[matrixgen.MedianRepeat(d.Repeats)]
		if *d.TotalTokS != totals[(len(totals)-1)/2] || !d.WindowStart.Equal(median.WindowStart) {
			t.Errorf("%s × %d shows %g, want its median repeat's %g", d.ContextLabel(), d.Concurrency, *d.TotalTokS, totals[(len(totals)-1)/2])
		}
	}
	for k := range n - 1 {
		if !lastOf[k].Before(firstOf[k+1]) {
			t.Errorf("repeat %d of some cell began before repeat %d of another ended: not interleaved", k+2, k+1)
		}
	}
}

// checkIntervals holds every cell of a saved run to the interval of its
// samples as stats computes it, stored with the file (a build reads it):
// over its repeats where it has 3 or more, none on a repeat.
func checkIntervals(t *testing.T, run *matrixgen.Run) {
	t.Helper()
	for _, d := range run.Decode {
		in, level, ok := stats.DecodeInterval(d)
		if got := d.Interval; !ok && got != nil || ok && (got == nil || *got != (matrixgen.Interval{Low: in.Low, High: in.High, Level: level})) {
			t.Errorf("%s × %d: stored interval %+v, want %+v at %g (%v)", d.ContextLabel(), d.Concurrency, got, in, level, ok)
		}
		for k, r := range d.Repeats {
			if r.Interval != nil {
				t.Errorf("%s × %d repeat %d keeps an interval", d.ContextLabel(), d.Concurrency, k+1)
			}
		}
	}
}

// TestRepeatsInterleaved: -repeat 3 measures the whole matrix once, then
// again, and keeps every measurement; the file validates.
func TestRepeatsInterleaved(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, url, dial := startMemSim(t, noisyProfile(1))
		s := testSettings(url, []string{"1K", "2K"}, []int{1, 2}, 2*time.Second)
		s.Sweep.Repeats = 3
		run, file := sweepWith(t, s, dial)
		checkRepeats(t, run, 3)
		saved, err := matrixgen.LoadFile(file)
		if err != nil {
			t.Fatalf("the run file does not load: %v", err)
		}
		checkIntervals(t, saved.Run)
		if saved.Run.Decode[0].Interval == nil {
			t.Error("a cell of 3 repeats was saved without its interval")
		}
	})
}

// TestRepeatsResume stops a sweep of 3 repeats after the second repeat of
// its first cell and resumes it: the repeats made are kept as they were,
// the rest are made, each cell ends with 3.
func TestRepeatsResume(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, url, dial := startMemSim(t, testProfile())
		s := testSettings(url, []string{"1K"}, []int{1, 2}, time.Second)
		s.Sweep.Repeats = 3
		file := filepath.Join(t.TempDir(), "run.json")
		ctx, cancel := context.WithCancel(context.Background())
		log := &cancelAfter{marker: "decode 1K × 1 (2 of 3):", cancel: cancel}
		if _, err := Run(ctx, Options{dial: dial, Settings: s, File: file, Log: log}); !errors.Is(err, context.Canceled) {
			t.Fatalf("an interrupted sweep returned %v", err)
		}
		first, err := matrixgen.LoadFile(file)
		if err != nil {
			t.Fatalf("the interrupted run file does not load: %v", err)
		}
		if got := []int{len(first.Run.Decode[0].Repeats), len(first.Run.Decode[1].Repeats)}; !first.Run.Incomplete || got[0] != 2 || got[1] != 1 {
			t.Fatalf("after the interrupt: incomplete %v, repeats %v, want 2 and 1", first.Run.Incomplete, got)
		}
		run, err := Run(context.Background(), Options{dial: dial, Settings: s, File: file, Resume: true, Log: io.Discard})
		if err != nil {
			t.Fatal(err)
		}
		checkRepeats(t, run, 3)
		checkIntervals(t, first.Run)
		checkIntervals(t, run)
		for k, r := range first.Run.Decode[0].Repeats {
			if !run.Decode[0].Repeats[k].WindowStart.Equal(r.WindowStart) {
				t.Errorf("resuming measured repeat %d of 1K × 1 again", k+1)
			}
		}
	})
}
