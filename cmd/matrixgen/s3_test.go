package main

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/matrixgen/matrixgen/internal/procgroup"
	"github.com/matrixgen/matrixgen/runfile"
)

// seaweed is a SeaweedFS server (master, volume, filer and its S3 gateway)
// on loopback ports, with its data in dir: a real S3 store.
type seaweed struct {
	bin, dir string
	ports    [4]int // master, volume, filer, s3
	cmd      *exec.Cmd
	log      bytes.Buffer
}

// freePorts finds n ports free now, each with its +10000 gRPC twin free too.
func freePorts(t *testing.T, n int) []int {
	var out []int
	for len(out) < n {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		p := ln.Addr().(*net.TCPAddr).Port
		ln.Close()
		if p > 55000 {
			continue
		}
		if twin, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p+10000)); err == nil {
			twin.Close()
			out = append(out, p)
		}
	}
	return out
}

func (s *seaweed) start(t *testing.T) {
	t.Helper()
	p := s.ports
	s.log.Reset()
	s.cmd = exec.Command(s.bin, "server", "-dir="+s.dir, "-ip=127.0.0.1", "-ip.bind=127.0.0.1",
		fmt.Sprintf("-master.port=%d", p[0]), fmt.Sprintf("-volume.port=%d", p[1]), "-filer",
		fmt.Sprintf("-filer.port=%d", p[2]), "-s3", fmt.Sprintf("-s3.port=%d", p[3]), "-volume.max=5")
	s.cmd.Stdout, s.cmd.Stderr = &s.log, &s.log
	// Without the client's AWS_* variables, which SeaweedFS would take as
	// its own admin identity: with no identities it takes any client's.
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "AWS_") {
			s.cmd.Env = append(s.cmd.Env, kv)
		}
	}
	procgroup.Own(s.cmd)
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Up when it can make the bucket (a PUT the gateway takes without keys
	// when none are configured).
	last := ""
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		req, _ := http.NewRequest("PUT", s.endpoint()+"/lab", nil)
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode == 200 || resp.StatusCode == 409 {
				return
			}
			last = fmt.Sprintf("%d %s", resp.StatusCode, tail(string(body), 300))
		} else {
			last = err.Error()
		}
		if time.Now().After(deadline) {
			t.Fatalf("SeaweedFS did not come up in 60 s (last: %s):\n%s", last, tail(s.log.String(), 3000))
		}
	}
}

func (s *seaweed) stop() {
	if s.cmd != nil && s.cmd.Process != nil {
		procgroup.Kill(s.cmd)
		s.cmd.Wait()
		s.cmd = nil
	}
}

func (s *seaweed) endpoint() string { return fmt.Sprintf("http://127.0.0.1:%d", s.ports[3]) }

// url is a place in the lab bucket, with what gocloud needs to reach it.
func (s *seaweed) url(prefix string) string {
	return "s3://lab/" + prefix + "?endpoint=" + s.endpoint() + "&region=us-east-1&use_path_style=true&disable_https=true"
}

// TestRealS3 is the lab against a real S3 server, SeaweedFS on loopback:
// two boxes run at once into one bucket, the site is built from it and
// published to it, every page is fetched back over the store's HTTP, and
// a store that stops mid-run loses nothing. .ci/run builds SeaweedFS from
// the Go module proxy and sets MATRIXGEN_REQUIRE_S3; elsewhere, without
// `weed` on PATH, the test skips and says so.
func TestRealS3(t *testing.T) {
	bin := realServer(t, "weed", "MATRIXGEN_REQUIRE_S3", "SeaweedFS; .ci/run builds it")
	// The store's credentials come from its own environment: SeaweedFS
	// with no identities configured takes any.
	t.Setenv("AWS_ACCESS_KEY_ID", "matrixgen-test")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "matrixgen-test-secret")
	ports := freePorts(t, 4)
	store := &seaweed{bin: bin, dir: t.TempDir(), ports: [4]int(ports)}
	store.start(t)
	t.Cleanup(func() {
		store.stop()
		if t.Failed() {
			t.Logf("SeaweedFS's log, last part:\n%s", tail(store.log.String(), 3000))
		}
	})
	defer func(old []time.Duration) { uploadRetries = old }(uploadRetries)
	uploadRetries = []time.Duration{50 * time.Millisecond}

	url := quickSim(t)
	t.Chdir(t.TempDir())
	writeFile(t, "none.toml", nil)
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	runArgs := func(o string, extra ...string) []string {
		return append([]string{"run", "-config", "none.toml", "-base-url", url, "-o", o,
			"-contexts", "1K", "-concurrency", "1,2", "-duration", "1s", "-max-output", "128"}, extra...)
	}
	var wg sync.WaitGroup
	results := make([]string, 2)
	codes := make([]int, 2)
	for i, id := range []string{"box-a", "box-b"} {
		wg.Go(func() {
			var out, errOut string
			codes[i], out, errOut = matrixgenCmd(t, runArgs(store.url("runs/"+id+".json"))...)
			results[i] = out + errOut
		})
	}
	wg.Wait()
	for i := range codes {
		if codes[i] != 0 {
			t.Fatalf("box %d: exit %d\n%s", i, codes[i], results[i])
		}
		if strings.Contains(results[i], "matrixgen-test-secret") {
			t.Errorf("box %d printed the store's secret", i)
		}
	}
	code, stdout, stderr := matrixgenCmd(t, "build", "-config", "none.toml", "-runs", store.url("runs/"), "-o", store.url("site/"))
	if code != 0 {
		t.Fatalf("build from and publish to the bucket: exit %d\n%s%s", code, stdout, stderr)
	}
	if strings.Contains(stdout+stderr, "endpoint=") || strings.Contains(stdout+stderr, "secret") {
		t.Errorf("the build's output shows the store URL's query: %s%s", stdout, stderr)
	}
	// Every page, fetched back over the store's own HTTP.
	marker := fetch(t, store.endpoint()+"/lab/site/.matrixgen-site")
	pages := 0
	for _, key := range strings.Split(marker, "\n")[1:] {
		if key == "" {
			continue
		}
		body := fetch(t, store.endpoint()+"/lab/site/"+key)
		if strings.HasSuffix(key, ".html") && !strings.Contains(body, "</html>") {
			t.Errorf("%s is not a whole page", key)
		}
		pages++
	}
	for _, want := range []string{"runs/box-a/index.html", "runs/box-b/index.html", "index.html"} {
		if !strings.Contains(marker, want+"\n") {
			t.Errorf("the published site lacks %s", want)
		}
	}
	t.Logf("fetched %d objects of the published site over HTTP", pages)

	// The store stops after the run's first copy: nothing is lost.
	done := make(chan struct{})
	go func() {
		defer close(done)
		for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			if resp, err := http.Get(store.endpoint() + "/lab/runs/box-c.json"); err == nil {
				resp.Body.Close()
				if resp.StatusCode == 200 {
					store.stop()
					return
				}
			}
		}
	}()
	code, stdout, stderr = matrixgenCmd(t, runArgs(store.url("runs/box-c.json"))...)
	<-done
	if code == 0 || !strings.Contains(stderr, "the run is saved in runs/box-c.json") {
		t.Errorf("a run whose store stopped: exit %d\n%s%s", code, stdout, stderr)
	}
	local, err := runfile.Load(filepath.Join("runs", "box-c.json"))
	if err != nil {
		t.Fatal(err)
	}
	if local.Run.Incomplete || len(local.Run.Decode) != 2 {
		t.Errorf("the local copy lost measurements: %d cells, incomplete %v", len(local.Run.Decode), local.Run.Incomplete)
	}
	store.start(t)
	code, stdout, stderr = matrixgenCmd(t, "run", "-config", "none.toml", "-base-url", url, "-resume", store.url("runs/box-c.json"),
		"-contexts", "1K", "-concurrency", "1,2", "-duration", "1s", "-max-output", "128")
	if code != 0 {
		t.Fatalf("resume once the store is back: exit %d\n%s%s", code, stdout, stderr)
	}
	copied := fetch(t, store.endpoint()+"/lab/runs/box-c.json")
	if data, _ := os.ReadFile(filepath.Join("runs", "box-c.json")); copied != string(data) {
		t.Error("the bucket's copy is not the local file")
	}
}

func fetch(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("GET %s: %d %s", url, resp.StatusCode, tail(string(body), 300))
	}
	return string(body)
}
