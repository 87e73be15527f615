package bucket

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go/logging"

	"github.com/matrixgen/matrixgen/internal/s3fake"
	"github.com/matrixgen/matrixgen/internal/term"
)

// syncBuffer is a log the S3 client writes from its goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// s3Client is an S3 client of srv over in-memory connections, logging to log.
func s3Client(t *testing.T, srv *s3fake.Server, log io.Writer) *s3.Client {
	t.Helper()
	hc, endpoint, stop := srv.InMemory()
	t.Cleanup(stop)
	return s3.New(s3.Options{
		Region: "us-east-1", BaseEndpoint: aws.String(endpoint), UsePathStyle: true,
		Credentials: aws.AnonymousCredentials{}, HTTPClient: hc, Logger: logging.NewStandardLogger(log),
		// As the SDK's configuration sets by default.
		ResponseChecksumValidation: aws.ResponseChecksumValidationWhenSupported,
	})
}

// inMemoryStore is the store s3://lab/<prefix> of srv, reached over
// in-memory connections, so a test of time runs in a synctest bubble;
// opened as every store is, its replies bounded.
func inMemoryStore(t *testing.T, srv *s3fake.Server, prefix string, log io.Writer) *Store {
	t.Helper()
	hc, endpoint, stop := srv.InMemory()
	t.Cleanup(stop)
	s, err := open(context.Background(), "s3://lab/"+prefix+"?region=us-east-1&use_path_style=true&anonymous=true&endpoint="+endpoint, false,
		func(o *s3.Options) { o.HTTPClient, o.Logger = hc, logging.NewStandardLogger(log) })
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func putRuns(srv *s3fake.Server, n int) {
	for i := range n {
		srv.Put(fmt.Sprintf("runs/r-%02d.json", i), []byte(fmt.Sprintf(`{"run":%d}`, i)))
	}
}

// TestReadsThatStallFail: a store that stops sending (before the body,
// midway, or on a listing's page) once held a build, and serve's poll,
// forever. Each stall fails after the idle time (30 s of the bubble's
// clock), naming what was read; every object that stalls is named, not
// only the first; one that trickles a byte a second fails at the
// object's bound.
func TestReadsThatStallFail(t *testing.T) {
	for _, tt := range []struct {
		how     s3fake.Tamper
		stalled []int
		after   time.Duration // when it fails, on the bubble's clock
		says    string
	}{
		{s3fake.Stall, []int{3}, DefaultLimits.Idle, "the store sent nothing for 30s"},
		{s3fake.StallMidway, []int{0, 5, 6}, DefaultLimits.Idle, "the store sent nothing for 30s"},
		{s3fake.Stall, []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, 2 * DefaultLimits.Idle, "the store sent nothing for 30s"},
		{s3fake.Trickle, []int{7}, DefaultLimits.Object, "not read whole within 10m0s"},
	} {
		synctest.Test(t, func(t *testing.T) {
			srv := s3fake.NewInMemory()
			putRuns(srv, 12)
			for _, i := range tt.stalled {
				srv.Misbehave(fmt.Sprintf("runs/r-%02d.json", i), tt.how)
			}
			s := inMemoryStore(t, srv, "runs/", io.Discard)
			start := time.Now()
			_, err := s.FetchRuns(t.Context(), t.TempDir())
			took := time.Since(start)
			if err == nil {
				t.Fatalf("%d: stalled reads succeeded", tt.how)
			}
			lines := strings.Split(err.Error(), "\n")
			if len(lines) != len(tt.stalled) {
				t.Errorf("%d: %d lines for %d stalled objects:\n%v", tt.how, len(lines), len(tt.stalled), err)
			}
			for _, i := range tt.stalled {
				if key := fmt.Sprintf("r-%02d.json: %s", i, tt.says); !strings.Contains(err.Error(), key) {
					t.Errorf("%d: no %q in\n%v", tt.how, key, err)
				}
			}
			// Twelve objects, eight at a time: a second round of stalls
			// waits for the first.
			if took < tt.after || took > tt.after+time.Second {
				t.Errorf("%d: failed after %v, want %v", tt.how, took, tt.after)
			}
		})
	}
	synctest.Test(t, func(t *testing.T) {
		srv := s3fake.NewInMemory()
		putRuns(srv, 2)
		srv.Listing = s3fake.ListStall
		s := inMemoryStore(t, srv, "runs/", io.Discard)
		start := time.Now()
		_, err := s.FetchRuns(t.Context(), t.TempDir())
		if err == nil || !strings.Contains(err.Error(), "s3://lab/runs/: listing: the store sent nothing for 30s") || time.Since(start) != DefaultLimits.Idle {
			t.Errorf("a stalled listing, after %v: %v", time.Since(start), err)
		}
		// Get and Publish read the store too.
		srv.Listing = s3fake.ListWell
		srv.Misbehave("runs/r-00.json", s3fake.StallMidway)
		if _, _, err := s.Get(t.Context(), "r-00.json"); err == nil || !strings.Contains(err.Error(), "r-00.json: the store sent nothing") {
			t.Errorf("a stalled Get: %v", err)
		}
		// A write (a run's copy, a page published) is bounded by the
		// object's time.
		srv.StallWrites = true
		start = time.Now()
		if err := s.Put(t.Context(), "r-99.json", []byte("{}")); err == nil || !strings.Contains(err.Error(), "r-99.json: not written within 10m0s") || time.Since(start) != DefaultLimits.Object {
			t.Errorf("a stalled write, after %v: %v", time.Since(start), err)
		}
	})
}

// TestEndlessListingsAreRefused: a listing that repeats its continuation
// token, or never ends (new keys, or empty pages, on every page) was read
// forever, its keys held. Each is refused at its bound, saying which;
// keys skipped are kept to the first few lines and a count.
func TestEndlessListingsAreRefused(t *testing.T) {
	for _, tt := range []struct {
		listing s3fake.Listing
		says    string
	}{
		{s3fake.ListLoop, "repeated a continuation token (page 3)"},
		{s3fake.ListEndless, "listed more than 1000 keys"},
		{s3fake.ListEndlessEmpty, "more than 200 pages"},
	} {
		srv := s3fake.NewInMemory()
		srv.PageSize = 50
		putRuns(srv, 10)
		srv.Listing = tt.listing
		s := inMemoryStore(t, srv, "runs/", io.Discard)
		s.SetLimits(Limits{MaxKeys: 1000, MaxPages: 200})
		_, err := s.FetchRuns(t.Context(), t.TempDir())
		if err == nil || !strings.Contains(err.Error(), "s3://lab/runs/: listing: ") || !strings.Contains(err.Error(), tt.says) {
			t.Errorf("listing %d: %v, want %q", tt.listing, err, tt.says)
		}
	}
	srv := s3fake.NewInMemory()
	srv.PageSize = 50
	putRuns(srv, 3)
	for i := range 500 {
		srv.Put(fmt.Sprintf("runs/sub/s-%03d.json", i), []byte("{}"))
	}
	s := inMemoryStore(t, srv, "runs/", io.Discard)
	s.SetLimits(Limits{MaxReported: 5})
	f, err := s.FetchRuns(t.Context(), t.TempDir())
	if err != nil || len(f.Runs) != 3 {
		t.Fatalf("%d runs, %v", len(f.Runs), err)
	}
	if len(f.Skipped) != 6 || f.Skipped[5] != "skipped 495 more keys in s3://lab/runs/" || !strings.Contains(f.Skipped[0], "sub/s-000.json") {
		t.Errorf("skipped lines:\n%s", strings.Join(f.Skipped, "\n"))
	}
}

// TestFetchedObjectsAreChecked: a store that sends other bytes than it
// lists (short, longer, other bytes under the listed ETag) once left a
// stale or wrong run in the mirror, recorded as good. For generated
// objects of every size and both kinds of ETag (an MD5, and a multipart
// upload's, which says none), each is an error naming the object, the
// mirror keeps the copy it had, and the object once honest again is
// fetched. Other bytes of the listed size under a multipart ETag are the
// one case nothing can tell.
func TestFetchedObjectsAreChecked(t *testing.T) {
	rng := rand.New(rand.NewPCG(25, 3))
	for _, multipart := range []bool{false, true} {
		for _, how := range []s3fake.Tamper{s3fake.Short, s3fake.Longer, s3fake.OtherBytes} {
			if multipart && how == s3fake.OtherBytes {
				continue
			}
			for range 4 {
				srv := s3fake.NewInMemory()
				srv.MultipartETags = multipart
				body := func() []byte {
					b := make([]byte, 2+rng.IntN(5000))
					for i := range b {
						b[i] = byte('a' + rng.IntN(26))
					}
					return b
				}
				first, second := body(), body()
				srv.Put("runs/r.json", first)
				s := inMemoryStore(t, srv, "runs/", io.Discard)
				dir := t.TempDir()
				if _, err := s.FetchRuns(t.Context(), dir); err != nil {
					t.Fatal(err)
				}
				srv.Put("runs/r.json", second)
				srv.Misbehave("runs/r.json", how)
				_, err := s.FetchRuns(t.Context(), dir)
				if err == nil || !strings.HasPrefix(err.Error(), "s3://lab/runs/: r.json: ") {
					t.Errorf("multipart %v, tamper %d, %d bytes: %v", multipart, how, len(second), err)
				}
				if have, _ := os.ReadFile(filepath.Join(dir, "r.json")); !bytes.Equal(have, first) {
					t.Errorf("multipart %v, tamper %d: the mirror's copy was replaced", multipart, how)
				}
				srv.Misbehave("runs/r.json", s3fake.Honest)
				if _, err := s.FetchRuns(t.Context(), dir); err != nil {
					t.Fatal(err)
				}
				if have, _ := os.ReadFile(filepath.Join(dir, "r.json")); !bytes.Equal(have, second) {
					t.Errorf("multipart %v, tamper %d: once honest, the mirror holds %d bytes, not the object's %d", multipart, how, len(have), len(second))
				}
			}
		}
	}
}

// TestEscapedKeysAreSkipped: gocloud's S3 driver reads "__0xNN__" in a
// key as the character NN, so "a__0x2F__b.json" was listed as "a/b.json"
// and "r__0x41__.json" fetched as "rA.json" (another object, or none: the
// build failed). Generated keys with such text, and with spaces, unicode
// and '%', are skipped with a line naming them as stored; the runs beside
// them are fetched; from S3 and from a file:// folder, whose driver
// does the same.
func TestEscapedKeysAreSkipped(t *testing.T) {
	rng := rand.New(rand.NewPCG(25, 4))
	escapes := []string{"__0x2F__", "__0x41__", "__0x2E__", "__0x0A__", "__0xe9__"}
	others := []string{" ", "é", "%41", "%", "\u202e"}
	fine := []string{"", "__0xZZ__", "_0x41_", "-x"}
	srv := s3fake.NewInMemory()
	folder := t.TempDir()
	var escaped, invalid, runs []string
	for i := range 60 {
		var frag string
		switch i % 3 {
		case 0:
			frag = escapes[rng.IntN(len(escapes))]
			escaped = append(escaped, fmt.Sprintf("r%d%s.json", i, frag))
		case 1:
			frag = others[rng.IntN(len(others))]
			invalid = append(invalid, fmt.Sprintf("r%d%s.json", i, frag))
		default:
			frag = fine[rng.IntN(len(fine))]
			runs = append(runs, fmt.Sprintf("r%d%s.json", i, frag))
		}
		key := fmt.Sprintf("r%d%s.json", i, frag)
		srv.Put("runs/"+key, []byte(key))
		if !strings.Contains(key, "/") {
			os.WriteFile(filepath.Join(folder, key), []byte(key), 0o644)
		}
	}
	slices.Sort(runs)
	for _, s := range []*Store{inMemoryStore(t, srv, "runs/", io.Discard), memStore(t, "file://"+filepath.ToSlash(folder))} {
		s.SetLimits(Limits{MaxReported: 100})
		checkEscapedKeys(t, s, escaped, invalid, runs)
	}
}

func checkEscapedKeys(t *testing.T, s *Store, escaped, invalid, runs []string) {
	t.Helper()
	dir := t.TempDir()
	f, err := s.FetchRuns(t.Context(), dir)
	if err != nil {
		t.Fatalf("%s: %v", s, err)
	}
	var got []string
	for _, r := range f.Runs {
		got = append(got, filepath.Base(r))
	}
	if !slices.Equal(got, runs) {
		t.Errorf("%s: runs %v, want %v", s, got, runs)
	}
	for _, key := range runs {
		if have, _ := os.ReadFile(filepath.Join(dir, key)); string(have) != key {
			t.Errorf("%s holds %q", key, have)
		}
	}
	said := strings.Join(f.Skipped, "\n")
	for _, key := range escaped {
		if !strings.Contains(said, "skipped "+term.Name(key)+" in "+s.String()+": its name holds text (__0xNN__)") {
			t.Errorf("%s: no line for %q:\n%s", s, key, said)
		}
	}
	for _, key := range invalid {
		if !strings.Contains(said, term.Name(key)) {
			t.Errorf("no line for %q:\n%s", key, said)
		}
	}
}

// TestNoLineForObjectsWithoutChecksums: the S3 client printed a line for
// every object stored without a checksum (most are). Reads say nothing;
// the same read without the store's options does print it, so the test
// can tell.
func TestNoLineForObjectsWithoutChecksums(t *testing.T) {
	srv := s3fake.NewInMemory()
	putRuns(srv, 4)
	for i := range 4 {
		srv.Misbehave(fmt.Sprintf("runs/r-%02d.json", i), s3fake.NoChecksum)
	}
	var log syncBuffer
	s := inMemoryStore(t, srv, "runs/", &log)
	if _, err := s.FetchRuns(t.Context(), t.TempDir()); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Get(t.Context(), "r-00.json"); err != nil {
		t.Fatal(err)
	}
	if log.String() != "" {
		t.Errorf("the client said:\n%s", log.String())
	}
	client := s3Client(t, srv, &log)
	out, err := client.GetObject(t.Context(), &s3.GetObjectInput{Bucket: aws.String("lab"), Key: aws.String("runs/r-00.json")})
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, out.Body)
	out.Body.Close()
	if !strings.Contains(strings.ToLower(log.String()), "checksum") {
		t.Errorf("a plain read said nothing of the checksum (%q): this test cannot tell", log.String())
	}
}

// TestFailuresReportedUpToABound: every object that fails is named, up to
// Limits.MaxReported; then fetching stops, and a last line says so.
func TestFailuresReportedUpToABound(t *testing.T) {
	srv := s3fake.NewInMemory()
	putRuns(srv, 30)
	for i := range 30 {
		srv.Misbehave(fmt.Sprintf("runs/r-%02d.json", i), s3fake.Short)
	}
	s := inMemoryStore(t, srv, "runs/", io.Discard)
	s.SetLimits(Limits{MaxReported: 4})
	_, err := s.FetchRuns(t.Context(), t.TempDir())
	if err == nil {
		t.Fatal("30 short objects fetched")
	}
	lines := strings.Split(err.Error(), "\n")
	if len(lines) != 5 || lines[4] != "fetching from s3://lab/runs/ stopped after 4 objects failed; the others were not read" {
		t.Fatalf("%d lines:\n%v", len(lines), err)
	}
	for _, line := range lines[:4] {
		if !strings.HasPrefix(line, "s3://lab/runs/: r-") {
			t.Errorf("a line naming no object: %q", line)
		}
	}
}
