package main

import (
	"context"
	"io"
	"maps"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/matrixgen/matrixgen/bucket"
	"github.com/matrixgen/matrixgen/internal/s3fake"
	"github.com/matrixgen/matrixgen/runfile"
)

// TestALabInOneBucket: two boxes run at once into one bucket, a third
// taking an id already there is refused, a run with no id gets one that
// names its box; the site is built from the bucket and published to
// another, and published again without rewriting what did not change.
// The bucket is gocloud's file store; TestRealS3 does it against a real
// S3 server.
func TestALabInOneBucket(t *testing.T) {
	url := quickSim(t)
	// Neither folder is there yet: the first copy and the publish make them.
	store := t.TempDir()
	runs := "file://" + filepath.ToSlash(filepath.Join(store, "runs")) + "/"
	t.Chdir(t.TempDir()) // each box's local copies go to ./runs
	writeFile(t, "none.toml", nil)
	t.Setenv("XDG_CACHE_HOME", t.TempDir()) // where a publish keeps its site
	runArgs := func(o string) []string {
		return []string{"run", "-config", "none.toml", "-base-url", url, "-o", o,
			"-contexts", "1K", "-concurrency", "1,2", "-duration", "1s", "-max-output", "128"}
	}
	var wg sync.WaitGroup
	codes := make([]int, 2)
	outs := make([]string, 2)
	for i, id := range []string{"box-a", "box-b"} {
		wg.Go(func() {
			var errOut string
			codes[i], outs[i], errOut = matrixgenCmd(t, runArgs(runs+id+".json")...)
			outs[i] += errOut
		})
	}
	wg.Wait()
	for i := range codes {
		if codes[i] != 0 {
			t.Fatalf("box %d: exit %d\n%s", i, codes[i], outs[i])
		}
	}
	for _, id := range []string{"box-a", "box-b"} {
		if _, err := runfile.Load(filepath.Join(store, "runs", id+".json")); err != nil {
			t.Errorf("the bucket's %s: %v", id, err)
		}
	}
	// Another box (its own working folder) taking box-a's id.
	other := t.TempDir()
	writeFile(t, filepath.Join(other, "none.toml"), nil)
	t.Chdir(other)
	code, stdout, stderr := matrixgenCmd(t, runArgs(runs+"box-a.json")...)
	if code == 0 || !strings.Contains(stderr, "already holds box-a.json") {
		t.Errorf("a second run of box-a: exit %d\n%s%s", code, stdout, stderr)
	}
	if code, stdout, stderr := matrixgenCmd(t, runArgs(runs)...); code != 0 {
		t.Fatalf("a run with no id: exit %d\n%s%s", code, stdout, stderr)
	}
	hostname, _ := os.Hostname()
	host := idPart(hostname, 40, "host")
	named, _ := filepath.Glob(filepath.Join(store, "runs", "*-"+host+".json"))
	if len(named) != 1 {
		t.Errorf("a run with no id is not named for its box %q: %v", host, named)
	}

	if code, stdout, stderr := matrixgenCmd(t, "validate", runs); code != 0 || strings.Count(stdout, "ok  ") != 3 {
		t.Errorf("validate the bucket: exit %d\n%s%s", code, stdout, stderr)
	}
	site := "file://" + filepath.ToSlash(filepath.Join(store, "site")) + "/"
	code, stdout, stderr = matrixgenCmd(t, "build", "-config", "none.toml", "-runs", runs, "-o", site)
	if code != 0 || !strings.Contains(stdout, "0 removed") {
		t.Fatalf("publish: exit %d\n%s%s", code, stdout, stderr)
	}
	for _, page := range []string{"index.html", "runs/box-a/index.html", "runs/box-b/run.json", "assets/matrixgen.css", ".matrixgen-site"} {
		if _, err := os.Stat(filepath.Join(store, "site", filepath.FromSlash(page))); err != nil {
			t.Errorf("the published site lacks %s", page)
		}
	}
	code, stdout, _ = matrixgenCmd(t, "build", "-config", "none.toml", "-runs", runs, "-o", site)
	if code != 0 || !strings.Contains(stdout, " 1 object written") || !strings.Contains(stdout, "(3 unchanged since the last publish from here)") {
		// The marker is written every time; every page is the same bytes,
		// and the runs' pages were kept from the last publish's build.
		t.Errorf("publishing the same site again: %s", stdout)
	}
	filepath.WalkDir(store, func(path string, d os.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(path, ".attrs") {
			t.Errorf("an attribute file beside the runs or pages: %s", path)
		}
		return err
	})
}

// TestUploadFailsMidRun: the bucket goes away after the run's first copy;
// the run goes on, every later copy fails and says so, the local file
// holds the whole run, and resuming once the bucket is back copies it.
func TestUploadFailsMidRun(t *testing.T) {
	defer func(old []time.Duration) { uploadRetries = old }(uploadRetries)
	uploadRetries = []time.Duration{10 * time.Millisecond}
	url := quickSim(t)
	store := t.TempDir()
	bucketDir := filepath.Join(store, "runs")
	os.MkdirAll(bucketDir, 0o755)
	runs := "file://" + filepath.ToSlash(bucketDir) + "/"
	t.Chdir(t.TempDir())
	writeFile(t, "none.toml", nil)
	done := make(chan struct{})
	go func() {
		defer close(done)
		// As soon as the first copy is there, the store goes away.
		for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
			if _, err := os.Stat(filepath.Join(bucketDir, "x.json")); err == nil {
				os.Rename(bucketDir, bucketDir+".away")
				os.WriteFile(bucketDir, []byte("not a folder"), 0o644)
				return
			}
		}
	}()
	code, stdout, stderr := matrixgenCmd(t, "run", "-config", "none.toml", "-base-url", url, "-o", runs+"x.json",
		"-contexts", "1K", "-concurrency", "1,2", "-duration", "1s", "-max-output", "128")
	<-done
	if code == 0 || !strings.Contains(stderr, "the run is saved in runs/x.json") || !strings.Contains(stderr, "next save tries again") {
		t.Errorf("exit %d\n%s%s", code, stdout, stderr)
	}
	local, err := runfile.Load(filepath.Join("runs", "x.json"))
	if err != nil {
		t.Fatalf("the local copy: %v", err)
	}
	if local.Run.Incomplete || len(local.Run.Decode) != 2 {
		t.Errorf("the local copy is incomplete: %d cells", len(local.Run.Decode))
	}
	os.Remove(bucketDir)
	os.Rename(bucketDir+".away", bucketDir)
	if code, stdout, stderr := matrixgenCmd(t, "run", "-config", "none.toml", "-base-url", url, "-resume", runs+"x.json",
		"-contexts", "1K", "-concurrency", "1,2", "-duration", "1s", "-max-output", "128"); code != 0 {
		t.Fatalf("resume: exit %d\n%s%s", code, stdout, stderr)
	}
	copied, err := runfile.Load(filepath.Join(bucketDir, "x.json"))
	if err != nil {
		t.Fatalf("the bucket's copy after resuming: %v", err)
	}
	if copied.Run.Incomplete || len(copied.Run.Decode) != 2 {
		t.Errorf("the bucket's copy after resuming is incomplete: %d cells", len(copied.Run.Decode))
	}
}

// TestServeFromABucket: serve keeps a mirror of a bucket's runs and shows
// a run that lands in the bucket.
func TestServeFromABucket(t *testing.T) {
	defer func(old time.Duration) { mirrorEvery = old }(mirrorEvery)
	mirrorEvery = 50 * time.Millisecond
	bucketDir := t.TempDir()
	store, err := bucket.Open(context.Background(), "file://"+filepath.ToSlash(bucketDir))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	mirror := t.TempDir()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	log := &lockedBuffer{}
	s := &server{runs: mirror, out: filepath.Join(t.TempDir(), "public"), cfgFile: filepath.Join(t.TempDir(), "none.toml"), log: log,
		mirror: newBucketMirror(store, mirror, io.Discard)}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.serve(ctx, ln, 20*time.Millisecond) }()
	data, err := os.ReadFile(filepath.Join("..", "..", "runs", sampleID+".json"))
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(bucketDir, "landed.json"), data)
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if resp, err := http.Get("http://" + ln.Addr().String() + "/runs/landed/"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the run that landed in the bucket is not served:\n%s", log.String())
		}
	}
	cancel()
	<-done
}

// TestAFailedPollKeepsTheMirror: a poll of serve's that failed halfway
// left the runs it had fetched beside the ones it had not (two listings
// mixed), and a stale run removed or not by chance. A poll fetches into
// the staging folder and swaps in only when every object came: a failed
// one leaves every file of the mirror as it was (its very file), says why
// on one line a failure, escaped; the next good poll brings every change.
// A key skipped is said once while it stays.
func TestAFailedPollKeepsTheMirror(t *testing.T) {
	srv := s3fake.New()
	defer srv.Close()
	srv.Put("runs/a.json", []byte(`{"a":1}`))
	srv.Put("runs/a.md", []byte("notes"))
	srv.Put("runs/b.json", []byte(`{"b":1}`))
	srv.Put("runs/bad name.json", []byte(`{}`))
	store, err := bucket.Open(t.Context(), srv.URL("runs/"))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	dir := t.TempDir()
	var said, failures lockedBuffer
	s := &server{runs: dir, log: &said, errLog: &failures, mirror: newBucketMirror(store, dir, &said)}
	mirrored := func() map[string]string {
		t.Helper()
		out := map[string]string{}
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			if e.Type().IsRegular() {
				data, _ := os.ReadFile(filepath.Join(dir, e.Name()))
				out[e.Name()] = string(data)
			}
		}
		return out
	}
	if err := s.pollOnce(t.Context()); err != nil {
		t.Fatal(err)
	}
	before := mirrored()
	if len(before) != 3 || before["a.json"] != `{"a":1}` || before["a.md"] != "notes" {
		t.Fatalf("the mirror holds %v", before)
	}
	infoA, _ := os.Stat(filepath.Join(dir, "a.json"))

	srv.Put("runs/a.json", []byte(`{"a":2}`))
	srv.Delete("runs/a.md")
	srv.Put("runs/c.json", []byte(`{"c":1}`))
	srv.Put("runs/b.json", []byte(`{"b":2}`))
	srv.Misbehave("runs/b.json", s3fake.HugeError)
	srv.HugeBytes, srv.ErrorStatus = 40<<10, http.StatusForbidden // not tried again
	if err := s.pollOnce(t.Context()); err == nil {
		t.Fatal("a poll with a failing object succeeded")
	}
	if after := mirrored(); !maps.Equal(after, before) {
		t.Errorf("after a failed poll the mirror holds %v, want %v", after, before)
	}
	if info, _ := os.Stat(filepath.Join(dir, "a.json")); !os.SameFile(info, infoA) {
		t.Error("a failed poll replaced a.json")
	}
	lines := strings.Split(strings.TrimSuffix(failures.String(), "\n"), "\n")
	if len(lines) != 2 || lines[0] != "reading the bucket's runs failed; still serving the last good site:" ||
		!strings.HasPrefix(lines[1], "  "+store.String()+": b.json: the store answered 403 InternalError: the store says\\u202e at length") || len(lines[1]) > 1000 {
		t.Errorf("the failure said:\n%s", failures.String())
	}

	srv.Misbehave("runs/b.json", s3fake.Honest)
	if err := s.pollOnce(t.Context()); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"a.json": `{"a":2}`, "b.json": `{"b":2}`, "c.json": `{"c":1}`}
	if after := mirrored(); !maps.Equal(after, want) {
		t.Errorf("after a good poll the mirror holds %v, want %v", after, want)
	}
	if n := strings.Count(said.String(), `skipped "bad name.json"`); n != 1 {
		t.Errorf("the skipped key was said %d times in three polls:\n%s", n, said.String())
	}
}

// TestRefusedPublishSaysNothingChanged: a publish refused before a page
// was written (a place holding objects matrixgen did not publish) says
// the published site did not change, not to run the build again, which
// would be refused the same way.
func TestRefusedPublishSaysNothingChanged(t *testing.T) {
	place := t.TempDir()
	writeFile(t, filepath.Join(place, "theirs.txt"), []byte("not ours"))
	code, _, stderr := matrixgenCmd(t, "build", "-runs", sampleRuns(t), "-o", "file://"+filepath.ToSlash(place)+"/")
	if code != 1 || !strings.Contains(stderr, "did not publish") || !strings.Contains(stderr, "no page of the published site changed") ||
		strings.Contains(stderr, "run the build again") {
		t.Errorf("exit %d:\n%s", code, stderr)
	}
}
