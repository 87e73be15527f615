// Package s3fake is an S3 server in the test's own process, enough of the
// protocol for a build to list and read a bucket (ListObjectsV2, pages of
// a few keys; GetObject) and for tests to see what it was asked: how many
// times each object was read and how many reads were in flight at once.
// Objects are put directly, as a lab's boxes would have.
package s3fake

import (
	"crypto/md5"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/xml"
	"fmt"
	"hash/crc32"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Server is one bucket, "lab", served over HTTP on the loopback.
type Server struct {
	srv *httptest.Server
	// PageSize is how many keys a listing's page holds: small, so a
	// listing of a few objects takes several pages, as a lab's does.
	PageSize int
	// ReadDelay holds each read open this long, so reads that a client
	// makes at once overlap.
	ReadDelay time.Duration

	mu       sync.Mutex
	objects  map[string]object
	reads    map[string]int
	inFlight int
	maxReads int
}

type object struct {
	data []byte
	mod  time.Time
}

// New starts a server; it stops when stop is called.
func New() *Server {
	s := &Server{PageSize: 3, objects: map[string]object{}, reads: map[string]int{}}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	return s
}

// Close stops the server.
func (s *Server) Close() { s.srv.Close() }

// URL is the place of prefix in the bucket, as matrixgen takes it.
func (s *Server) URL(prefix string) string {
	return "s3://lab/" + prefix + "?endpoint=" + s.srv.URL + "&region=us-east-1&use_path_style=true&anonymous=true"
}

// Put stores an object.
func (s *Server) Put(key string, data []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.objects[key] = object{data: slices.Clone(data), mod: time.Now().UTC().Truncate(time.Second)}
}

// Delete removes an object.
func (s *Server) Delete(key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.objects, key)
}

// Reads is how many times each object was read since the last call, and
// the most reads in flight at once; both start again from zero.
func (s *Server) Reads() (reads map[string]int, maxInFlight int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	reads, maxInFlight = s.reads, s.maxReads
	s.reads, s.maxReads = map[string]int{}, 0
	return reads, maxInFlight
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	bucket, key, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
	switch {
	case bucket != "lab":
		http.Error(w, "NoSuchBucket", http.StatusNotFound)
	case r.Method == http.MethodGet && key == "" && r.URL.Query().Get("list-type") == "2":
		s.list(w, r)
	case r.Method == http.MethodGet && key != "":
		s.get(w, key)
	default:
		http.Error(w, "NotImplemented", http.StatusNotImplemented)
	}
}

func etag(data []byte) string {
	sum := md5.Sum(data)
	return `"` + hex.EncodeToString(sum[:]) + `"`
}

type listResult struct {
	XMLName               xml.Name `xml:"http://s3.amazonaws.com/doc/2006-03-01/ ListBucketResult"`
	Name                  string
	Prefix                string
	KeyCount              int
	MaxKeys               int
	IsTruncated           bool
	ContinuationToken     string `xml:",omitempty"`
	NextContinuationToken string `xml:",omitempty"`
	Contents              []listEntry
}

type listEntry struct {
	Key          string
	LastModified string
	ETag         string
	Size         int
	StorageClass string
}

// list answers ListObjectsV2 a page at a time; the continuation token is
// the last key of the page before.
func (s *Server) list(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	prefix, after := q.Get("prefix"), q.Get("continuation-token")
	s.mu.Lock()
	var keys []string
	for k := range s.objects {
		if strings.HasPrefix(k, prefix) && k > after {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	res := listResult{Name: "lab", Prefix: prefix, MaxKeys: s.PageSize, ContinuationToken: after}
	if len(keys) > s.PageSize {
		keys, res.IsTruncated = keys[:s.PageSize], true
		res.NextContinuationToken = keys[len(keys)-1]
	}
	for _, k := range keys {
		o := s.objects[k]
		res.Contents = append(res.Contents, listEntry{Key: k, LastModified: o.mod.Format(time.RFC3339), ETag: etag(o.data), Size: len(o.data), StorageClass: "STANDARD"})
	}
	s.mu.Unlock()
	res.KeyCount = len(res.Contents)
	w.Header().Set("Content-Type", "application/xml")
	fmt.Fprint(w, xml.Header)
	xml.NewEncoder(w).Encode(res)
}

func (s *Server) get(w http.ResponseWriter, key string) {
	s.mu.Lock()
	o, ok := s.objects[key]
	if ok {
		s.reads[key]++
		s.inFlight++
		s.maxReads = max(s.maxReads, s.inFlight)
	}
	s.mu.Unlock()
	if !ok {
		w.Header().Set("Content-Type", "application/xml")
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprint(w, xml.Header+`<Error><Code>NoSuchKey</Code><Message>The specified key does not exist.</Message></Error>`)
		return
	}
	defer func() {
		s.mu.Lock()
		s.inFlight--
		s.mu.Unlock()
	}()
	time.Sleep(s.ReadDelay)
	w.Header().Set("ETag", etag(o.data))
	// As S3 sends for an object written with a checksum; without one the
	// client logs a line for every read.
	w.Header().Set("x-amz-checksum-crc32", base64.StdEncoding.EncodeToString(binary.BigEndian.AppendUint32(nil, crc32.ChecksumIEEE(o.data))))
	w.Header().Set("Last-Modified", o.mod.Format(http.TimeFormat))
	w.Header().Set("Content-Length", strconv.Itoa(len(o.data)))
	w.Write(o.data)
}
