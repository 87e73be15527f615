package bucket

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/matrixgen/matrixgen/internal/s3fake"
)

// TestObjectsWrittenSinceTheListing: an object written again between the
// listing and its read was taken as read, the snapshot then holding a
// version the listing never named. Each read asks for the listed version
// (If-Match); a store that answers 412, or one that ignores If-Match and
// sends another ETag, has the listing read again, once, and the object
// fetched as it is now. A writer always ahead of the reader is an error
// naming the object after the second listing, the mirror's copy kept.
func TestObjectsWrittenSinceTheListing(t *testing.T) {
	for _, ignore := range []bool{false, true} {
		srv := s3fake.NewInMemory()
		srv.IgnoreIfMatch = ignore
		putRuns(srv, 4)
		s := inMemoryStore(t, srv, "runs/", io.Discard)
		dir := t.TempDir()
		if _, err := s.FetchRuns(t.Context(), dir); err != nil {
			t.Fatal(err)
		}
		srv.Put("runs/r-01.json", []byte(`{"run":"1, listed"}`))
		srv.WriteOnNextRead("runs/r-01.json", []byte(`{"run":"1, written since"}`))
		srv.Reads()
		if _, err := s.FetchRuns(t.Context(), dir); err != nil {
			t.Fatalf("ignore If-Match %v: %v", ignore, err)
		}
		if have, _ := os.ReadFile(filepath.Join(dir, "r-01.json")); string(have) != `{"run":"1, written since"}` {
			t.Errorf("ignore If-Match %v: the mirror holds %s", ignore, have)
		}
		if reads, _ := srv.Reads(); len(reads) != 1 || reads["runs/r-01.json"] != 2 {
			t.Errorf("ignore If-Match %v: read %v, want r-01.json twice (refused as listed, then as listed again)", ignore, reads)
		}

		srv.Put("runs/r-02.json", []byte(`{"run":"2, listed"}`))
		srv.Misbehave("runs/r-02.json", s3fake.Rewritten)
		_, err := s.FetchRuns(t.Context(), dir)
		want := "s3://lab/runs/: r-02.json: written again since it was listed, and again since a second listing; the mirror's copy was kept"
		if err == nil || !strings.HasPrefix(err.Error(), want) || strings.Count(err.Error(), "\n") != 0 {
			t.Errorf("ignore If-Match %v: a writer always ahead: %v", ignore, err)
		}
		if have, _ := os.ReadFile(filepath.Join(dir, "r-02.json")); string(have) != `{"run":2}` {
			t.Errorf("ignore If-Match %v: the mirror's r-02.json became %s", ignore, have)
		}
	}
}

// TestTheMirrorGoesByTheListedETag: the mirror's record keeps each
// object's listed ETag, the version it was read as. An object written
// again with as many bytes within the same second, under a multipart ETag
// (which says no MD5), was told unchanged by its size and time and never
// fetched again; its ETag tells. A record written before ETags were kept
// (five fields a line) is still read: nothing unchanged is fetched again.
// A store that lists one version and sends another is never mirrored.
func TestTheMirrorGoesByTheListedETag(t *testing.T) {
	// In a bubble the clock stands still: written again "in the same second".
	synctest.Test(t, func(t *testing.T) {
		srv := s3fake.NewInMemory()
		srv.MultipartETags = true
		putRuns(srv, 3)
		s := inMemoryStore(t, srv, "runs/", io.Discard)
		dir := t.TempDir()
		if _, err := s.FetchRuns(t.Context(), dir); err != nil {
			t.Fatal(err)
		}
		if st := readFetched(dir)["r-00.json"]; !strings.HasSuffix(st.etag, `-1"`) {
			t.Errorf("r-00.json recorded with ETag %q, want the listed multipart one", st.etag)
		}
		srv.Reads()
		srv.Put("runs/r-01.json", []byte(`{"run":7}`)) // as many bytes, the same time
		if _, err := s.FetchRuns(t.Context(), dir); err != nil {
			t.Fatal(err)
		}
		if reads, _ := srv.Reads(); len(reads) != 1 || reads["runs/r-01.json"] != 1 {
			t.Errorf("after r-01.json was written again in place, read %v", reads)
		}
		if have, _ := os.ReadFile(filepath.Join(dir, "r-01.json")); string(have) != `{"run":7}` {
			t.Errorf("the mirror holds %s", have)
		}
	})

	// An old record, without ETags: objects told unchanged by MD5.
	plain := s3fake.NewInMemory()
	putRuns(plain, 3)
	s := inMemoryStore(t, plain, "runs/", io.Discard)
	dir := t.TempDir()
	if _, err := s.FetchRuns(t.Context(), dir); err != nil {
		t.Fatal(err)
	}
	var old strings.Builder
	for key, st := range readFetched(dir) {
		fmt.Fprintf(&old, "%s\t%d\t%s\t%d\t%d\n", key, st.size, st.md5, st.mod.UnixNano(), st.file.UnixNano())
	}
	os.WriteFile(filepath.Join(dir, fetchedFile), []byte(old.String()), 0o644)
	plain.Reads()
	if _, err := s.FetchRuns(t.Context(), dir); err != nil {
		t.Fatal(err)
	}
	if reads, _ := plain.Reads(); len(reads) != 0 {
		t.Errorf("with a record of five fields, read %v again", reads)
	}
	if st := readFetched(dir)["r-02.json"]; st.etag == "" {
		t.Error("the record written again keeps no ETag")
	}

	plain.Put("runs/r-02.json", []byte(`{"run":"two"}`))
	plain.Misbehave("runs/r-02.json", s3fake.Newer)
	_, err := s.FetchRuns(t.Context(), dir)
	if err == nil || !strings.Contains(err.Error(), "r-02.json: written again since it was listed") {
		t.Errorf("a store that sends another version than it lists: %v", err)
	}
	if have, _ := os.ReadFile(filepath.Join(dir, "r-02.json")); string(have) != `{"run":2}` {
		t.Errorf("the mirror's r-02.json became %s", have)
	}
}

// TestAWholeFetchIsBounded: a store that answers each read within its
// bounds, but slowly (5 minutes an object, 8 at a time), held a build of
// 60 objects 40 minutes. The whole fetch ends at Limits.Fetch, exactly,
// with one line saying so, and no record of a fetch cut short is kept.
func TestAWholeFetchIsBounded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := s3fake.NewInMemory()
		srv.PageSize = 100
		putRuns(srv, 60)
		srv.ReadDelay = 5 * time.Minute
		s := inMemoryStore(t, srv, "runs/", io.Discard)
		s.SetLimits(Limits{Idle: 10 * time.Minute, Object: 10 * time.Minute, Fetch: 30 * time.Minute})
		dir := t.TempDir()
		start := time.Now()
		_, err := s.FetchRuns(t.Context(), dir)
		if took := time.Since(start); took != 30*time.Minute {
			t.Errorf("failed after %v, want 30m", took)
		}
		want := "s3://lab/runs/: fetching took longer than 30m0s, the most a whole fetch may take; the objects not yet fetched keep their copies in the mirror"
		if err == nil || err.Error() != want {
			t.Errorf("got %v\nwant %s", err, want)
		}
		if _, err := os.Stat(filepath.Join(dir, fetchedFile)); err == nil {
			t.Error("a fetch cut short wrote the mirror's record")
		}
		// Within the bound, the same fetch succeeds.
		s.SetLimits(Limits{Idle: 10 * time.Minute, Object: 10 * time.Minute, Fetch: 45 * time.Minute})
		if f, err := s.FetchRuns(context.WithoutCancel(t.Context()), t.TempDir()); err != nil || len(f.Runs) != 60 {
			t.Errorf("%d runs, %v", len(f.Runs), err)
		}
	})
}

// TestNamesThatDifferOnlyInCase: Run-1.json and run-1.json are two keys
// but one file where the file system ignores case (macOS, Windows): the
// mirror held one's bytes under the other's name. The second listed is
// skipped with a line naming both; a file of the mirror that the listing
// no longer names, in whatever case, is removed.
func TestNamesThatDifferOnlyInCase(t *testing.T) {
	srv := s3fake.NewInMemory()
	srv.Put("runs/Run-1.json", []byte(`{"run":"upper"}`))
	srv.Put("runs/run-1.json", []byte(`{"run":"lower"}`))
	srv.Put("runs/run-1.md", []byte("notes"))
	srv.Put("runs/b.json", []byte(`{}`))
	mem := memStore(t, "mem://")
	for _, k := range []string{"Run-1.json", "run-1.json", "run-1.md", "b.json"} {
		mem.Put(t.Context(), k, []byte(`{}`))
	}
	for _, s := range []*Store{inMemoryStore(t, srv, "runs/", io.Discard), mem} {
		dir := t.TempDir()
		os.WriteFile(filepath.Join(dir, "B.json"), []byte(`{"stale":true}`), 0o644)
		f, err := s.FetchRuns(t.Context(), dir)
		if err != nil {
			t.Fatal(err)
		}
		if len(f.Runs) != 2 || filepath.Base(f.Runs[0]) != "Run-1.json" || filepath.Base(f.Runs[1]) != "b.json" {
			t.Errorf("%s: runs %v", s, f.Runs)
		}
		want := "skipped run-1.json in " + s.String() + ": its name differs from Run-1.json only in case"
		if len(f.Skipped) != 1 || !strings.HasPrefix(f.Skipped[0], want) {
			t.Errorf("%s: skipped %q, want %q", s, f.Skipped, want)
		}
		entries, _ := os.ReadDir(dir)
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		if strings.Join(names, " ") != ".fetched Run-1.json b.json run-1.md" {
			t.Errorf("%s: the mirror holds %v", s, names)
		}
	}
}
