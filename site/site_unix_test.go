//go:build unix

package site

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/matrixgen/matrixgen/internal/testrun"
	"github.com/matrixgen/matrixgen/render"
)

// TestBuildCarriesOnlyRegularFiles: a link in the output folder to /etc
// was carried into the new site (and served and published from it). Of
// what no build wrote, only regular files are kept, in folders of their
// own or the build's; links (to files, to folders, inside a kept folder)
// and pipes are left out and said.
func TestBuildCarriesOnlyRegularFiles(t *testing.T) {
	out := filepath.Join(t.TempDir(), "public")
	runs := render.Entries{{ID: "a", Run: testrun.Full(1)}}
	if _, err := Build(runs, render.Site{}, out); err != nil {
		t.Fatal(err)
	}
	outside := t.TempDir()
	os.WriteFile(filepath.Join(outside, "shadow"), []byte("root:secret"), 0o644)
	os.MkdirAll(filepath.Join(out, ".git", "hooks"), 0o755)
	os.WriteFile(filepath.Join(out, ".git", "config"), []byte("[core]\n"), 0o644)
	os.WriteFile(filepath.Join(out, "CNAME"), []byte("x\n"), 0o644)
	links := []string{"etc", "shadow", ".git/hooks/evil", "runs/a/leak"}
	for i, link := range links {
		target := outside
		if i%2 == 1 {
			target = filepath.Join(outside, "shadow")
		}
		if err := os.Symlink(target, filepath.Join(out, link)); err != nil {
			t.Fatal(err)
		}
	}
	if err := syscall.Mkfifo(filepath.Join(out, "pipe"), 0o644); err != nil {
		t.Fatal(err)
	}
	stats, err := Build(runs, render.Site{}, out)
	if err != nil {
		t.Fatal(err)
	}
	onlyRegularFiles(t, out)
	for _, kept := range []string{".git/config", "CNAME"} {
		if _, err := os.Stat(filepath.Join(out, kept)); err != nil {
			t.Errorf("%s was not kept: %v", kept, err)
		}
	}
	slices.Sort(stats.Left)
	if want := []string{".git/hooks/evil", "etc", "pipe", "runs/a/leak", "shadow"}; !slices.Equal(stats.Left, want) {
		t.Errorf("left out %q, want %q", stats.Left, want)
	}
	if _, err := os.Stat(filepath.Join(outside, "shadow")); err != nil {
		t.Error("removing the old site removed what a link pointed to")
	}
}

// TestKilledBuildsDebrisIsCleared: kill -9 during a build left its
// .public.building-* folder for ever, and then a folder ten minutes old
// with no lock was removed on its age alone. A build removes a working
// folder only when its lock file proves it a killed matrixgen build's: the
// lock free, and the file signed by matrixgen. A live build's (its lock
// held on another descriptor) is never removed; look-alikes without our
// signature, however old, are kept and named in the build's stats.
func TestKilledBuildsDebrisIsCleared(t *testing.T) {
	parent := t.TempDir()
	out := filepath.Join(parent, "public")
	runs := render.Entries{{ID: "a", Run: testrun.Full(1)}}
	// What killed builds leave: a lock file nobody holds and its folder
	// (mid-build), or its folder's ".old" (mid-swap). Each made by the
	// build's own code, then its descriptor closed as a kill closes it.
	for _, swapping := range []bool{false, true} {
		killed, err := newWorkFolder(parent, "public")
		if err != nil {
			t.Fatal(err)
		}
		os.MkdirAll(filepath.Join(killed.dir, "runs", "a"), 0o755)
		os.WriteFile(filepath.Join(killed.dir, "runs", "a", "index.html"), []byte("half"), 0o644)
		if swapping {
			os.Rename(killed.dir, killed.dir+".old")
		}
		killed.lock.Close()
	}
	// A live build's: its lock held.
	live, err := newWorkFolder(parent, "public")
	if err != nil {
		t.Fatal(err)
	}
	defer live.release()
	// Look-alikes, each old enough to have been taken for debris: a lock
	// file free but not signed by matrixgen, a folder with no lock file,
	// an empty lock file, another site's, and a link with our prefix.
	lookAlikes := []string{".public.building-111", ".public.building-222", ".public.building-444", ".public.building-333"}
	os.WriteFile(filepath.Join(parent, ".public.building-111.lock"), []byte("4242\n"), 0o600)
	os.WriteFile(filepath.Join(parent, ".public.building-444.lock"), nil, 0o600)
	for _, dir := range []string{".public.building-111", ".public.building-222", ".public.building-444", ".other.building-1"} {
		os.MkdirAll(filepath.Join(parent, dir, "mine"), 0o755)
	}
	os.Symlink(t.TempDir(), filepath.Join(parent, ".public.building-333"))
	old := time.Now().Add(-24 * time.Hour)
	for _, name := range []string{".public.building-111", ".public.building-111.lock", ".public.building-222", ".public.building-444", ".public.building-444.lock"} {
		os.Chtimes(filepath.Join(parent, name), old, old)
	}
	stats, err := Build(runs, render.Site{}, out)
	if err != nil {
		t.Fatal(err)
	}
	var left []string
	entries, _ := os.ReadDir(parent)
	for _, e := range entries {
		left = append(left, e.Name())
	}
	want := []string{".other.building-1", ".public.building-111", ".public.building-111.lock", ".public.building-222",
		".public.building-333", ".public.building-444", ".public.building-444.lock",
		filepath.Base(live.dir), filepath.Base(live.lock.Name()), "public"}
	slices.Sort(want)
	if !slices.Equal(left, want) {
		t.Errorf("beside the site: %q, want %q", left, want)
	}
	slices.Sort(stats.Unproven)
	if !slices.Equal(stats.Unproven, sorted(lookAlikes)) {
		t.Errorf("said it left alone %q, want %q", stats.Unproven, sorted(lookAlikes))
	}
	if _, err := os.Stat(filepath.Join(parent, ".public.building-111", "mine")); err != nil {
		t.Error("a look-alike's contents were touched")
	}
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}

// TestKeptFilesSwappedAfterListing: the files of the old site no build
// wrote were listed, then moved by name, so one swapped for a link since
// (or a folder on its way swapped for a link out) carried a link, or a
// file from elsewhere, into the new site. Files are moved through an
// os.Root and looked at where they landed: a swapped one is left out and
// said, and nothing outside the site moves.
func TestKeptFilesSwappedAfterListing(t *testing.T) {
	parent := t.TempDir()
	out := filepath.Join(parent, "public")
	runs := render.Entries{{ID: "a", Run: testrun.Full(1)}}
	if _, err := Build(runs, render.Site{}, out); err != nil {
		t.Fatal(err)
	}
	outside := t.TempDir()
	os.WriteFile(filepath.Join(outside, "shadow"), []byte("root:secret"), 0o644)
	os.WriteFile(filepath.Join(out, "CNAME"), []byte("x\n"), 0o644)
	os.WriteFile(filepath.Join(out, "keep.txt"), []byte("mine\n"), 0o644)
	os.MkdirAll(filepath.Join(out, "extra"), 0o755)
	os.WriteFile(filepath.Join(out, "extra", "shadow"), []byte("mine\n"), 0o644)
	beforeKeeping = func() {
		os.Remove(filepath.Join(out, "CNAME"))
		os.Symlink(filepath.Join(outside, "shadow"), filepath.Join(out, "CNAME"))
		os.RemoveAll(filepath.Join(out, "extra"))
		os.Symlink(outside, filepath.Join(out, "extra"))
	}
	defer func() { beforeKeeping = func() {} }()
	stats, err := Build(runs, render.Site{}, out)
	if err != nil {
		t.Fatal(err)
	}
	onlyRegularFiles(t, out)
	if b, err := os.ReadFile(filepath.Join(outside, "shadow")); err != nil || string(b) != "root:secret" {
		t.Errorf("the file outside the site moved: %v", err)
	}
	if b, err := os.ReadFile(filepath.Join(out, "keep.txt")); err != nil || string(b) != "mine\n" {
		t.Errorf("a file not swapped was not kept: %v", err)
	}
	slices.Sort(stats.Left)
	if want := []string{"CNAME", "extra/shadow"}; !slices.Equal(stats.Left, want) {
		t.Errorf("left out %q, want %q", stats.Left, want)
	}
}

// onlyRegularFiles fails t for anything in the site at out that is
// neither a folder nor a regular file.
func onlyRegularFiles(t *testing.T, out string) {
	t.Helper()
	filepath.WalkDir(out, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && !d.Type().IsRegular() {
			t.Errorf("the new site holds %s, not a regular file", p)
		}
		return nil
	})
}

// mkfifo makes a named pipe at name.
func mkfifo(name string) error { return syscall.Mkfifo(name, 0o644) }
