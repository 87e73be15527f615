//go:build unix

package render

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"

	"github.com/matrixgen/matrixgen/internal/testrun"
)

// TestBuildCarriesOnlyRegularFiles: a link in the output folder to /etc
// was carried into the new site (and served and published from it). Of
// what no build wrote, only regular files are kept, in folders of their
// own or the build's; links (to files, to folders, inside a kept folder)
// and pipes are left out and said.
func TestBuildCarriesOnlyRegularFiles(t *testing.T) {
	out := filepath.Join(t.TempDir(), "public")
	runs := Entries{{ID: "a", Run: testrun.Full(1)}}
	if _, err := Build(runs, Site{}, out); err != nil {
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
	stats, err := Build(runs, Site{}, out)
	if err != nil {
		t.Fatal(err)
	}
	filepath.WalkDir(out, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && !d.Type().IsRegular() {
			t.Errorf("the new site holds %s, not a regular file", p)
		}
		return nil
	})
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
