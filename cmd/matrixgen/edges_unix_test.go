//go:build unix

package main

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/matrixgen/matrixgen/internal/hostile"
)

// TestServeStaysInsideItsSite: a link in the output folder to /etc listed
// /etc and served its files. serve shows only regular files and folders
// that resolve inside the site: links out of it, pipes and dot files are
// 404 and left out of listings; a link inside the site is followed.
func TestServeStaysInsideItsSite(t *testing.T) {
	out := filepath.Join(t.TempDir(), "public")
	base := serveBuilt(t, &server{runs: sampleRuns(t), out: out, cfgFile: filepath.Join(t.TempDir(), "none.toml"), log: &lockedBuffer{}})
	outside := t.TempDir()
	writeFile(t, filepath.Join(outside, "shadow"), []byte("root:secret"))
	for link, target := range map[string]string{
		"etc": outside, "shadow": filepath.Join(outside, "shadow"), "runs/leak": filepath.Join(outside, "shadow"),
		"runs/up": "../../" + filepath.Base(outside), "inside.html": "index.html",
	} {
		if err := os.Symlink(target, filepath.Join(out, link)); err != nil {
			t.Fatal(err)
		}
	}
	if err := syscall.Mkfifo(filepath.Join(out, "pipe"), 0o644); err != nil {
		t.Fatal(err)
	}
	get := func(path string) (int, string) {
		t.Helper()
		client := http.Client{Timeout: 10 * time.Second}
		resp, err := client.Get(base + path)
		if err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	for _, path := range []string{"/etc/", "/etc/shadow", "/shadow", "/runs/leak", "/runs/up/shadow", "/pipe", "/.matrixgen-site"} {
		if code, body := get(path); code != http.StatusNotFound || strings.Contains(body, "root:secret") {
			t.Errorf("GET %s: %d %.80q, want 404", path, code, body)
		}
	}
	if code, body := get("/inside.html"); code != 200 || !strings.Contains(body, "<html") {
		t.Errorf("GET /inside.html (a link inside the site): %d", code)
	}
	code, listing := get("/runs/")
	if code != 200 || !strings.Contains(listing, sampleID) {
		t.Fatalf("GET /runs/: %d\n%s", code, listing)
	}
	for _, hidden := range []string{"leak", "up"} {
		if strings.Contains(listing, hidden) {
			t.Errorf("the listing of /runs/ shows %q:\n%s", hidden, listing)
		}
	}
}

// TestKill9DuringBuildLeavesNoDebris: kill -9 during `matrixgen build`
// left its .public.building-* folder beside the site; the next build
// clears it at once (its lock, freed by the kernel, proves it abandoned).
func TestKill9DuringBuildLeavesNoDebris(t *testing.T) {
	if testing.Short() {
		t.Skip("builds 300 runs in a process of its own")
	}
	runs := writeBenchRuns(t, 300)
	parent := t.TempDir()
	out := filepath.Join(parent, "public")
	cmd, log := startCommand(t, "build", "-runs", runs, "-o", out)
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	debris := func() []string { m, _ := filepath.Glob(filepath.Join(parent, ".public.building-*")); return m }
	working := func() bool {
		for _, d := range debris() {
			if info, err := os.Stat(d); err == nil && info.IsDir() {
				return true
			}
		}
		return false
	}
	for !working() {
		select {
		case <-exited:
			t.Skipf("the build finished before it could be killed:\n%s", log)
		case <-time.After(5 * time.Millisecond):
		}
	}
	cmd.Process.Kill()
	<-exited
	if len(debris()) == 0 {
		t.Fatal("kill -9 left nothing to clear: the test proves nothing")
	}
	if code, stdout, stderr := matrixgenCmd(t, "build", "-runs", runs, "-o", out); code != 0 {
		t.Fatalf("the next build: exit %d\n%s%s", code, stdout, stderr)
	}
	if left := debris(); len(left) > 0 {
		t.Errorf("after the next build, still beside the site: %q", left)
	}
}

// TestServeOpensOnce: serve checked a name (regular? a folder?) and then
// opened it by name again, so a page swapped in between for a FIFO hung
// the request, and one swapped for a link was opened as the link. The open
// is the check: while a page is swapped back and forth, each open gives
// the page or nothing, never the file outside, and never waits.
func TestServeOpensOnce(t *testing.T) {
	site, outside := t.TempDir(), filepath.Join(t.TempDir(), "shadow")
	os.WriteFile(outside, []byte("root:secret"), 0o644)
	page := []byte("<!doctype html><title>page</title>")
	name := filepath.Join(site, "page.html")
	os.WriteFile(name, page, 0o644)
	root, err := os.OpenRoot(site)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	swapper := hostile.SwapFile(name, page, outside)
	defer func() { t.Logf("%d rounds of swaps", swapper.Stop()) }()
	finished := make(chan error, 1)
	go func() {
		for i := 0; swapper.Rounds() < 300 && i < 1_000_000; i++ {
			f, err := siteFS{root}.Open("page.html")
			if err != nil {
				continue
			}
			b, err := io.ReadAll(f)
			f.Close()
			if err == nil && !bytes.Equal(b, page) {
				finished <- fmt.Errorf("served %q", b)
				return
			}
		}
		finished <- nil
	}()
	select {
	case err := <-finished:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(20 * time.Second): // far past any machine: a hang
		t.Fatal("an open waited on a FIFO swapped in")
	}
}
