// Package bucket keeps run files and published sites in an object store —
// S3 or any S3-compatible store (MinIO, Ceph, SeaweedFS), and GCS or Azure
// with them — through gocloud.dev/blob, so a lab's GPU boxes can write
// their runs into one bucket and one site be built and published from it.
//
// A place is a local folder or a URL: s3://bucket/prefix/ (the store's
// endpoint, region and path style as gocloud's URL parameters, e.g.
// ?endpoint=http://127.0.0.1:8333&region=us-east-1&use_path_style=true),
// file:///path/ or mem:// (tests). Credentials come from the store's own
// environment and files (AWS_ACCESS_KEY_ID, ~/.aws/credentials, …), never
// from matrixgen's, and no message here prints a URL's query or user.
package bucket

import (
	"bytes"
	"cmp"
	"context"
	"crypto/md5"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"gocloud.dev/blob"
	_ "gocloud.dev/blob/fileblob" // file:// places
	_ "gocloud.dev/blob/memblob"  // mem:// places, for tests
	_ "gocloud.dev/blob/s3blob"   // s3:// places
	"gocloud.dev/gcerrors"
)

// IsURL reports whether place names a store rather than a local folder.
func IsURL(place string) bool {
	scheme, _, ok := strings.Cut(place, "://")
	return ok && scheme != "" && !strings.ContainsAny(scheme, `/\`)
}

// Store is a prefix of a bucket: the runs folder, or the site.
type Store struct {
	b    *blob.Bucket
	name string // the place without its query, for messages
	// local is a file:// folder, which keeps no MD5 of its files: reading
	// one to compare costs less than writing it again.
	local bool
}

// Open opens place, a URL such as s3://bucket/runs/?region=eu-west-1. A
// file:// folder gets plain files only: no attribute files (*.attrs) beside
// them, which a web server serving the folder would publish.
func Open(ctx context.Context, place string) (*Store, error) {
	return open(ctx, place, false)
}

// OpenForWriting opens place as Open does, creating a file:// folder that
// is not there yet: where a site is published or runs are copied to. Open
// leaves a missing folder an error, as a place to read from.
func OpenForWriting(ctx context.Context, place string) (*Store, error) {
	return open(ctx, place, true)
}

func open(ctx context.Context, place string, create bool) (*Store, error) {
	u, err := url.Parse(place)
	if err != nil {
		return nil, fmt.Errorf("%s: not a URL: %v", Redact(place), err)
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
	b, err := blob.OpenBucket(ctx, bucketURL.String())
	if err != nil {
		return nil, fmt.Errorf("%s: %v", Redact(place), redactErr(err, place))
	}
	if prefix != "" {
		b = blob.PrefixedBucket(b, prefix)
	}
	return &Store{b: b, name: Redact(place), local: local}, nil
}

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

// redactErr keeps a store's error from repeating the URL's secrets.
func redactErr(err error, place string) error {
	msg := err.Error()
	if u, perr := url.Parse(place); perr == nil {
		if u.RawQuery != "" {
			msg = strings.ReplaceAll(msg, u.RawQuery, "…")
		}
		if u.User != nil {
			msg = strings.ReplaceAll(msg, u.User.String(), "…")
		}
	}
	return errors.New(msg)
}

// FetchRuns makes dir hold the run files (*.json) and notes (*.md) at the
// top of the store, a snapshot of one listing: a build reads what the
// store held at one moment, whatever writers do meanwhile. A file dir
// already holds with the same bytes is not fetched again, and one the
// store no longer lists is removed, so a mirror kept by calling it again
// costs only what changed. It returns the run files, sorted.
func (s *Store) FetchRuns(ctx context.Context, dir string) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	var runs []string
	listed := map[string]bool{}
	it := s.b.List(&blob.ListOptions{Delimiter: "/"})
	for {
		obj, err := it.Next(ctx)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: listing: %v", s.name, err)
		}
		name := obj.Key
		if obj.IsDir || (!strings.HasSuffix(name, ".json") && !strings.HasSuffix(name, ".md")) || strings.HasPrefix(name, ".") {
			continue
		}
		local := filepath.Join(dir, filepath.Base(name))
		listed[filepath.Base(name)] = true
		if strings.HasSuffix(name, ".json") {
			runs = append(runs, local)
		}
		if have, err := os.ReadFile(local); err == nil && len(obj.MD5) > 0 {
			if sum := md5.Sum(have); int64(len(have)) == obj.Size && bytes.Equal(sum[:], obj.MD5) {
				continue
			}
		}
		data, err := s.b.ReadAll(ctx, name)
		if err != nil {
			return nil, fmt.Errorf("%s: %s: %v", s.name, name, err)
		}
		if err := os.WriteFile(local, data, 0o644); err != nil {
			return nil, err
		}
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if n := e.Name(); !e.IsDir() && !listed[n] && (strings.HasSuffix(n, ".json") || strings.HasSuffix(n, ".md")) {
			os.Remove(filepath.Join(dir, n))
		}
	}
	slices.Sort(runs)
	return runs, nil
}

// Get reads one object; found is false when there is none.
func (s *Store) Get(ctx context.Context, key string) (data []byte, found bool, err error) {
	data, err = s.b.ReadAll(ctx, key)
	if gcerrors.Code(err) == gcerrors.NotFound {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("%s: %s: %v", s.name, key, err)
	}
	return data, true, nil
}

// ErrExists is Create's answer when the key is taken: another writer got
// there first.
var ErrExists = errors.New("already exists")

// Create writes a new object and refuses one that exists, as one
// conditional request, so two writers cannot both make the same run.
func (s *Store) Create(ctx context.Context, key string, data []byte) error {
	return s.put(ctx, key, data, true)
}

// Put writes an object, replacing what is there.
func (s *Store) Put(ctx context.Context, key string, data []byte) error {
	return s.put(ctx, key, data, false)
}

func (s *Store) put(ctx context.Context, key string, data []byte, create bool) error {
	opts := &blob.WriterOptions{ContentType: contentType(key), IfNotExist: create}
	err := s.b.WriteAll(ctx, key, data, opts)
	switch {
	case err == nil:
		return nil
	case create && gcerrors.Code(err) == gcerrors.FailedPrecondition:
		return fmt.Errorf("%s: %s: %w", s.name, key, ErrExists)
	}
	return fmt.Errorf("%s: %s: %v", s.name, key, err)
}

// contentType is what a browser needs to be told of a site's file.
func contentType(key string) string {
	switch path.Ext(key) {
	case ".html":
		return "text/html; charset=utf-8"
	case ".css":
		return "text/css; charset=utf-8"
	case ".js":
		return "text/javascript; charset=utf-8"
	case ".json":
		return "application/json"
	case ".csv":
		return "text/csv; charset=utf-8"
	case ".svg":
		return "image/svg+xml"
	case ".xml":
		return "application/xml"
	case ".md", ".txt", "":
		return "text/plain; charset=utf-8"
	}
	if t := mime.TypeByExtension(path.Ext(key)); t != "" {
		return t
	}
	return "application/octet-stream"
}

// Published is what a Publish did.
type Published struct {
	Written, Unchanged, Removed int
}

// SiteMarker is the object every published site holds at its root: the
// list of the objects a publish wrote, as a built folder's marker lists its
// files. Only those are ever removed; objects someone else put beside the
// site are left alone.
const SiteMarker = ".matrixgen-site"

// Publish makes the store hold the site built in dir: every file written
// (content type set) unless the store has the same bytes already, and only
// then the objects of an earlier publish that this site no longer has
// removed, so a reader never finds a page whose links lead nowhere. A
// prefix that holds objects but no marker was not published by matrixgen:
// it is refused.
func (s *Store) Publish(ctx context.Context, dir string) (Published, error) {
	var p Published
	old, err := s.previousSite(ctx)
	if err != nil {
		return p, err
	}
	want := map[string]bool{}
	var keys []string
	err = filepath.WalkDir(dir, func(name string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(dir, name)
		if err != nil {
			return err
		}
		key := filepath.ToSlash(rel)
		want[key] = true
		if key != SiteMarker { // written last, once every page is there
			keys = append(keys, key)
		}
		return nil
	})
	if err != nil {
		return p, err
	}
	for _, key := range publishOrder(keys) {
		data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(key)))
		if err != nil {
			return p, err
		}
		if s.holds(ctx, key, data) {
			p.Unchanged++
			continue
		}
		if err := s.Put(ctx, key, data); err != nil {
			return p, err
		}
		p.Written++
	}
	if data, err := os.ReadFile(filepath.Join(dir, SiteMarker)); err == nil {
		if err := s.Put(ctx, SiteMarker, data); err != nil {
			return p, err
		}
		p.Written++
	}
	var stale []string
	for key := range old {
		if !want[key] {
			stale = append(stale, key)
		}
	}
	slices.Sort(stale)
	for _, key := range stale {
		if err := s.b.Delete(ctx, key); err != nil && gcerrors.Code(err) != gcerrors.NotFound {
			return p, fmt.Errorf("%s: removing %s: %v", s.name, key, err)
		}
		p.Removed++
	}
	return p, nil
}

// publishOrder puts the pages in folders (runs, compare pages, assets)
// before those at the top that link to them (the index): a reader of the
// index during a publish finds every run it lists. Deeper first, each
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
	it := s.b.List(nil)
	if obj, err := it.Next(ctx); err == nil {
		return nil, fmt.Errorf("%s holds objects (%s, …) that matrixgen did not publish: publish to an empty prefix, or to one matrixgen published before", s.name, obj.Key)
	} else if !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%s: listing: %v", s.name, err)
	}
	return old, nil
}

// holds reports whether the object key holds data already.
func (s *Store) holds(ctx context.Context, key string, data []byte) bool {
	attrs, err := s.b.Attributes(ctx, key)
	switch {
	case err != nil:
		return false
	case len(attrs.MD5) == 0 && s.local && attrs.Size == int64(len(data)):
		have, err := s.b.ReadAll(ctx, key)
		return err == nil && bytes.Equal(have, data)
	}
	return sameBytes(attrs, data)
}

// sameBytes reports whether an object holds data, by its MD5 where the
// store keeps one, else by its size and ETag-free comparison of length
// (which then rewrites it: better a needless write than a stale page).
func sameBytes(attrs *blob.Attributes, data []byte) bool {
	if len(attrs.MD5) == 0 {
		return false
	}
	sum := md5.Sum(data)
	return attrs.Size == int64(len(data)) && bytes.Equal(attrs.MD5, sum[:])
}
