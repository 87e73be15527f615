package render

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/matrixgen/matrixgen"
	"github.com/matrixgen/matrixgen/internal/hostile"
	"github.com/matrixgen/matrixgen/internal/testrun"
)

// BenchmarkRunPage measures the CPU of one run page: layout, chart option,
// template, CSV and run.json, without the disk. Target: under 2 ms.
func BenchmarkRunPage(b *testing.B) {
	bld, err := newBuilder(Site{Title: "bench"})
	if err != nil {
		b.Fatal(err)
	}
	entries := make([]matrixgen.Entry, 64)
	for i := range entries {
		run := testrun.Full(uint64(i))
		raw, err := matrixgen.EncodeRun(run)
		if err != nil {
			b.Fatal(err)
		}
		entries[i] = matrixgen.Entry{ID: fmt.Sprintf("run-%d", i), Run: run, Raw: raw, Notes: []byte("Some *notes*.")}
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		e := entries[i%len(entries)]
		i++
		page, err := bld.newRunPage(e)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := execute(bld.run, page); err != nil {
			b.Fatal(err)
		}
		if _, err := e.JSON(); err != nil {
			b.Fatal(err)
		}
		_ = measurementsCSV(e.Run)
	}
}

// BenchmarkBuild1000 writes a whole site of 1,000 full runs to disk.
func BenchmarkBuild1000(b *testing.B) {
	entries := make([]matrixgen.Entry, 1000)
	for i := range entries {
		entries[i] = matrixgen.Entry{ID: fmt.Sprintf("run-%04d", i), Run: testrun.Full(uint64(i))}
	}
	out := filepath.Join(b.TempDir(), "public")
	for b.Loop() {
		if _, err := Build(Entries(entries), Site{}, out); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCompareScript measures a run's compare.js, written once per
// run: its settings, headline figures, prefill rows and cells.
func BenchmarkCompareScript(b *testing.B) {
	r := testrun.Full(1)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := compareScript("a", r); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCancelBuild measures how long a build takes to stop once
// cancelled, in the middle of the costliest inputs the bounds allow: run
// files of small numbers at the file bound and notes of costly Markdown at
// the notes bound. Goal: under 2 s (Ctrl-C), whatever the inputs.
func BenchmarkCancelBuild(b *testing.B) {
	full, err := matrixgen.EncodeRun(testrun.Full(1))
	if err != nil {
		b.Fatal(err)
	}
	flood, err := hostile.NumberFlood(full, matrixgen.MaxRunFileBytes-1024)
	if err != nil {
		b.Fatal(err)
	}
	runs := b.TempDir()
	for i := range 8 {
		id := fmt.Sprintf("run-%d", i)
		data := full
		if i%2 == 0 {
			data = flood
		}
		os.WriteFile(filepath.Join(runs, id+".json"), data, 0o644)
		os.WriteFile(filepath.Join(runs, id+".md"), hostile.CostlyNotes(matrixgen.MaxNotesBytes), 0o644)
	}
	files, err := matrixgen.RunFiles(runs)
	if err != nil {
		b.Fatal(err)
	}
	parent := b.TempDir()
	var waited time.Duration
	for b.Loop() {
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() {
			_, err := BuildContext(ctx, Files(files), Site{}, filepath.Join(parent, "public"))
			done <- err
		}()
		for working := false; !working; time.Sleep(time.Millisecond) {
			m, _ := filepath.Glob(filepath.Join(parent, ".public.building-*"))
			working = len(m) > 0
		}
		time.Sleep(200 * time.Millisecond) // in the middle of pages
		start := time.Now()
		cancel()
		if err := <-done; err == nil {
			b.Fatal("a cancelled build succeeded")
		}
		waited += time.Since(start)
	}
	b.ReportMetric(float64(waited.Milliseconds())/float64(b.N), "ms-to-stop")
}
