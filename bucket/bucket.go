// Package bucket keeps run files and published sites in S3 or an
// S3-compatible store (MinIO, Ceph, SeaweedFS, GCS by its S3 endpoint)
// through gocloud.dev/blob, so a lab's GPU boxes can write their runs into
// one bucket and one site be built and published from it.
//
// A place is a local folder or a URL: s3://bucket/prefix/ (endpoint,
// region and path style as gocloud's URL parameters, e.g.
// ?endpoint=http://127.0.0.1:8333&region=us-east-1&use_path_style=true),
// file:///path/ or mem:// (tests). Credentials come from the store's own
// environment and files (AWS_ACCESS_KEY_ID, ~/.aws/credentials, …), and no
// message here prints a URL's query or user.
package bucket

import (
	"bytes"
	"cmp"
	"context"
	"crypto/md5"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"mime"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go"
	"gocloud.dev/blob"
	_ "gocloud.dev/blob/fileblob" // file:// places
	_ "gocloud.dev/blob/memblob"  // mem:// places, for tests
	"gocloud.dev/blob/s3blob"     // s3:// places, opened by openS3
	"gocloud.dev/gcerrors"

	"github.com/matrixgen/matrixgen"
	"github.com/matrixgen/matrixgen/internal/redact"
	"github.com/matrixgen/matrixgen/internal/regular"
	"github.com/matrixgen/matrixgen/internal/term"
	"github.com/matrixgen/matrixgen/runfile"
)

// IsURL reports whether place names a store rather than a local folder.
func IsURL(place string) bool {
	scheme, _, ok := strings.Cut(place, "://")
	return ok && scheme != "" && !strings.ContainsAny(scheme, `/\`)
}

// CheckScheme refuses a place whose scheme matrixgen cannot open, in one
// line that says how to reach it: only s3://, file:// and mem:// drivers
// are linked in, since a GCS or Azure driver would bring its cloud's SDK
// for what one S3 client reaches (GCS by its S3 endpoint, Azure by a
// gateway).
func CheckScheme(place string) error {
	scheme, _, _ := strings.Cut(place, "://")
	var how string
	switch strings.ToLower(scheme) {
	case "s3":
		if u, err := url.Parse(place); err != nil || u.Host == "" {
			return fmt.Errorf("%s: name the bucket: s3://<bucket>/<prefix>/", Redact(place))
		}
		return nil
	case "file":
		// file://site/ is the folder /site, not ./site: fileblob ignores a host.
		if u, err := url.Parse(place); err == nil && u.Host != "" && !strings.EqualFold(u.Host, "localhost") {
			return fmt.Errorf("%s: a file:// place's folder follows a third slash (file:///var/www/site/); for a folder here give its path alone (%s)",
				Redact(place), term.Name(u.Host+u.Path))
		}
		return nil
	case "mem":
		return nil
	case "gs":
		// The variables' names end the hint: a name followed by a colon and
		// a word reads as a secret's value, which messages hide.
		how = "; for Google Cloud Storage give its S3-compatible endpoint, " +
			"s3://<bucket>/<prefix>/?endpoint=https://storage.googleapis.com&region=auto, with an HMAC key in AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY"
	case "azblob":
		how = "; Azure Blob Storage has no S3 endpoint of its own: serve it through an S3-compatible gateway (S3Proxy, say) " +
			"and give the gateway's address: s3://<bucket>/<prefix>/?endpoint=https://gateway:8080&region=us-east-1&use_path_style=true"
	default:
		how = "; any S3-compatible store by its endpoint: s3://<bucket>/<prefix>/?endpoint=https://host:9000&region=us-east-1&use_path_style=true"
	}
	return fmt.Errorf("%s: only s3:// (AWS S3 and S3-compatible stores) and file:// places are supported%s", Redact(place), how)
}

// Store is a prefix of a bucket: the runs folder, or the site.
type Store struct {
	b    *blob.Bucket
	name string // the place without its query, for messages
	// folder is a file:// place's folder, "" for a store: it keeps no
	// MD5 of its files (holds), and a folder a publish empties stays.
	folder string
	// secrets are the URL's query values, user and password, hidden in
	// every message.
	secrets []string
	// prefix is the store's folder in its bucket ("runs/").
	prefix string
	limits Limits
}

// Limits bound every read of a store, so a store that stalls or lists
// without end fails a build with a message instead of holding it forever.
type Limits struct {
	// Idle is how long a read may go without a byte or a listing's page.
	Idle time.Duration
	// Object bounds one object's read from request to last byte.
	Object time.Duration
	// Fetch bounds one FetchRuns whole: a store that answers each read in
	// time, but takes hours in all, fails too.
	Fetch time.Duration
	// MaxKeys and MaxPages bound one listing.
	MaxKeys, MaxPages int
	// MaxReported bounds the failed objects FetchRuns names, and the
	// skipped keys it keeps lines for; the rest are counted.
	MaxReported int
}

// DefaultLimits are a store's limits: a byte every 30 s, 10 minutes an
// object (8 MB at 14 KB/s), 30 minutes a fetch (100,000 runs of 100 KB at
// 6 MB/s), a million keys (100,000 runs and notes five times over) in at
// most 100,000 pages.
var DefaultLimits = Limits{Idle: 30 * time.Second, Object: 10 * time.Minute, Fetch: 30 * time.Minute, MaxKeys: 1_000_000, MaxPages: 100_000, MaxReported: 20}

// Open opens place, a URL such as s3://bucket/runs/?region=eu-west-1. A
// file:// folder gets no attribute files (*.attrs), which a web server
// serving it would publish.
func Open(ctx context.Context, place string) (*Store, error) {
	return open(ctx, place, false)
}

// OpenForWriting is Open creating a missing file:// folder, to write to.
func OpenForWriting(ctx context.Context, place string) (*Store, error) {
	return open(ctx, place, true)
}

// open opens place; an s3:// bucket's client is made with the options
// given (a test's in-memory connections), its replies bounded (openS3).
func open(ctx context.Context, place string, create bool, given ...func(*s3.Options)) (*Store, error) {
	if err := CheckScheme(place); err != nil {
		return nil, err
	}
	u, err := url.Parse(place)
	if err != nil {
		// url.Parse's error repeats the whole URL, query and all.
		return nil, fmt.Errorf("%s: not a URL", Redact(place))
	}
	prefix := strings.TrimPrefix(u.Path, "/")
	if prefix != "" && !strings.HasSuffix(prefix, "/") {
		prefix += "/"
	}
	bucketURL := *u
	bucketURL.Path = ""
	local := u.Scheme == "file"
	if local {
		// fileblob's bucket is the folder itself; its sidecar files would
		// sit beside every page, so none are written.
		bucketURL.Path, prefix = u.Path, ""
		q := bucketURL.Query()
		if !q.Has("metadata") {
			q.Set("metadata", "skip")
		}
		if create {
			q.Set("create_dir", "true")
		}
		bucketURL.RawQuery = q.Encode()
	}
	s := &Store{name: Redact(place), secrets: redact.URLSecrets(u)}
	var b *blob.Bucket
	if u.Scheme == s3blob.Scheme {
		b, err = openS3(ctx, &bucketURL, given...)
	} else {
		b, err = blob.OpenBucket(ctx, bucketURL.String())
	}
	if err != nil {
		return nil, s.fail("", err)
	}
	if prefix != "" {
		b = blob.PrefixedBucket(b, prefix)
	}
	s.b, s.prefix, s.limits = b, prefix, DefaultLimits
	if local {
		s.folder = u.Path
	}
	return s, nil
}

// fail is the one way a store's error becomes a message: the place as
// shown, what was done, and what the store said; errors.Is still sees it.
func (s *Store) fail(what string, err error) error {
	if what != "" {
		what = ": " + what
	}
	return &storeError{msg: s.name + what + ": " + s.said(err), err: err}
}

// said is a store's error in our words: "the store answered <status>
// <code>: <message> (request <id>)" for S3's, each word of the store's with
// the URL's secrets hidden, then through storeWords; a reply cut at its
// bound as ours alone; any other error's text alike.
func (s *Store) said(err error) string {
	words := func(t string) string { return storeWords(redact.Values(t, s.secrets...)) }
	if long, ok := errors.AsType[*replyTooLong](err); ok {
		return long.Error()
	}
	api, ok := errors.AsType[smithy.APIError](err)
	switch {
	case !ok && strings.Contains(err.Error(), "get identity: "):
		// The SDK's chain says which sources of credentials it tried; a
		// person needs to know which to set.
		return "no credentials for the store: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or AWS_PROFILE (" + words(err.Error()) + ")"
	case !ok:
		return words(err.Error())
	}
	var b strings.Builder
	b.WriteString("the store answered")
	re, withStatus := errors.AsType[*awshttp.ResponseError](err)
	if withStatus {
		fmt.Fprintf(&b, " %d", re.HTTPStatusCode())
	}
	b.WriteString(" " + words(api.ErrorCode()))
	if m := api.ErrorMessage(); m != "" && m != api.ErrorCode() {
		b.WriteString(": " + words(m))
	}
	if withStatus && re.ServiceRequestID() != "" {
		b.WriteString(" (request " + words(re.ServiceRequestID()) + ")")
	}
	return b.String()
}

type storeError struct {
	msg string
	err error
}

func (e *storeError) Error() string { return e.msg }

// Unwrap gives the store's error for errors.Is and gcerrors.Code, not for
// printing: its message may hold the URL's secrets.
func (e *storeError) Unwrap() error { return e.err }

// Close closes the store.
func (s *Store) Close() error { return s.b.Close() }

// String is the place, without its query or credentials.
func (s *Store) String() string { return s.name }

// Redact drops what a place's URL may carry beyond where it is: user,
// password and query (endpoints are harmless, but a query may hold keys).
func Redact(place string) string {
	u, err := url.Parse(place)
	if err != nil {
		return "(a URL that does not parse)"
	}
	u.User, u.RawQuery, u.Fragment = nil, "", ""
	return u.String()
}

// Where is the name of the folder this machine's cache keeps for place: a
// hash of the place as shown (Redact) and of its endpoint without user or
// query, so two endpoints' s3://lab/runs/ never share one.
func Where(place string) string {
	id := Redact(place)
	if u, err := url.Parse(place); err == nil {
		if endpoint := u.Query().Get("endpoint"); endpoint != "" {
			id += "\x00endpoint=" + Redact(endpoint)
		}
	}
	sum := sha256.Sum256([]byte(id))
	return hex.EncodeToString(sum[:8])
}

// fetchesInFlight bounds the objects FetchRuns reads at once: enough to
// hide a store's latency, few enough to keep memory and request rate small.
const fetchesInFlight = 8

// unexpected says why a .json or .md key is not one a build reads, or "";
// listed holds the keys kept so far by their lower case, since run ids are
// ASCII and their lower case is how a file system that ignores case
// (macOS's, Windows') sees them.
func unexpected(key string, listed map[string]string) string {
	first, seen := listed[strings.ToLower(key)]
	switch {
	case strings.Contains(key, "/"):
		return "in a folder below the runs; a build reads the top only"
	case !matrixgen.ValidID(strings.TrimSuffix(key, path.Ext(key))):
		return "not a run id (" + matrixgen.IDRule + ")"
	case first == key:
		return "listed twice"
	case seen:
		return fmt.Sprintf("its name differs from %s only in case, and a file system that ignores case (macOS, Windows) holds the two as one file; rename one", keyName(first))
	}
	return ""
}

// fetchedFile is the mirror's record of what FetchRuns fetched, so the
// next call tells an unchanged object by its listing alone: a line a key,
// with its size, the MD5 of the bytes fetched, its time as listed, the
// file's time as fetch left it (a file changed since is looked at again)
// and the ETag it was read under, which tells any change, a multipart
// one too. A record from before the ETag has five fields.
const fetchedFile = ".fetched"

type fetchedState struct {
	size      int64
	md5       string // hex of the bytes fetched
	mod, file time.Time
	etag      string // as listed (cleanETag); "" when the store lists none
}

// readFetched reads the mirror's record, leaving out lines it cannot read.
func readFetched(dir string) map[string]fetchedState {
	out := map[string]fetchedState{}
	data, err := readEntry(filepath.Join(dir, fetchedFile), maxFetchedBytes, "a mirror's record")
	if err != nil {
		return out
	}
	for line := range strings.Lines(string(data)) {
		fields := strings.Split(strings.TrimSuffix(line, "\n"), "\t")
		if len(fields) != 5 && len(fields) != 6 {
			continue
		}
		size, err1 := strconv.ParseInt(fields[1], 10, 64)
		mod, err2 := strconv.ParseInt(fields[3], 10, 64)
		file, err3 := strconv.ParseInt(fields[4], 10, 64)
		if err1 != nil || err2 != nil || err3 != nil {
			continue
		}
		st := fetchedState{size: size, md5: fields[2], mod: time.Unix(0, mod), file: time.Unix(0, file)}
		if len(fields) == 6 {
			st.etag = cleanETag(fields[5])
		}
		out[fields[0]] = st
	}
	return out
}

// maxFetchedBytes bounds the mirror's record: ~100 bytes an object.
const maxFetchedBytes = 256 << 20

// writeFetched writes the mirror's record of the objects listed (as kept by
// unexpected).
func writeFetched(dir string, state map[string]fetchedState, listed map[string]string) error {
	var b strings.Builder
	for _, key := range listed {
		if st, ok := state[key]; ok {
			fmt.Fprintf(&b, "%s\t%d\t%s\t%d\t%d\t%s\n", key, st.size, st.md5, st.mod.UnixNano(), st.file.UnixNano(), st.etag)
		}
	}
	tmp, err := os.CreateTemp(dir, ".fetched-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // after a rename, nothing
	_, err = tmp.WriteString(b.String())
	if err = cmp.Or(err, tmp.Close()); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), filepath.Join(dir, fetchedFile))
}

// unchanged reports, by the mirror's record alone, whether local holds
// obj's bytes: the same ETag (else MD5, else time), the file as left.
func unchanged(was fetchedState, local string, obj *blob.ListObject, etag string) bool {
	if was.file.IsZero() || obj.Size != was.size { // no record: a zero time
		return false
	}
	info, err := os.Lstat(local)
	if err != nil || !info.Mode().IsRegular() || info.Size() != was.size || !info.ModTime().Equal(was.file) {
		return false
	}
	switch {
	case etag != "" && was.etag != "":
		return sameETag(etag, was.etag)
	case len(obj.MD5) > 0:
		return hex.EncodeToString(obj.MD5) == was.md5
	}
	return !obj.ModTime.IsZero() && obj.ModTime.Equal(was.mod)
}

// sameFile reports whether local holds the object's bytes, by its listed MD5.
func sameFile(local string, obj *blob.ListObject) bool {
	if len(obj.MD5) == 0 {
		return false
	}
	have, err := readEntry(local, obj.Size, "a fetched object")
	sum := md5.Sum(have)
	return err == nil && int64(len(have)) == obj.Size && bytes.Equal(sum[:], obj.MD5)
}

// readEntry reads the regular file that is name itself (regular.OpenEntry)
// when it holds at most limit bytes.
func readEntry(name string, limit int64, what string) ([]byte, error) {
	f, info, err := regular.OpenEntry(name)
	if err != nil {
		return nil, err
	}
	return regular.Read(f, info, limit, term.Name(name), what)
}

// boundOf is the most a key of its kind may hold, as in a local folder.
func boundOf(key string) (limit int64, what string) {
	if path.Ext(key) == ".md" {
		return runfile.MaxNotesBytes, "a note"
	}
	return runfile.MaxBytes, "a run file"
}

// maxPublished bounds each file Publish reads whole: a site's pages are a
// few megabytes at most, and a file kept in it (a CNAME) small too.
const maxPublished = 64 << 20

// maxGet bounds what Get reads: a run file to resume, a site's marker.
const maxGet = runfile.MaxBytes

// Get reads one object of at most maxGet bytes; found is false for none.
func (s *Store) Get(ctx context.Context, key string) (data []byte, found bool, err error) {
	if err := s.checkFolder(); err != nil {
		return nil, false, err
	}
	var buf bytes.Buffer
	_, err = s.readObject(ctx, key, nil, "", &buf)
	switch {
	case errors.Is(err, errNotFound):
		return nil, false, nil
	case err != nil:
		return nil, false, err
	}
	return buf.Bytes(), true, nil
}

// ErrExists is Create's answer when another writer took the key first.
var ErrExists = errors.New("already exists")

// Create writes a new object and refuses one that exists, as one
// conditional request, so two writers cannot both make the same run.
func (s *Store) Create(ctx context.Context, key string, data []byte) error {
	if err := s.checkFolder(); err != nil {
		return err
	}
	return s.put(ctx, key, data, true)
}

// Put writes an object, replacing what is there.
func (s *Store) Put(ctx context.Context, key string, data []byte) error {
	if err := s.checkFolder(); err != nil {
		return err
	}
	return s.put(ctx, key, data, false)
}

// checkFolder refuses a file:// place that holds anything but folders and
// regular files. Its driver reads, lists and writes by path: a link would
// be followed out of the place (a run file read from elsewhere, a page
// written elsewhere) and a pipe, or a driver's *.attrs file made one,
// would hold a read for ever, past Ctrl-C. Each operation on the place
// checks it first (a publish once, not for each file).
func (s *Store) checkFolder() error {
	if s.folder == "" {
		return nil
	}
	top := s.folder
	if resolved, err := filepath.EvalSymlinks(top); err == nil {
		top = resolved // the place itself may be a link a person chose
	}
	return filepath.WalkDir(top, func(name string, d fs.DirEntry, err error) error {
		switch {
		case errors.Is(err, fs.ErrNotExist) && name == top:
			return nil // not made yet
		case err != nil:
			return err
		case d.IsDir() || d.Type().IsRegular():
			return nil
		}
		rel, _ := filepath.Rel(top, name)
		return fmt.Errorf("%s: %s is a link, a pipe or a device: a file:// place may hold only folders and regular files, since links there would be followed out of it",
			s.name, term.Name(filepath.ToSlash(rel)))
	})
}

func (s *Store) put(ctx context.Context, key string, data []byte, create bool) error {
	opts := &blob.WriterOptions{ContentType: contentType(key), IfNotExist: create}
	err := s.write(ctx, func(ctx context.Context) error { return s.b.WriteAll(ctx, key, data, opts) })
	switch {
	case err == nil:
		return nil
	case create && gcerrors.Code(err) == gcerrors.FailedPrecondition:
		return fmt.Errorf("%s: %s: %w", s.name, term.Name(key), ErrExists)
	}
	return s.fail(term.Name(key), err)
}

// write runs one write (or removal) within the store's Object time, so a
// store that stalls fails a publish; a write's progress is not seen, so
// no idle time.
func (s *Store) write(ctx context.Context, do func(context.Context) error) error {
	d := s.limits.Object
	ctx, cancel := context.WithTimeoutCause(ctx, d, fmt.Errorf("not written within %v", d))
	defer cancel()
	err := do(ctx)
	if err != nil && ctx.Err() != nil {
		err = context.Cause(ctx)
	}
	return err
}

// contentTypes are a site's own files' types, not this machine's MIME table's.
var contentTypes = map[string]string{
	".html": "text/html; charset=utf-8", ".css": "text/css; charset=utf-8", ".js": "text/javascript; charset=utf-8",
	".json": "application/json", ".csv": "text/csv; charset=utf-8", ".svg": "image/svg+xml", ".xml": "application/xml",
	".md": "text/plain; charset=utf-8", ".txt": "text/plain; charset=utf-8", "": "text/plain; charset=utf-8",
}

// contentType is what a browser needs to be told of a site's file.
func contentType(key string) string {
	if t, ok := contentTypes[path.Ext(key)]; ok {
		return t
	}
	return cmp.Or(mime.TypeByExtension(path.Ext(key)), "application/octet-stream")
}

// Published is what a Publish did.
type Published struct {
	Written, Unchanged, Removed int
}

// SiteMarker is the object at a published site's root listing the objects
// a publish wrote: only those are ever removed, never anyone else's.
const SiteMarker = ".matrixgen-site"

// buildsOwn begins the names of the files a build keeps at a site's root
// for itself (its marker, its signed reuse cache): they stay on the
// machine that built the site. The store's marker is written by Publish.
const buildsOwn = ".matrixgen-"

const publishedHeader = "This prefix holds a site published by matrixgen; the next publish replaces the objects listed below and keeps any other.\n"

// Publish makes the store hold the site built in dir: each file the store
// lacks written (content type set), and only then what an earlier publish
// wrote that the site no longer has removed, so no link leads nowhere. A
// prefix holding objects but no marker was not matrixgen's: refused.
func (s *Store) Publish(ctx context.Context, dir string) (Published, error) {
	var p Published
	old, err := s.previousSite(ctx)
	if err != nil {
		return p, err
	}
	// Only regular files inside the site are published: a link (to /etc,
	// say) is neither followed nor sent.
	root, err := os.OpenRoot(dir)
	if err != nil {
		return p, err
	}
	defer root.Close()
	want := map[string]bool{}
	var keys []string
	err = fs.WalkDir(root.FS(), ".", func(key string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !d.Type().IsRegular() || strings.HasPrefix(key, buildsOwn) {
			return err
		}
		// Every file is sized before any is written: a site with one too
		// large is refused whole, not left half published.
		info, err := d.Info()
		if err == nil && info.Size() > maxPublished {
			err = fmt.Errorf("%s: %d bytes is larger than the %d bytes a file to publish may be; nothing was published",
				term.Name(key), info.Size(), maxPublished)
		}
		want[key] = true
		keys = append(keys, key)
		return err
	})
	if err != nil {
		return p, err
	}
	// The marker lists each object before it is written, with those of the
	// last publish: a publish cut short (Ctrl-C, a store's refusal) leaves
	// no object the next publish does not know it wrote, and that one
	// removes what its site lacks.
	if slices.ContainsFunc(keys, func(k string) bool { return !old[k] }) {
		if err := s.putMarker(ctx, slices.Concat(slices.Collect(maps.Keys(old)), keys)); err != nil {
			return p, err
		}
	}
	for _, key := range publishOrder(keys) {
		// Opened once and checked as opened: a file swapped since the
		// listing for a link, a pipe or a larger file is refused.
		data, err := regular.ReadFile(root, key, maxPublished, "a file to publish")
		if err != nil {
			return p, err
		}
		if s.holds(ctx, key, data) {
			p.Unchanged++
			continue
		}
		if err := s.put(ctx, key, data, false); err != nil { // the place was checked (previousSite)
			return p, err
		}
		p.Written++
	}
	// The marker lists the site alone once every page is there.
	if err := s.putMarker(ctx, keys); err != nil {
		return p, err
	}
	p.Written++
	for _, key := range slices.Sorted(maps.Keys(old)) {
		if want[key] || key == SiteMarker {
			continue
		}
		err := s.write(ctx, func(ctx context.Context) error { return s.b.Delete(ctx, key) })
		if err != nil && gcerrors.Code(err) != gcerrors.NotFound {
			return p, s.fail("removing "+term.Name(key), err)
		}
		p.Removed++
		s.removeEmptied(key)
	}
	return p, nil
}

// removeEmptied removes the folders of a file:// place that removing key
// left empty (a run's folder once its pages are gone), up to the place's
// own; a store has no folders, and a folder not empty stays.
func (s *Store) removeEmptied(key string) {
	if s.folder == "" {
		return
	}
	root, err := os.OpenRoot(s.folder)
	if err != nil {
		return
	}
	defer root.Close()
	for dir := path.Dir(key); dir != "."; dir = path.Dir(dir) {
		if info, err := root.Lstat(dir); err != nil || !info.IsDir() || root.Remove(dir) != nil {
			return // gone, a link or not empty: not a folder this publish emptied
		}
	}
}

// putMarker writes the store's marker listing keys.
func (s *Store) putMarker(ctx context.Context, keys []string) error {
	keys = slices.Compact(slices.Sorted(slices.Values(keys)))
	keys = slices.DeleteFunc(keys, func(k string) bool { return k == SiteMarker })
	return s.put(ctx, SiteMarker, []byte(publishedHeader+strings.Join(keys, "\n")+"\n"), false) // Publish checked the place
}

// publishOrder puts deeper pages (runs, assets) before those that link to
// them (the index), so the index never lists a run not there yet; each
// depth in the walk's order.
func publishOrder(keys []string) []string {
	keys = slices.Clone(keys)
	slices.SortStableFunc(keys, func(a, b string) int {
		return cmp.Compare(strings.Count(b, "/"), strings.Count(a, "/"))
	})
	return keys
}

// previousSite is the set of objects the last publish wrote, from its
// marker; empty for an empty prefix; an error for a prefix that holds
// objects matrixgen did not publish.
func (s *Store) previousSite(ctx context.Context) (map[string]bool, error) {
	data, found, err := s.Get(ctx, SiteMarker)
	if err != nil {
		return nil, err
	}
	old := map[string]bool{}
	if found {
		lines := strings.Split(string(data), "\n")
		for _, line := range lines[1:] { // after the marker's header line
			if line != "" {
				old[line] = true
			}
		}
		return old, nil
	}
	if obj, err := s.list().next(ctx); err == nil {
		return nil, fmt.Errorf("%s holds objects (%s, …) that matrixgen did not publish: publish to an empty prefix, or to one matrixgen published before", s.name, keyName(obj.Key))
	} else if !errors.Is(err, io.EOF) {
		return nil, err
	}
	return old, nil
}

// holds reports whether the object key holds data already, by the store's
// MD5 or a file:// folder's bytes; else no: better a needless write than a
// stale page.
func (s *Store) holds(ctx context.Context, key string, data []byte) bool {
	g := s.guard(ctx, true)
	defer g.stop()
	attrs, err := s.b.Attributes(g.ctx, key)
	switch {
	case err != nil || attrs.Size != int64(len(data)):
		return false
	case len(attrs.MD5) > 0:
		sum := md5.Sum(data)
		return bytes.Equal(attrs.MD5, sum[:])
	case s.folder != "":
		have, err := s.b.ReadAll(g.ctx, key)
		return err == nil && bytes.Equal(have, data)
	}
	return false
}
