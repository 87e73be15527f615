package runner

import (
	"context"
	"errors"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/matrixgen/matrixgen"
	"github.com/matrixgen/matrixgen/runfile"
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
		saved, err := runfile.Load(file)
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
		first, err := runfile.Load(file)
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

// TestRepeatsResumeRetriesFailed: a run of 3 repeats whose file holds a
// failed repeat (error) in one cell and a cell whose every repeat failed
// is resumed: the failed repeats are measured again rather than kept as
// made, the good ones kept as they were, each cell ends with 3 valid
// repeats, and the log says how many were taken out.
func TestRepeatsResumeRetriesFailed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, url, dial := startMemSim(t, testProfile())
		s := testSettings(url, []string{"1K"}, []int{1, 2}, time.Second)
		s.Sweep.Repeats = 3
		file := filepath.Join(t.TempDir(), "run.json")
		if _, err := Run(context.Background(), Options{dial: dial, Settings: s, File: file, Log: io.Discard}); err != nil {
			t.Fatal(err)
		}
		e, err := runfile.Load(file)
		if err != nil {
			t.Fatal(err)
		}
		failed := func(d matrixgen.Decode) matrixgen.Decode {
			return matrixgen.Decode{ContextTokens: d.ContextTokens, Concurrency: d.Concurrency, Status: matrixgen.StatusError, Reason: "HTTP 500"}
		}
		one, all := &e.Run.Decode[0], &e.Run.Decode[1]
		kept := []matrixgen.Decode{one.Repeats[0], one.Repeats[2]}
		repeats := []matrixgen.Decode{one.Repeats[0], failed(*one), one.Repeats[2]}
		*one = matrixgen.Decode{}
		for _, m := range repeats {
			one.AddRepeat(m)
		}
		repeats = []matrixgen.Decode{failed(*all), failed(*all), failed(*all)}
		*all = matrixgen.Decode{}
		for _, m := range repeats {
			all.AddRepeat(m)
		}
		e.Run.Incomplete = true
		if err := runfile.Save(file, e.Run); err != nil {
			t.Fatal(err)
		}
		resumed := time.Now()
		var log strings.Builder
		run, err := Run(context.Background(), Options{dial: dial, Settings: s, File: file, Resume: true, Log: &log})
		if err != nil {
			t.Fatal(err)
		}
		if run.Incomplete || !strings.Contains(log.String(), "resume: 4 repeats that failed to be measured again") {
			t.Errorf("incomplete %v; log:\n%s", run.Incomplete, log.String())
		}
		for _, d := range run.Decode {
			if len(d.Repeats) != 3 || d.Status != matrixgen.StatusValid {
				t.Fatalf("%s × %d: %d repeats, %s", d.ContextLabel(), d.Concurrency, len(d.Repeats), d.Status)
			}
			for k, r := range d.Repeats {
				if r.Status != matrixgen.StatusValid {
					t.Errorf("%s × %d repeat %d: %s", d.ContextLabel(), d.Concurrency, k+1, r.Status)
				}
			}
		}
		for k, r := range kept {
			if !run.Decode[0].Repeats[k].WindowStart.Equal(r.WindowStart) {
				t.Errorf("a good repeat of 1K × 1 was measured again or moved: %d", k+1)
			}
		}
		if got := run.Decode[0].Repeats[2].WindowStart; got.Before(resumed) {
			t.Errorf("the failed repeat of 1K × 1 was kept, not measured again (its window began %v, the resume %v)", got, resumed)
		}
	})
}

// TestDropFailedRepeats: a cell keeps its repeats with a result, its
// figures its median kept one's; a cell with none kept is not run; a cell
// never repeated, failed or not, is left as it is (a resume retries a
// failed one already).
func TestDropFailedRepeats(t *testing.T) {
	valid := func(rate float64) matrixgen.Decode {
		return matrixgen.Decode{ContextTokens: 1024, Concurrency: 1, Status: matrixgen.StatusValid, TotalTokS: &rate}
	}
	bad := matrixgen.Decode{ContextTokens: 1024, Concurrency: 1, Status: matrixgen.StatusError, Reason: "x"}
	var mixed, failedOnly matrixgen.Decode
	for _, m := range []matrixgen.Decode{valid(10), bad, valid(30), valid(20)} {
		mixed.AddRepeat(m)
	}
	failedOnly.AddRepeat(bad)
	plain := bad
	run := &matrixgen.Run{Decode: []matrixgen.Decode{mixed, failedOnly, plain}}
	if n := dropFailedRepeats(run); n != 2 {
		t.Errorf("dropped %d, want 2", n)
	}
	if d := run.Decode[0]; len(d.Repeats) != 3 || *d.TotalTokS != 20 || d.Status != matrixgen.StatusValid {
		t.Errorf("mixed cell: %d repeats, %v, %s", len(d.Repeats), *d.TotalTokS, d.Status)
	}
	if d := run.Decode[1]; len(d.Repeats) != 0 || d.Status != matrixgen.StatusNotRun || d.ContextTokens != 1024 {
		t.Errorf("failed cell: %+v", d)
	}
	if d := run.Decode[2]; d.Status != matrixgen.StatusError || d.Reason != "x" {
		t.Errorf("a cell never repeated was changed: %+v", d)
	}
}
