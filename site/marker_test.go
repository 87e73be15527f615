package site

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/matrixgen/matrixgen/internal/testrun"
	"github.com/matrixgen/matrixgen/render"
)

// TestMarkerLines: a marker's list and its appended changes read in
// order; an append cut short is ignored; anything else is no marker.
func TestMarkerLines(t *testing.T) {
	for _, c := range []struct {
		text string
		want []string
	}{
		{"a\nb/c\n", []string{"a", "b/c"}},
		{"a\nb\n\n+ c\n- a\n", []string{"b", "c"}},
		{"a\n\n- a\n\n+ a\n", []string{"a"}},
		{"a\n\n+ b\n+ runs/x/ind", []string{"a", "b"}},
		{"a\n\n- a", []string{"a"}},
		{"", nil},
	} {
		files, ok := markerFiles([]byte(markerHeader + c.text))
		if got := slices.Sorted(maps.Keys(files)); !ok || !slices.Equal(got, c.want) {
			t.Errorf("%q: %q, %v; want %q", c.text, got, ok, c.want)
		}
	}
	if _, ok := markerFiles([]byte("a\nb\n")); ok {
		t.Error("text without the marker's header was read as a marker")
	}
}

// FuzzMarkerFiles: whatever a site's marker holds, reading it does not
// fail, and its files written as a list read back as the same files.
func FuzzMarkerFiles(f *testing.F) {
	f.Add([]byte(markerHeader + "a\n\n+ b\n- a\n+ c"))
	f.Add([]byte("no header\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		files, ok := markerFiles(data)
		if !ok {
			return
		}
		names := slices.Sorted(maps.Keys(files))
		again, ok := markerFiles(markerText(names))
		if !ok || !maps.Equal(files, again) {
			t.Fatalf("%q read back as %v", names, again)
		}
	})
}

// TestLiveMarkerGrowsByTheChange: serve appends a change's files to the
// marker instead of writing the list of every file again, and writes it
// whole once the appended lines would outgrow the list, so it stays
// within twice the list's size; the list it gives is the site's files.
func TestLiveMarkerGrowsByTheChange(t *testing.T) {
	smallIndex(t, 2, 3)
	runs := t.TempDir()
	var files []string
	for i := range 20 {
		files = append(files, writeRunFile(t, runs, fmt.Sprintf("run-%02d", i), testrun.Full(uint64(i)), ""))
	}
	out := filepath.Join(t.TempDir(), "public")
	live, _, err := NewLive(context.Background(), files, render.Site{}, out)
	if err != nil {
		t.Fatal(err)
	}
	size := func() int {
		info, err := os.Stat(filepath.Join(out, siteMarker))
		if err != nil {
			t.Fatal(err)
		}
		return int(info.Size())
	}
	whole := size()
	appended, compacted := 0, 0
	for i := 20; i < 60; i++ {
		before := size()
		files = append(files, writeRunFile(t, runs, fmt.Sprintf("run-%02d", i), testrun.Full(uint64(i)), ""))
		if _, err := live.Update(files); err != nil {
			t.Fatal(err)
		}
		after := size()
		data, err := os.ReadFile(filepath.Join(out, siteMarker))
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case after > before:
			appended++
			if grown := after - before; grown > 1024 {
				t.Errorf("adding run-%02d grew the marker by %d bytes, more than its files' lines", i, grown)
			}
			if !strings.Contains(string(data), fmt.Sprintf("\n+ runs/run-%02d/index.html\n", i)) {
				t.Errorf("adding run-%02d appended no line for its page", i)
			}
		default:
			compacted++
			whole = after
			if strings.Contains(string(data), "\n+ ") {
				t.Errorf("the marker written whole still holds appended lines")
			}
		}
		if after > 2*whole {
			t.Errorf("after run-%02d the marker is %d bytes, over twice its list's %d", i, after, whole)
		}
	}
	if appended == 0 || compacted == 0 {
		t.Errorf("over 40 added runs the marker was appended to %d times and written whole %d times; want both", appended, compacted)
	}
	liveSameAsAFreshBuild(t, live, runs, out, render.Site{})
}

// TestMarkerAppendNeverCompletesAFragment: an append cut short leaves an
// unfinished last line; the next change writes the marker whole instead
// of appending after it (which would complete the fragment into a name
// the site never wrote), so a user's file of that name outlives the next
// build.
func TestMarkerAppendNeverCompletesAFragment(t *testing.T) {
	runs := t.TempDir()
	files := []string{writeRunFile(t, runs, "run-00", testrun.Full(0), ""), writeRunFile(t, runs, "run-01", testrun.Full(1), "")}
	out := filepath.Join(t.TempDir(), "public")
	live, _, err := NewLive(context.Background(), files, render.Site{}, out)
	if err != nil {
		t.Fatal(err)
	}
	mine := filepath.Join(out, "runs", "run-0")
	if err := os.WriteFile(mine, []byte("a person's own file"), 0o644); err != nil {
		t.Fatal(err)
	}
	marker, err := os.OpenFile(filepath.Join(out, siteMarker), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	// What "+ runs/run-05/index.html" cut short by a full disk leaves.
	if _, err := marker.WriteString("+ runs/run-0"); err != nil {
		t.Fatal(err)
	}
	marker.Close()
	files = append(files, writeRunFile(t, runs, "run-02", testrun.Full(2), ""))
	if _, err := live.Update(files); err != nil {
		t.Fatal(err)
	}
	if _, err := Build(Files(files), render.Site{}, out); err != nil {
		t.Fatal(err)
	}
	if data, err := os.ReadFile(mine); err != nil || string(data) != "a person's own file" {
		t.Errorf("after an append cut short, a change and a build, the person's file is %q, %v", data, err)
	}
}

// TestMarkerReplacedUnderServe: a marker removed, or swapped for a link or
// a pipe, while serve runs, is written again whole (not followed, not
// waited on), and every update goes on working.
func TestMarkerReplacedUnderServe(t *testing.T) {
	for _, swap := range []string{"removed", "link", "pipe"} {
		t.Run(swap, func(t *testing.T) {
			runs := t.TempDir()
			files := []string{writeRunFile(t, runs, "run-00", testrun.Full(0), "")}
			out := filepath.Join(t.TempDir(), "public")
			live, _, err := NewLive(context.Background(), files, render.Site{}, out)
			if err != nil {
				t.Fatal(err)
			}
			name := filepath.Join(out, siteMarker)
			target := filepath.Join(t.TempDir(), "elsewhere")
			if err := os.WriteFile(target, []byte(markerHeader), 0o644); err != nil {
				t.Fatal(err)
			}
			os.Remove(name)
			switch swap {
			case "link":
				err = os.Symlink(target, name)
			case "pipe":
				err = mkfifo(name)
			}
			if err != nil {
				t.Skip(err)
			}
			for i := 1; i <= 2; i++ {
				files = append(files, writeRunFile(t, runs, fmt.Sprintf("run-%02d", i), testrun.Full(uint64(i)), ""))
				if _, err := live.Update(files); err != nil {
					t.Fatalf("update %d: %v", i, err)
				}
			}
			info, err := os.Lstat(name)
			if err != nil || !info.Mode().IsRegular() {
				t.Fatalf("the marker after the updates: %v, %v", info, err)
			}
			if data, _ := os.ReadFile(target); string(data) != markerHeader {
				t.Errorf("the link's target was written to: %q", data)
			}
			liveSameAsAFreshBuild(t, live, runs, out, render.Site{})
		})
	}
}
