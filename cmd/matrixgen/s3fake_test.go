package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/matrixgen/matrixgen/internal/s3fake"
	"github.com/matrixgen/matrixgen/internal/testrun"
	"github.com/matrixgen/matrixgen/runfile"
)

// TestBuildFromS3ReusesUnchangedRuns: `build -runs s3://…` over an S3
// server in this process builds every run; built again, it reads no
// object and keeps every run's pages, as a build from a folder does; a
// changed object is the one read again, and its run the one built again.
func TestBuildFromS3ReusesUnchangedRuns(t *testing.T) {
	srv := s3fake.New()
	defer srv.Close()
	const n = 6
	for i := range n {
		data, err := runfile.Encode(testrun.Full(uint64(i)))
		if err != nil {
			t.Fatal(err)
		}
		srv.Put(fmt.Sprintf("runs/run-%d.json", i), data)
	}
	t.Chdir(t.TempDir())
	writeFile(t, "none.toml", nil)
	t.Setenv("XDG_CACHE_HOME", t.TempDir()) // the mirror and the cache's key
	build := func(what string) string {
		t.Helper()
		code, stdout, stderr := matrixgenCmd(t, "build", "-config", "none.toml", "-runs", srv.URL("runs/"), "-o", "public")
		if code != 0 {
			t.Fatalf("%s: exit %d\n%s%s", what, code, stdout, stderr)
		}
		return stdout
	}
	if out := build("first"); !strings.Contains(out, fmt.Sprintf("from %d runs", n)) {
		t.Errorf("first build: %s", out)
	}
	if reads, _ := srv.Reads(); len(reads) != n {
		t.Errorf("the first build read %d objects, want %d", len(reads), n)
	}
	if out := build("again"); !strings.Contains(out, fmt.Sprintf("(%d runs unchanged", n)) {
		t.Errorf("an unchanged bucket built again: %s", out)
	}
	if reads, _ := srv.Reads(); len(reads) != 0 {
		t.Errorf("an unchanged bucket built again read %v", reads)
	}
	changed := testrun.Full(1)
	changed.Engine.Version = "9.9.9"
	data, _ := runfile.Encode(changed)
	srv.Put("runs/run-1.json", data)
	if out := build("after a change"); !strings.Contains(out, fmt.Sprintf("(%d runs unchanged", n-1)) {
		t.Errorf("after one run changed: %s", out)
	}
	if reads, _ := srv.Reads(); len(reads) != 1 || reads["runs/run-1.json"] != 1 {
		t.Errorf("after one run changed, read %v", reads)
	}
	if page, err := os.ReadFile(filepath.Join("public", "runs", "run-1", "index.html")); err != nil || !strings.Contains(string(page), "9.9.9") {
		t.Errorf("the changed run's page is not rebuilt: %v", err)
	}
}
