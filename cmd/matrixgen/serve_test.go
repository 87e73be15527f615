package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/matrixgen/matrixgen/internal/testrun"
	"github.com/matrixgen/matrixgen/runfile"
)

// lockedBuffer is a log the server writes while the test reads it.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// serveBuilt serves s on a loopback port until the test ends, and returns
// its address once its first build is served: serve builds before it
// serves, and a request waits for that in the listener's backlog, so no
// polling is needed.
func serveBuilt(t *testing.T, s *server) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.serve(ctx, ln, time.Hour); ln.Close() }() // a serve that gave up answers no one
	t.Cleanup(func() { cancel(); <-done })
	base := "http://" + ln.Addr().String()
	resp, err := http.Get(base + "/__matrixgen/version")
	if err != nil {
		t.Fatalf("no site served: %v", err)
	}
	resp.Body.Close()
	if s.version.Load() == 0 {
		t.Fatal("served without a build")
	}
	return base
}

func TestServeRebuildsAndMarksPagesLive(t *testing.T) {
	runs := sampleRuns(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	log, errLog := &lockedBuffer{}, &lockedBuffer{}
	cfgFile := filepath.Join(t.TempDir(), "matrixgen.toml")
	s := &server{runs: runs, out: filepath.Join(t.TempDir(), "public"), cfgFile: cfgFile, log: log, errLog: errLog}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.serve(ctx, ln, 50*time.Millisecond) }()
	base := "http://" + ln.Addr().String()
	get := func(path string) (int, string) {
		resp, err := http.Get(base + path)
		if err != nil {
			return 0, ""
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	waitFor := func(what string, ok func() bool) {
		t.Helper()
		for deadline := time.Now().Add(10 * time.Second); !ok(); time.Sleep(20 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("%s did not happen; log:\n%s", what, log.String())
			}
		}
	}
	waitFor("the first build", func() bool { _, v := get("/__matrixgen/version"); return v == "1" })
	code, page := get("/")
	if code != 200 || !strings.Contains(page, `<meta name="matrixgen-live" content="/__matrixgen/version">`) {
		t.Errorf("index: %d, live mark missing", code)
	}
	if _, js := get("/assets/matrixgen.js"); !strings.Contains(js, "matrixgen-live") {
		t.Error("the site script does not poll for new builds")
	}
	for _, changing := range []string{"/assets/index/chunk-0001.js", "/assets/compared/buckets.js"} {
		if resp, err := http.Get(base + changing); err != nil || resp.StatusCode != 200 || resp.Header.Get("Cache-Control") != "no-store" {
			t.Errorf("%s may be kept by a browser, though it changes as runs do: %v", changing, err)
		} else {
			resp.Body.Close()
		}
	}
	// A run added, with a key in its launch command: the site is updated
	// in place, not rebuilt, and the update names the run whose key it
	// hid, as a build does (serve said nothing).
	data, _ := os.ReadFile(filepath.Join(runs, sampleID+".json"))
	writeFile(t, filepath.Join(runs, "second.json"), []byte(strings.Replace(string(data), `"launch_command": "`,
		`"launch_command": "vllm serve m --api-key sk-proj-Abc123XyZ789LmNoPqRsTuVwXyZ0123456789 `, 1)))
	waitFor("a rebuild after a new run file", func() bool { c, _ := get("/runs/second/"); return c == 200 })
	waitFor("an update in place", func() bool { return strings.Contains(log.String(), "updated 2 pages of 2 runs") })
	waitFor("the hidden key said", func() bool {
		return strings.Contains(log.String(), "hid what looks like a secret in the launch command of 1 run on the site: second")
	})
	waitFor("the version pages poll to move on", func() bool {
		_, v := get("/__matrixgen/version")
		n, _ := strconv.Atoi(v)
		return n >= 2
	})
	writeFile(t, filepath.Join(runs, "broken.json"), []byte("{"))
	waitFor("a failed rebuild", func() bool {
		return strings.Contains(errLog.String(), "build failed; still serving the last good site")
	})
	if c, _ := get("/runs/second/"); c != 200 {
		t.Error("a failed rebuild took the last good site down")
	}
	if !strings.Contains(errLog.String(), "broken.json:1:") {
		t.Errorf("the failed rebuild does not name the bad file on stderr:\n%s", errLog.String())
	}
	if strings.Contains(log.String(), "failed") {
		t.Errorf("a failure went to stdout:\n%s", log.String())
	}
	// The bad file gone, the next good build says the site is whole
	// again (it said only "updated 0 pages").
	os.Remove(filepath.Join(runs, "broken.json"))
	waitFor("a build that says it works again", func() bool { return strings.Contains(log.String(), "the build works again") })
	// The config changed: a whole build, with the new title.
	writeFile(t, cfgFile, []byte("[site]\ntitle = \"Lab results\"\n"))
	waitFor("a whole build after the config changed", func() bool { _, p := get("/"); return strings.Contains(p, "<title>Lab results</title>") })
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// TestServeOnlyItsSite: `serve -o /` refused to build, then served that
// folder itself, /etc/passwd and a .env with it. Without a site it built,
// serve exits; and it never serves dot files (the site's marker, a kept
// .git folder).
func TestServeOnlyItsSite(t *testing.T) {
	notASite := t.TempDir()
	writeFile(t, filepath.Join(notASite, ".env"), []byte("SECRET=1"))
	writeFile(t, filepath.Join(notASite, "passwd"), []byte("root:x:0:0"))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &server{runs: sampleRuns(t), out: notASite, cfgFile: filepath.Join(t.TempDir(), "none.toml"), log: &lockedBuffer{}}
	if err := s.serve(context.Background(), ln, time.Hour); err == nil || !strings.Contains(err.Error(), "no site to serve") {
		t.Fatalf("serve over a folder it did not build: %v", err)
	}

	out := filepath.Join(t.TempDir(), "public")
	base := serveBuilt(t, &server{runs: sampleRuns(t), out: out, cfgFile: filepath.Join(t.TempDir(), "none.toml"), log: &lockedBuffer{}})
	os.MkdirAll(filepath.Join(out, ".git"), 0o755) // as a build would keep it
	writeFile(t, filepath.Join(out, ".git", "config"), []byte("[remote] url = secret"))
	for _, path := range []string{"/.matrixgen-site", "/.git/config"} {
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotFound {
			t.Errorf("GET %s: %d, want 404", path, resp.StatusCode)
		}
	}
}

// TestServeIndexHTMLDirectly: a page's own address (…/index.html) is
// answered with the page, not a redirect to its folder's address, and the
// folder's address still serves it; an index.html that is not there is a
// 404, not the folder's listing.
func TestServeIndexHTMLDirectly(t *testing.T) {
	base := serveBuilt(t, &server{runs: sampleRuns(t), out: filepath.Join(t.TempDir(), "public"), cfgFile: filepath.Join(t.TempDir(), "none.toml"), log: &lockedBuffer{}})
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for _, tt := range []struct {
		path string
		want int
	}{
		{"/", 200},
		{"/index.html", 200},
		{"/runs/" + sampleID + "/index.html", 200},
		{"/runs/" + sampleID + "/", 200},
		{"/methodology.html", 200},
		{"/runs/index.html", 404},
		{"/runs/nope/index.html", 404},
		{"/.matrixgen-site/index.html", 404},
	} {
		resp, err := client.Get(base + tt.path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tt.want {
			t.Errorf("GET %s: %d (Location %q), want %d", tt.path, resp.StatusCode, resp.Header.Get("Location"), tt.want)
		}
		if tt.want == 200 && !strings.Contains(string(body), `<meta name="matrixgen-live"`) {
			t.Errorf("GET %s: not a live page", tt.path)
		}
	}
}

// TestServeRunsCSVOnRequest: after a run changed, serve answers runs.csv
// with what a build of the runs as they are now writes, though the folder
// no longer holds one (an update does not write it: it would cost the
// whole file), and says so when it stops.
func TestServeRunsCSVOnRequest(t *testing.T) {
	runs := sampleRuns(t)
	out := filepath.Join(t.TempDir(), "public")
	log := &lockedBuffer{}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &server{runs: runs, out: out, cfgFile: filepath.Join(t.TempDir(), "none.toml"), log: log}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.serve(ctx, ln, time.Hour) }()
	base := "http://" + ln.Addr().String()
	get := func(path string) (int, string) {
		t.Helper()
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, _ := get("/runs.csv"); code != 200 {
		t.Fatalf("runs.csv: %d", code)
	}
	data, _ := os.ReadFile(filepath.Join(runs, sampleID+".json"))
	writeFile(t, filepath.Join(runs, "second.json"), data)
	s.build(false)
	if _, err := os.Stat(filepath.Join(out, "runs.csv")); err == nil {
		t.Error("the folder still holds runs.csv after a change")
	}
	code, got := get("/runs.csv")
	fresh, cfg := filepath.Join(t.TempDir(), "fresh"), filepath.Join(t.TempDir(), "none.toml")
	writeFile(t, cfg, nil)
	if c, stdout, stderr := matrixgenCmd(t, "build", "-config", cfg, "-runs", runs, "-o", fresh); c != 0 {
		t.Fatalf("build: %s%s", stdout, stderr)
	}
	want, _ := os.ReadFile(filepath.Join(fresh, "runs.csv"))
	if code != 200 || got != string(want) || !strings.Contains(got, "second,") {
		t.Errorf("runs.csv served after a change: %d, same as a build's: %v", code, got == string(want))
	}
	if code, _ := get("/runs-2026-12.csv"); code != 404 {
		t.Errorf("a part runs.csv is not split into: %d", code)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(log.String(), "lacks runs.csv") || !strings.Contains(log.String(), "matrixgen build") {
		t.Errorf("serve stopped without saying its folder lacks runs.csv:\n%s", log.String())
	}
}

// TestServeStopsOnSignal runs `matrixgen serve` as a process and stops it
// with SIGTERM once it serves (its runs in a bucket, mirrored into a
// temporary folder), and with SIGINT in the middle of its first build of
// many runs: each time it ends within ctrlCGoal (logged; a failure only
// past ctrlCHung), removes every temporary folder it made, and leaves no
// build's working folder beside the site.
func TestServeStopsOnSignal(t *testing.T) {
	for _, tt := range []struct {
		name   string
		sig    os.Signal
		runs   int
		served bool // signalled once it serves, or while it builds
	}{
		{"SIGTERM while serving", syscall.SIGTERM, 2, true},
		{"SIGINT while building", os.Interrupt, 400, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			bucketDir, tmp, site := t.TempDir(), t.TempDir(), t.TempDir()
			for i := range tt.runs {
				data, err := runfile.Encode(testrun.Full(uint64(i)))
				if err != nil {
					t.Fatal(err)
				}
				writeFile(t, filepath.Join(bucketDir, fmt.Sprintf("run-%03d.json", i)), data)
			}
			cfg := filepath.Join(t.TempDir(), "none.toml")
			writeFile(t, cfg, nil)
			out := filepath.Join(site, "public")
			cmd, log := startCommandWith(t, []string{"TMPDIR=" + tmp, "XDG_CACHE_HOME=" + t.TempDir()},
				"serve", "-addr", "127.0.0.1:0", "-config", cfg, "-runs", "file://"+filepath.ToSlash(bucketDir), "-o", out)
			done := waitFor(cmd)
			if tt.served {
				for deadline := time.Now().Add(ctrlCHung); !strings.Contains(log.String(), "serving http://"); time.Sleep(20 * time.Millisecond) {
					if time.Now().After(deadline) {
						cmd.Process.Kill()
						<-done
						t.Fatalf("not serving after %v:\n%s", ctrlCHung, log)
					}
				}
			} else {
				// The mirror is fetched, the build begun: the site's
				// working folder is there.
				for deadline := time.Now().Add(ctrlCHung); ; time.Sleep(5 * time.Millisecond) {
					if names, _ := filepath.Glob(filepath.Join(site, ".public.building-*")); len(names) > 0 {
						break
					}
					if time.Now().After(deadline) || strings.Contains(log.String(), "serving http://") {
						cmd.Process.Kill()
						<-done
						t.Fatalf("no build seen in progress:\n%s", log)
					}
				}
			}
			sent := time.Now()
			cmd.Process.Signal(tt.sig)
			var err error
			select {
			case err = <-done:
			case <-time.After(ctrlCHung):
				cmd.Process.Kill()
				<-done
				t.Fatalf("still running %v after %v, far past the goal of %v:\n%s", ctrlCHung, tt.sig, ctrlCGoal, log)
			}
			t.Logf("stopping took %v (goal %v)", time.Since(sent).Round(time.Millisecond), ctrlCGoal)
			if err != nil {
				t.Errorf("serve stopped by %v: %v\n%s", tt.sig, err, log)
			}
			if left, _ := os.ReadDir(tmp); len(left) > 0 {
				t.Errorf("serve left %d temporary folders, %s first", len(left), left[0].Name())
			}
			if names, _ := filepath.Glob(filepath.Join(site, ".public.building-*")); len(names) > 0 {
				t.Errorf("serve left a build's working folder: %v", names)
			}
			if tt.served && !strings.Contains(log.String(), "built 5 pages from 2 runs") {
				t.Errorf("no build said:\n%s", log)
			}
		})
	}
}
