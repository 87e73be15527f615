package site

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/matrixgen/matrixgen/internal/hostile"
	"github.com/matrixgen/matrixgen/internal/testrun"
	"github.com/matrixgen/matrixgen/render"
	"github.com/matrixgen/matrixgen/runfile"
)

// TestBuildKeepsFilesItDidNotWrite: a CNAME, .nojekyll and .git/ added to
// the output folder were deleted by the next build. Files no build wrote
// are carried over; a removed run's pages still go.
func TestBuildKeepsFilesItDidNotWrite(t *testing.T) {
	out := filepath.Join(t.TempDir(), "public")
	a, b := testrun.Full(1), testrun.Full(2)
	if _, err := Build(render.Entries{{ID: "a", Run: a}, {ID: "b", Run: b}}, render.Site{}, out); err != nil {
		t.Fatal(err)
	}
	mine := map[string]string{"CNAME": "bench.example.org\n", ".nojekyll": "", ".git/config": "[core]\n", "runs/a/extra.txt": "by hand\n"}
	for name, text := range mine {
		os.MkdirAll(filepath.Dir(filepath.Join(out, name)), 0o755)
		os.WriteFile(filepath.Join(out, name), []byte(text), 0o644)
	}
	stats, err := Build(render.Entries{{ID: "a", Run: a}}, render.Site{}, out)
	if err != nil {
		t.Fatal(err)
	}
	for name, text := range mine {
		if got, err := os.ReadFile(filepath.Join(out, name)); err != nil || string(got) != text {
			t.Errorf("%s after the build: %q, %v", name, got, err)
		}
	}
	if len(stats.Kept) != 4 {
		t.Errorf("kept %q", stats.Kept)
	}
	if _, err := os.Stat(filepath.Join(out, "runs", "b")); err == nil {
		t.Error("the removed run's pages are still there")
	}
	// And again: files kept once are kept the next time too.
	if _, err := Build(render.Entries{{ID: "a", Run: a}}, render.Site{}, out); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(out, "CNAME")); err != nil {
		t.Error("CNAME lost on the second build")
	}
}

// TestInterruptedBuildLeavesNothing: Ctrl-C during a build left a
// .public.building-* folder beside the site. A cancelled build removes its
// work, and the next build removes what a killed one left.
func TestInterruptedBuildLeavesNothing(t *testing.T) {
	parent := t.TempDir()
	out := filepath.Join(parent, "public")
	if _, err := Build(render.Entries{{ID: "a", Run: testrun.Full(1)}}, render.Site{}, out); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := BuildContext(ctx, render.Entries{{ID: "a", Run: testrun.Full(1)}, {ID: "b", Run: testrun.Full(2)}}, render.Site{}, out); err == nil {
		t.Fatal("a cancelled build succeeded")
	}
	killed, err := newWorkFolder(parent, "public")
	if err != nil {
		t.Fatal(err)
	}
	killed.lock.Close() // as kill -9 closes it
	if _, err := Build(render.Entries{{ID: "a", Run: testrun.Full(1)}}, render.Site{}, out); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(parent)
	for _, e := range entries {
		if e.Name() != "public" {
			t.Errorf("left beside the site: %s", e.Name())
		}
	}
	if _, err := os.Stat(filepath.Join(out, "runs", "a", "index.html")); err != nil {
		t.Error(err)
	}
}

// BenchmarkCancelBuild measures how long a build takes to stop once
// cancelled, in the middle of the costliest inputs the bounds allow: run
// files of small numbers at the file bound and notes of costly Markdown at
// the notes bound. Goal: under 2 s (Ctrl-C), whatever the inputs.
func BenchmarkCancelBuild(b *testing.B) {
	full, err := runfile.Encode(testrun.Full(1))
	if err != nil {
		b.Fatal(err)
	}
	flood, err := hostile.NumberFlood(full, runfile.MaxBytes-1024)
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
		os.WriteFile(filepath.Join(runs, id+".md"), hostile.CostlyNotes(runfile.MaxNotesBytes), 0o644)
	}
	files, err := runfile.Files(runs)
	if err != nil {
		b.Fatal(err)
	}
	parent := b.TempDir()
	var waited time.Duration
	for b.Loop() {
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() {
			_, err := BuildContext(ctx, Files(files), render.Site{}, filepath.Join(parent, "public"))
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
