//go:build unix

package bucket

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestFolderOfLinksAndPipes: a file:// place's driver works by path, so a
// link in the place was followed out of it (a run file read from outside,
// a publish written outside) and a pipe, or a pipe for a driver's .attrs
// file, held a read for ever. A place holding one is refused, naming it,
// before anything is read or written; the place itself may be a link.
func TestFolderOfLinksAndPipes(t *testing.T) {
	ctx := context.Background()
	outside := t.TempDir()
	secret := filepath.Join(outside, "secret.json")
	os.WriteFile(secret, []byte(`{"secret": true}`), 0o644)
	for name, plant := range map[string]func(dir string) error{
		"link.json": func(dir string) error { return os.Symlink(secret, filepath.Join(dir, "link.json")) },
		"pipe.json": func(dir string) error { return syscall.Mkfifo(filepath.Join(dir, "pipe.json"), 0o644) },
		"a.json.attrs": func(dir string) error {
			os.WriteFile(filepath.Join(dir, "a.json"), []byte("{}"), 0o644)
			return syscall.Mkfifo(filepath.Join(dir, "a.json.attrs"), 0o644)
		},
		"sub/linked": func(dir string) error {
			os.Mkdir(filepath.Join(dir, "sub"), 0o755)
			return os.Symlink(outside, filepath.Join(dir, "sub", "linked"))
		},
	} {
		dir := t.TempDir()
		if err := plant(dir); err != nil {
			t.Fatal(err)
		}
		s := memStore(t, "file://"+filepath.ToSlash(dir)+"/")
		_, fetchErr := s.FetchRuns(ctx, t.TempDir())
		_, _, getErr := s.Get(ctx, "a.json")
		putErr := s.Put(ctx, "b.json", []byte("{}"))
		_, publishErr := s.Publish(ctx, writeSite(t, map[string]string{"sub/linked/page.html": "x"}))
		for what, err := range map[string]error{"fetch": fetchErr, "get": getErr, "put": putErr, "publish": publishErr} {
			if err == nil || !strings.Contains(err.Error(), name+" is a link, a pipe or a device") {
				t.Errorf("%s with %s planted: %v", what, name, err)
			}
		}
		if entries, _ := os.ReadDir(outside); len(entries) != 1 {
			t.Errorf("%s planted: %d files outside the place, want only the secret", name, len(entries))
		}
	}
	// A place that is itself a link, to a folder of regular files, is read.
	real := t.TempDir()
	os.WriteFile(filepath.Join(real, "a.json"), []byte("{}"), 0o644)
	link := filepath.Join(t.TempDir(), "runs")
	os.Symlink(real, link)
	if _, found, err := memStore(t, "file://"+filepath.ToSlash(link)+"/").Get(ctx, "a.json"); err != nil || !found {
		t.Errorf("a place that is a link: found %v, %v", found, err)
	}
}
