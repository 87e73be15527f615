package bucket

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/matrixgen/matrixgen/internal/redact"
	"github.com/matrixgen/matrixgen/internal/s3fake"
	"github.com/matrixgen/matrixgen/internal/term"
	"github.com/matrixgen/matrixgen/runfile"
)

// SetLimits sets the limits of the store's reads; a zero field keeps its
// default.
func (s *Store) SetLimits(l Limits) {
	d := DefaultLimits
	s.limits = Limits{
		Idle: cmp.Or(l.Idle, d.Idle), Object: cmp.Or(l.Object, d.Object), Fetch: cmp.Or(l.Fetch, d.Fetch),
		MaxKeys: cmp.Or(l.MaxKeys, d.MaxKeys), MaxPages: cmp.Or(l.MaxPages, d.MaxPages),
		MaxReported: cmp.Or(l.MaxReported, d.MaxReported),
	}
}

func memStore(t *testing.T, place string) *Store {
	t.Helper()
	s, err := Open(context.Background(), place)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestIsURLAndRedact(t *testing.T) {
	for _, tt := range []struct {
		place string
		url   bool
	}{{"runs", false}, {"/tmp/runs", false}, {`C:\runs`, false}, {"s3://lab/runs/", true}, {"file:///tmp/x", true}, {"mem://", true}} {
		if IsURL(tt.place) != tt.url {
			t.Errorf("IsURL(%q) = %v", tt.place, !tt.url)
		}
	}
	if got := Redact("s3://AKIA:secret@lab/runs/?endpoint=http://x&access_key=k"); got != "s3://lab/runs/" {
		t.Errorf("redacted to %q", got)
	}
}

// TestCheckScheme: s3://, file:// and mem:// open; gs://, azblob:// and
// any other scheme are refused in one line that names the place without
// its query, says only s3:// (and S3-compatible stores) is read, and how
// to reach the store; Open refuses them the same way.
func TestCheckScheme(t *testing.T) {
	for _, place := range []string{"s3://lab/runs/?region=x", "S3://lab/runs/", "file:///tmp/x", "mem://"} {
		if err := CheckScheme(place); err != nil {
			t.Errorf("%s: %v", place, err)
		}
	}
	for place, how := range map[string]string{
		"gs://lab/runs/?token=s3cr3tvalue":       "endpoint=https://storage.googleapis.com",
		"azblob://lab/runs/?sig=s3cr3tvalue":     "S3-compatible gateway",
		"GS://lab/runs/":                         "storage.googleapis.com",
		"swift://lab/runs/?password=s3cr3tvalue": "endpoint=https://host:9000",
	} {
		for _, err := range []error{CheckScheme(place), func() error { _, err := Open(context.Background(), place); return err }()} {
			if err == nil || strings.Contains(err.Error(), "s3cr3tvalue") || strings.Contains(err.Error(), "\n") ||
				!strings.Contains(err.Error(), "only s3:// (AWS S3 and S3-compatible stores) and file:// places are supported") || !strings.Contains(err.Error(), how) {
				t.Errorf("%s: %v; want it refused, saying %q, without the query", place, err, how)
			}
			// Messages are redacted when printed: the hint must survive it.
			if err != nil && redact.Text(err.Error()) != err.Error() {
				t.Errorf("%s: printed, the hint loses words:\n%s\n%s", place, err, redact.Text(err.Error()))
			}
		}
	}
	// A host in a file:// URL is not a relative folder: fileblob would
	// write file://site/ at /site.
	for _, place := range []string{"file://site/", "file://relative/site/?create_dir=true"} {
		if err := CheckScheme(place); err == nil || !strings.Contains(err.Error(), "file:///var/www/site/") {
			t.Errorf("%s: %v; want it refused, showing file:///", place, err)
		}
	}
	if err := CheckScheme("file://localhost/tmp/x"); err != nil {
		t.Errorf("file://localhost/tmp/x: %v", err)
	}
}

// TestFetchRuns: the run files and notes at the top of the store, nothing
// below it, nothing hidden.
func TestFetchRuns(t *testing.T) {
	ctx := context.Background()
	s := memStore(t, "mem://")
	for key, body := range map[string]string{"a.json": "{}", "a.md": "notes", "b.json": "{}", "sub/c.json": "{}", ".a.json.tmp": "x", "readme.txt": "x"} {
		if err := s.Put(ctx, key, []byte(body)); err != nil {
			t.Fatal(err)
		}
	}
	dir := t.TempDir()
	fetched, err := s.FetchRuns(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	runs := fetched.Runs
	if len(runs) != 2 || filepath.Base(runs[0]) != "a.json" || filepath.Base(runs[1]) != "b.json" {
		t.Errorf("runs %v", runs)
	}
	if notes, err := os.ReadFile(filepath.Join(dir, "a.md")); err != nil || string(notes) != "notes" {
		t.Errorf("notes %q, %v", notes, err)
	}
}

// TestCreateRefusesAnExistingRun: two writers of one id, in either store.
func TestCreateRefusesAnExistingRun(t *testing.T) {
	for _, place := range []string{"mem://", "file://" + t.TempDir()} {
		s := memStore(t, place)
		ctx := context.Background()
		if err := s.Create(ctx, "run.json", []byte("first")); err != nil {
			t.Fatal(err)
		}
		err := s.Create(ctx, "run.json", []byte("second"))
		if !errors.Is(err, ErrExists) {
			t.Errorf("%s: the second create: %v", place, err)
		}
		if data, _, _ := s.Get(ctx, "run.json"); string(data) != "first" {
			t.Errorf("%s: the first writer's run became %q", place, data)
		}
	}
}

func writeSite(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	var marker strings.Builder
	marker.WriteString("This folder is a site built by matrixgen.\n")
	for rel, body := range files {
		name := filepath.Join(dir, filepath.FromSlash(rel))
		os.MkdirAll(filepath.Dir(name), 0o755)
		if err := os.WriteFile(name, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		marker.WriteString(rel + "\n")
	}
	os.WriteFile(filepath.Join(dir, SiteMarker), []byte(marker.String()), 0o644)
	return dir
}

// TestPublish: pages written with their content types, unchanged ones not
// rewritten, a page the site no longer has removed after the rest is
// written, an object someone else put beside the site kept, and a prefix
// holding objects matrixgen did not publish refused.
func TestPublish(t *testing.T) {
	for _, place := range []string{"mem://", "file://" + t.TempDir()} {
		ctx := context.Background()
		s := memStore(t, place)
		// An earlier version published the build's reuse cache; this
		// publish removes it.
		s.Put(ctx, SiteMarker, []byte("header\n.matrixgen-cache\n"))
		s.Put(ctx, ".matrixgen-cache", []byte("signed gobs"))
		site := map[string]string{"index.html": "<p>1</p>", "runs/a/index.html": "a", "runs/a/run.json": "{}", "assets/matrixgen.css": "p{}",
			".matrixgen-cache": "signed gobs"}
		p, err := s.Publish(ctx, writeSite(t, site))
		if err != nil || p.Written != 5 || p.Removed != 1 {
			t.Fatalf("%s: first publish %+v, %v", place, p, err)
		}
		// The build's own files stay on the machine that built the site;
		// the store's marker lists what the publish wrote.
		if _, found, _ := s.Get(ctx, ".matrixgen-cache"); found {
			t.Errorf("%s: the build's reuse cache was published", place)
		}
		marker, _, _ := s.Get(ctx, SiteMarker)
		if want := "assets/matrixgen.css\nindex.html\nruns/a/index.html\nruns/a/run.json\n"; !strings.HasSuffix(string(marker), "keeps any other.\n"+want) {
			t.Errorf("%s: the store's marker is %q, want its list %q", place, marker, want)
		}
		// A folder keeps no content types (a web server serving it says
		// them); a store does.
		if attrs, err := s.b.Attributes(ctx, "runs/a/index.html"); err != nil || place == "mem://" && attrs.ContentType != "text/html; charset=utf-8" {
			t.Errorf("%s: content type %v, %v", place, attrs, err)
		}
		if err := s.Put(ctx, "CNAME", []byte("bench.example.org")); err != nil {
			t.Fatal(err)
		}
		site["index.html"] = "<p>2</p>"
		delete(site, "runs/a/index.html")
		delete(site, "runs/a/run.json")
		p, err = s.Publish(ctx, writeSite(t, site))
		if err != nil || p.Removed != 2 || p.Unchanged != 1 {
			t.Errorf("%s: second publish %+v, %v", place, p, err)
		}
		if _, found, _ := s.Get(ctx, "runs/a/run.json"); found {
			t.Errorf("%s: the removed run's page is still there", place)
		}
		// A folder keeps no folder the removed run's pages leave empty.
		if dir, ok := strings.CutPrefix(place, "file://"); ok {
			if _, err := os.Lstat(filepath.Join(dir, "runs")); !os.IsNotExist(err) {
				t.Errorf("%s: the removed run's emptied folders are still there (%v)", place, err)
			}
			if _, err := os.Stat(filepath.Join(dir, "assets")); err != nil {
				t.Errorf("%s: a folder still holding pages went: %v", place, err)
			}
		}
		if data, _, _ := s.Get(ctx, "CNAME"); string(data) != "bench.example.org" {
			t.Errorf("%s: the object someone else put was touched", place)
		}
		if data, _, _ := s.Get(ctx, "index.html"); string(data) != "<p>2</p>" {
			t.Errorf("%s: index %q", place, data)
		}
	}
	foreign := memStore(t, "mem://")
	foreign.Put(context.Background(), "photos/cat.jpg", []byte("x"))
	if _, err := foreign.Publish(context.Background(), writeSite(t, map[string]string{"index.html": "x"})); err == nil || !strings.Contains(err.Error(), "did not publish") {
		t.Errorf("publishing over foreign objects: %v", err)
	}
}

// TestFetchRunsKeepsAMirror: called again, only what changed is fetched,
// and what the store no longer has is gone from the mirror.
func TestFetchRunsKeepsAMirror(t *testing.T) {
	ctx := context.Background()
	s := memStore(t, "mem://")
	s.Put(ctx, "a.json", []byte(`{"a":1}`))
	s.Put(ctx, "b.json", []byte(`{"b":1}`))
	dir := t.TempDir()
	if _, err := s.FetchRuns(ctx, dir); err != nil {
		t.Fatal(err)
	}
	// A local file with the store's bytes is left as it is (its mtime
	// kept), a changed one fetched, a removed one removed.
	old := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
	os.Chtimes(filepath.Join(dir, "a.json"), old, old)
	s.Put(ctx, "b.json", []byte(`{"b":2}`))
	s.b.Delete(ctx, "a.json")
	s.Put(ctx, "c.json", []byte(`{}`))
	os.Chtimes(filepath.Join(dir, "c.json"), old, old)
	fetched, err := s.FetchRuns(ctx, dir)
	if err != nil || len(fetched.Runs) != 2 {
		t.Fatalf("%v, %v", fetched.Runs, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "a.json")); !os.IsNotExist(err) {
		t.Error("a.json, gone from the store, is still in the mirror")
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "b.json")); string(b) != `{"b":2}` {
		t.Errorf("b.json is %s", b)
	}
	s.Put(ctx, "d.json", []byte(`{}`))
	info, _ := os.Stat(filepath.Join(dir, "c.json"))
	s.FetchRuns(ctx, dir)
	if after, _ := os.Stat(filepath.Join(dir, "c.json")); !after.ModTime().Equal(info.ModTime()) {
		t.Error("an unchanged run was fetched again")
	}
}

// TestPublishOrder: every page in a folder goes up before the top-level
// pages that link to it, so a reader of the index mid-publish finds every
// run it lists.
func TestPublishOrder(t *testing.T) {
	keys := []string{"index.html", "runs.csv", "assets/matrixgen.css", "assets/vendor/echarts/echarts.min.js",
		"runs/a/index.html", "runs/a/run.json", "compare/a-vs-b/index.html", "methodology.html"}
	order := publishOrder(keys)
	if len(order) != len(keys) {
		t.Fatalf("order %v has not every key of %v", order, keys)
	}
	at := map[string]int{}
	for i, k := range order {
		at[k] = i
	}
	for _, top := range []string{"index.html", "runs.csv", "methodology.html"} {
		for _, inFolder := range []string{"runs/a/index.html", "runs/a/run.json", "compare/a-vs-b/index.html", "assets/matrixgen.css"} {
			if at[top] < at[inFolder] {
				t.Errorf("%s goes up before %s: %v", top, inFolder, order)
			}
		}
	}
	if keys[0] != "index.html" {
		t.Error("publishOrder reordered its argument")
	}
}

// TestPublishToANewFolder: publishing to file://DIR creates DIR when it is
// not there yet, leaves plain files only (no *.attrs beside the pages),
// and a second publish of the same site writes nothing. Reading from a
// folder that is not there stays an error.
func TestPublishToANewFolder(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "not", "there", "yet")
	place := "file://" + filepath.ToSlash(dir) + "/"
	if s, err := Open(ctx, place); err == nil {
		s.Close()
		t.Fatalf("Open of a missing folder succeeded")
	}
	s, err := OpenForWriting(ctx, place)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	site := map[string]string{"index.html": "<p>1</p>", "runs/a/index.html": "a", "runs/a/run.json": "{}", "assets/matrixgen.css": "p{}"}
	built := writeSite(t, site)
	if p, err := s.Publish(ctx, built); err != nil || p.Written != 5 {
		t.Fatalf("first publish %+v, %v", p, err)
	}
	if p, err := s.Publish(ctx, built); err != nil || p.Written != 1 || p.Unchanged != 4 {
		t.Errorf("the same site again: %+v, %v; want only the marker written", p, err)
	}
	var files []string
	filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(dir, path)
			files = append(files, filepath.ToSlash(rel))
		}
		return err
	})
	slices.Sort(files)
	if want := []string{SiteMarker, "assets/matrixgen.css", "index.html", "runs/a/index.html", "runs/a/run.json"}; !slices.Equal(files, want) {
		t.Errorf("the folder holds %v, want %v", files, want)
	}
}

// TestURLSecretsNeverInMessages: a store's driver repeats the values of a
// place's query in its errors ("parsing \"…\": invalid syntax"); random
// secrets under every parameter that does, and in the user information
// and in a place that does not parse, appear in no message.
func TestURLSecretsNeverInMessages(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 3))
	const chars = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.~"
	places := []string{
		"s3://b/runs/?anonymous=%s&region=us-east-1", "s3://b/runs/?use_path_style=%s", "s3://b/runs/?dualstack=%s",
		"s3://b/runs/?fips=%s", "s3://b/runs/?ssetype=%s", "s3://b/runs/?profile=%s&region=x",
		"s3://b/runs/?rate_limiter_capacity=%s", "file:///nonexistent/?secret_key_path=/nonexistent/%s",
		"mem://?access_key=%s", "s3://b/runs/?region=x&%s", "s3://%s@b/runs/?anonymous=no", "s3://u:%s@b/runs/?anonymous=no",
		"s3://b/runs/?endpoint=%%zz%s", "s3://b/ru\x7fns/?access_key=%s",
	}
	for i := range 200 {
		secret := make([]byte, 10+rng.IntN(20))
		for j := range secret {
			secret[j] = chars[rng.IntN(len(chars))]
		}
		place := fmt.Sprintf(places[i%len(places)], secret)
		s, err := Open(context.Background(), place)
		if err == nil {
			s.Close()
			continue // a driver that took the value says nothing of it
		}
		if strings.Contains(err.Error(), string(secret)) {
			t.Errorf("%s:\n%v", place, err)
		}
	}
}

// TestFetchRunsSkipsWhatItDoesNotExpect: keys below the top (a dot file in
// a folder, one base name under two prefixes), names no run id can have
// (a newline, a right-to-left override) and dot files at the top once
// failed a build or were fetched over each other. Each is skipped, the
// unexpected ones with one line naming them quoted; the build goes on
// with the run files it expects.
func TestFetchRunsSkipsWhatItDoesNotExpect(t *testing.T) {
	ctx := context.Background()
	for _, place := range []string{"mem://", "file://" + t.TempDir()} {
		s := memStore(t, place)
		keys := map[string]string{
			"a.json": "{}", "a.md": "notes", "b.json": "{}",
			"sub/.hidden.json": "x", "x/c.json": "x", "y/c.json": "y", "sub/deep/d.md": "x",
			"._a.json": "\x00\x05", ".a.json.tmp": "x", ".git/config.json": "x", "readme.txt": "x",
			"bad name.json": "x", "e\nforged line.json": "x", "f\u202egnp.json": "x",
		}
		for key, body := range keys {
			if err := s.Put(ctx, key, []byte(body)); err != nil {
				t.Fatalf("%s: %s: %v", place, key, err)
			}
		}
		fetched, err := s.FetchRuns(ctx, t.TempDir())
		if err != nil {
			t.Fatalf("%s: %v", place, err)
		}
		if len(fetched.Runs) != 2 || filepath.Base(fetched.Runs[0]) != "a.json" || filepath.Base(fetched.Runs[1]) != "b.json" {
			t.Errorf("%s: runs %v", place, fetched.Runs)
		}
		said := strings.Join(fetched.Skipped, "\n")
		for _, key := range []string{"sub/.hidden.json", "x/c.json", "y/c.json", "sub/deep/d.md", "bad name.json", "e\nforged line.json", "f\u202egnp.json"} {
			if _, stored := keys[key]; stored && !strings.Contains(said, term.Name(key)) {
				t.Errorf("%s: no line for %q:\n%s", place, key, said)
			}
		}
		if len(fetched.Skipped) > 7 || strings.Contains(said, "._a") || strings.Contains(said, ".git") || strings.ContainsRune(said, '\u202e') {
			t.Errorf("%s: skipped lines:\n%s", place, said)
		}
	}
}

// TestFetchRunsBoundsEachObject: a 1.5 GB object in the bucket was read
// whole (3.1 GB of memory). Each object is read with its kind's bound, a
// larger one refused with the bound in the error; the local copy is left
// as it was. The object is sparse: it costs the disk nothing.
func TestFetchRunsBoundsEachObject(t *testing.T) {
	root := t.TempDir()
	huge := filepath.Join(root, "huge.json")
	f, err := os.Create(huge)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(1536 << 20); err != nil {
		t.Skip("no sparse files here:", err)
	}
	f.Close()
	os.WriteFile(filepath.Join(root, "notes.md"), []byte(strings.Repeat("n", 2<<20)), 0o644)
	s := memStore(t, "file://"+root)
	dir := t.TempDir()
	_, err = s.FetchRuns(context.Background(), dir)
	if err == nil || !strings.Contains(err.Error(), strconv.Itoa(runfile.MaxBytes)) {
		t.Fatalf("a 1.5 GB run file: %v", err)
	}
	os.Remove(huge)
	_, err = s.FetchRuns(context.Background(), dir)
	if err == nil || !strings.Contains(err.Error(), "notes.md") || !strings.Contains(err.Error(), "1048576") {
		t.Fatalf("2 MB notes: %v", err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 0 {
		t.Errorf("the mirror holds %d files after refusals", len(entries))
	}
}

// TestPublishSendsOnlyRegularFiles: a link in the built folder to a file
// or a folder outside it is neither followed nor sent.
func TestPublishSendsOnlyRegularFiles(t *testing.T) {
	ctx := context.Background()
	dir := writeSite(t, map[string]string{"index.html": "<p>1</p>"})
	outside := t.TempDir()
	os.WriteFile(filepath.Join(outside, "shadow"), []byte("root:secret"), 0o644)
	os.Symlink(filepath.Join(outside, "shadow"), filepath.Join(dir, "shadow"))
	os.Symlink(outside, filepath.Join(dir, "etc"))
	s := memStore(t, "mem://")
	if _, err := s.Publish(ctx, dir); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"shadow", "etc/shadow", "etc"} {
		if data, found, _ := s.Get(ctx, key); found {
			t.Errorf("published %s: %q", key, data)
		}
	}
	if _, found, _ := s.Get(ctx, "index.html"); !found {
		t.Error("index.html was not published")
	}
}

// TestURLSecretsHiddenInEveryEncoding: a driver may repeat a place's query
// as it was given, decoded, or encoded again (url.Values.Encode, as the
// query is rebuilt for file:// folders): random secrets with characters
// each form writes differently are hidden in all of them.
func TestURLSecretsHiddenInEveryEncoding(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 9))
	const chars = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.~/+:@!$"
	for range 500 {
		secret := make([]byte, 10+rng.IntN(20))
		for j := range secret {
			secret[j] = chars[rng.IntN(len(chars))]
		}
		place := "s3://b/runs/?region=x&secret_key_path=/k/" + string(secret)
		u, err := url.Parse(place)
		if err != nil {
			continue
		}
		s := &Store{name: Redact(place), secrets: redact.URLSecrets(u)}
		q := u.Query()
		q.Set("metadata", "skip")
		for _, said := range []string{place, u.RawQuery, q.Encode(), q.Get("secret_key_path"), url.PathEscape(q.Get("secret_key_path"))} {
			msg := s.fail("open bucket", errors.New("cannot open "+said+": no such file")).Error()
			for _, form := range []string{string(secret), url.QueryEscape(string(secret))} {
				if strings.Contains(msg, form) && len(form) >= 4 {
					t.Fatalf("%q shown in %q", form, msg)
				}
			}
		}
	}
}

// TestFetchRunsFromS3: over S3 (an in-process server, its listing in
// pages of three keys), every run is fetched once, at most fetchesInFlight
// at a time and more than one at a time; fetching again reads nothing
// that did not change: a changed object is read again, a removed one
// removed, and a file changed in the mirror (same size) fetched again.
func TestFetchRunsFromS3(t *testing.T) {
	srv := s3fake.New()
	defer srv.Close()
	srv.ReadDelay = 20 * time.Millisecond // reads made at once overlap
	const n = 40
	for i := range n {
		srv.Put(fmt.Sprintf("runs/run-%02d.json", i), []byte(fmt.Sprintf(`{"run":%02d}`, i)))
	}
	srv.Put("runs/run-00.md", []byte("notes"))
	ctx := context.Background()
	s, err := Open(ctx, srv.URL("runs/"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	dir := t.TempDir()
	fetch := func(what string) Fetched {
		t.Helper()
		f, err := s.FetchRuns(ctx, dir)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		return f
	}
	if f := fetch("first"); len(f.Runs) != n {
		t.Fatalf("%d runs fetched, want %d", len(f.Runs), n)
	}
	reads, most := srv.Reads()
	if len(reads) != n+1 {
		t.Errorf("%d objects read, want %d", len(reads), n+1)
	}
	for key, times := range reads {
		if times != 1 {
			t.Errorf("%s read %d times", key, times)
		}
	}
	if most > fetchesInFlight || most < 2 {
		t.Errorf("%d reads in flight at most, want 2 to %d", most, fetchesInFlight)
	}
	fetch("again")
	if reads, _ := srv.Reads(); len(reads) != 0 {
		t.Errorf("fetching an unchanged bucket again read %v", reads)
	}
	srv.Put("runs/run-01.json", []byte(`{"run":"01 changed"}`))
	srv.Delete("runs/run-02.json")
	os.WriteFile(filepath.Join(dir, "run-03.json"), []byte(`{"run":99}`), 0o644)
	if f := fetch("after changes"); len(f.Runs) != n-1 {
		t.Errorf("%d runs after one was removed, want %d", len(f.Runs), n-1)
	}
	if reads, _ := srv.Reads(); len(reads) != 2 || reads["runs/run-01.json"] != 1 || reads["runs/run-03.json"] != 1 {
		t.Errorf("after a change in the bucket and one in the mirror, read %v, want run-01 and run-03 once", reads)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "run-03.json")); string(b) != `{"run":03}` {
		t.Errorf("the mirror's changed file holds %s, not the object's bytes", b)
	}
	if _, err := os.Stat(filepath.Join(dir, "run-02.json")); err == nil {
		t.Error("a run removed from the bucket is still in the mirror")
	}
}

// TestPublishCutShort: a first publish that stops partway (here the store
// refuses a page: a folder stands where it goes) left objects and no
// marker, and every later publish refused the prefix as not matrixgen's;
// the marker now lists each object before it is written, so the next
// publish goes through and removes what its site lacks.
func TestPublishCutShort(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := memStore(t, "file://"+dir)
	site := map[string]string{"index.html": "<p>1</p>", "runs/a/index.html": "a", "runs/a/run.json": "{}", "runs/b/index.html": "b"}
	blocker := filepath.Join(dir, "runs", "b", "index.html", "x")
	if err := os.MkdirAll(blocker, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Publish(ctx, writeSite(t, site)); err == nil {
		t.Fatal("published a page over a folder")
	}
	if _, found, _ := s.Get(ctx, "runs/a/run.json"); !found {
		t.Fatal("the first publish wrote nothing before it stopped: the test tests nothing")
	}
	os.RemoveAll(filepath.Dir(blocker))
	delete(site, "runs/a/index.html")
	delete(site, "runs/a/run.json")
	if p, err := s.Publish(ctx, writeSite(t, site)); err != nil || p.Removed != 2 {
		t.Fatalf("publishing after a publish cut short: %+v, %v", p, err)
	}
	if _, found, _ := s.Get(ctx, "runs/a/run.json"); found {
		t.Error("the object of the publish cut short is still there")
	}
}

// TestPublishRefusesTooLargeBeforeWriting: a site with a file larger
// than a publish may send is refused before any object is written.
func TestPublishRefusesTooLargeBeforeWriting(t *testing.T) {
	ctx := context.Background()
	s := memStore(t, "mem://")
	built := writeSite(t, map[string]string{"index.html": "<p>1</p>", "runs/a/index.html": "a"})
	if err := os.Truncate(filepath.Join(built, "runs", "a", "index.html"), maxPublished+1); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Publish(ctx, built); err == nil || !strings.Contains(err.Error(), "nothing was published") {
		t.Fatalf("publishing a site with a page too large: %v", err)
	}
	if obj, err := s.list().next(ctx); err == nil {
		t.Errorf("the store holds %s after a refused publish", obj.Key)
	}
}

// TestNoCredentialsSaysWhatToSet: a store reached without credentials gave
// the SDK's chain of errors alone (and, on stderr, its own log line); the
// message now says which variables to set first.
func TestNoCredentialsSaysWhatToSet(t *testing.T) {
	for _, name := range []string{"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE"} {
		t.Setenv(name, "")
	}
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	t.Setenv("AWS_CONFIG_FILE", filepath.Join(t.TempDir(), "none"))
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", filepath.Join(t.TempDir(), "none"))
	s := memStore(t, "s3://lab/runs/?region=eu-west-1&endpoint=http://127.0.0.1:1")
	_, err := s.FetchRuns(context.Background(), t.TempDir())
	if err == nil || !strings.Contains(err.Error(), "no credentials for the store: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or AWS_PROFILE") {
		t.Errorf("got %v", err)
	}
}
