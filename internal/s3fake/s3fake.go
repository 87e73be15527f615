// Package s3fake is an S3 server in the test's process (ListObjectsV2 in
// pages, GetObject honouring If-Match) that counts each object's reads and
// misbehaves on request as a broken or hostile store would (Listing, Tamper).
package s3fake

import (
	"bytes"
	"cmp"
	"crypto/md5"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/xml"
	"fmt"
	"hash/crc32"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/matrixgen/matrixgen/internal/memnet"
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

	// Listing is how the listing misbehaves, if at all.
	Listing Listing
	// StallWrites makes every write (PUT) stall; without it the fake
	// writes nothing.
	StallWrites bool
	// MultipartETags makes every ETag one of an object uploaded in parts
	// ("<md5>-1"), which says nothing of the object's MD5.
	MultipartETags bool
	// IgnoreIfMatch makes a read send the object whatever ETag it asks
	// for, as some S3-compatible stores do.
	IgnoreIfMatch bool
	// HugeBytes is how long a huge reply (ListHugePage, ListHugeError,
	// HugeError) is: 4 MB when 0.
	HugeBytes int
	// ErrorStatus is the status of a huge error: 500 (which a client
	// retries) when 0.
	ErrorStatus int

	mu       sync.Mutex
	objects  map[string]object
	reads    map[string]int
	inFlight int
	maxReads int
	tamper   map[string]Tamper
	onRead   map[string][]byte // written before the next read of the key
	sent     atomic.Int64      // bytes of bodies sent
	requests atomic.Int64
	done     chan struct{} // closed by Close: stalled answers end
	closing  sync.Once
}

// Listing is a way a listing misbehaves.
type Listing int

const (
	ListWell Listing = iota
	// ListLoop gives the same continuation token on every page.
	ListLoop
	// ListEndless gives a page of new keys (gen-N.txt), and a new token,
	// on every request.
	ListEndless
	// ListEndlessEmpty gives an empty page and a new token on every request.
	ListEndlessEmpty
	// ListStall never answers.
	ListStall
	// ListHugePage sends one page of HugeBytes of keys, in chunks.
	ListHugePage
	// ListHugeError answers every listing with an error of HugeBytes.
	ListHugeError
)

// Tamper is a way a read of one object misbehaves.
type Tamper int

const (
	Honest Tamper = iota
	// Stall sends the headers and nothing more.
	Stall
	// StallMidway sends the headers and half the body, then nothing.
	StallMidway
	// Short says the object's size and sends half of it, then closes.
	Short
	// Longer sends the object and more, saying the size sent, under the
	// object's ETag.
	Longer
	// OtherBytes sends as many bytes as the object has, other ones, under
	// the object's ETag.
	OtherBytes
	// Newer sends other bytes (as many, in upper case) under their own
	// ETag and a later time, as a store does for an object written again
	// since it was listed.
	Newer
	// Trickle says a megabyte and sends a byte a second of it, without end.
	Trickle
	// NoChecksum sends the object without a checksum header, as a store
	// does for an object written without one.
	NoChecksum
	// Chunked sends the object in chunks, its length unsaid.
	Chunked
	// HugeError answers with a server error of HugeBytes: a message of
	// many lines, with characters that reorder text (U+202E).
	HugeError
	// Rewritten has the object written again, a byte longer, before each
	// read: a writer always ahead of the reader.
	Rewritten
)

type object struct {
	data []byte
	mod  time.Time
}

// New starts a server on the loopback; Close stops it.
func New() *Server {
	s := NewInMemory()
	s.srv = httptest.NewServer(s)
	return s
}

// NewInMemory is a server reached only through InMemory's client.
func NewInMemory() *Server {
	return &Server{PageSize: 3, objects: map[string]object{}, reads: map[string]int{}, tamper: map[string]Tamper{}, onRead: map[string][]byte{}, done: make(chan struct{})}
}

// Close stops the server, ending the answers that stall.
func (s *Server) Close() {
	s.closing.Do(func() { close(s.done) })
	if s.srv != nil {
		s.srv.Close()
	}
}

// InMemory serves the bucket over in-memory connections, reached by client
// at endpoint, until stop; its goroutines join the caller's synctest bubble.
func (s *Server) InMemory() (client *http.Client, endpoint string, stop func()) {
	l := memnet.Listen()
	hs := &http.Server{Handler: s}
	go hs.Serve(l)
	client = l.Client()
	return client, "http://s3.test", func() {
		s.Close()
		client.CloseIdleConnections()
		hs.Close()
	}
}

// Misbehave makes every read of key misbehave as how says (Honest: stop).
func (s *Server) Misbehave(key string, how Tamper) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tamper[key] = how
}

// WriteOnNextRead has key written with data just before its next read.
func (s *Server) WriteOnNextRead(key string, data []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.onRead[key] = slices.Clone(data)
}

// Sent is how many bytes of bodies the server sent, and how many requests
// it answered, since the last call; both start again from zero.
func (s *Server) Sent() (bytes int64, requests int) {
	return s.sent.Swap(0), int(s.requests.Swap(0))
}

// URL is the place of prefix in the bucket, as matrixgen takes it.
func (s *Server) URL(prefix string) string {
	return "s3://lab/" + prefix + "?endpoint=" + s.srv.URL + "&region=us-east-1&use_path_style=true&anonymous=true"
}

// Put stores an object.
func (s *Server) Put(key string, data []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.put(key, data)
}

func (s *Server) put(key string, data []byte) {
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

// ServeHTTP answers the requests of S3's protocol the fake knows.
func (s *Server) ServeHTTP(rw http.ResponseWriter, r *http.Request) {
	s.requests.Add(1)
	w := &counting{ResponseWriter: rw, s: s}
	bucket, key, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
	switch {
	case bucket != "lab":
		http.Error(w, "NoSuchBucket", http.StatusNotFound)
	case r.Method == http.MethodGet && key == "" && r.URL.Query().Get("list-type") == "2":
		s.list(w, r)
	case r.Method == http.MethodGet && key != "":
		s.get(w, r, key)
	case r.Method == http.MethodPut && key != "" && s.StallWrites:
		// No answer at all, not even its headers.
		select {
		case <-r.Context().Done():
		case <-s.done:
		}
	default:
		http.Error(w, "NotImplemented", http.StatusNotImplemented)
	}
}

// counting counts the bytes of a reply's body as they are sent.
type counting struct {
	http.ResponseWriter
	s *Server
}

func (c *counting) Write(p []byte) (int, error) {
	n, err := c.ResponseWriter.Write(p)
	c.s.sent.Add(int64(n))
	return n, err
}

func (c *counting) Flush() { http.NewResponseController(c.ResponseWriter).Flush() }

// huge writes start, then fill(i) for the i-th piece, each flushed, until
// about n bytes or the client stops reading, then end.
func huge(w http.ResponseWriter, n int, start string, fill func(i int) string, end string) {
	if _, err := io.WriteString(w, start); err != nil {
		return
	}
	for i, sent := 0, len(start); sent < n; i++ {
		piece := fill(i)
		if _, err := io.WriteString(w, piece); err != nil {
			return
		}
		w.(http.Flusher).Flush()
		sent += len(piece)
	}
	io.WriteString(w, end)
}

// hugeError answers with a server error of about n bytes, its length said.
func (s *Server) hugeError(w http.ResponseWriter, n int) {
	start := xml.Header + "<Error><Code>InternalError</Code><Message>"
	end := "</Message><RequestId>4442587FB7D0A2F9</RequestId></Error>"
	line := "the store\tsays\u202e at length\n"
	pieces := (n - len(start) - len(end) + len(line) - 1) / len(line)
	w.Header().Set("Content-Type", "application/xml")
	w.Header().Set("Content-Length", strconv.Itoa(len(start)+pieces*len(line)+len(end)))
	w.WriteHeader(cmp.Or(s.ErrorStatus, http.StatusInternalServerError))
	huge(w, len(start)+pieces*len(line), start, func(int) string { return line }, end)
}

func (s *Server) hugeBytes() int { return cmp.Or(s.HugeBytes, 4<<20) }

func (s *Server) etag(data []byte) string {
	sum := md5.Sum(data)
	if s.MultipartETags {
		return `"` + hex.EncodeToString(sum[:]) + `-1"`
	}
	return `"` + hex.EncodeToString(sum[:]) + `"`
}

// stall holds an answer open until the client gives up or the server closes.
func (s *Server) stall(w http.ResponseWriter, r *http.Request) {
	http.NewResponseController(w).Flush()
	select {
	case <-r.Context().Done():
	case <-s.done:
	}
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

// list answers ListObjectsV2 a page at a time, the token the last key sent.
func (s *Server) list(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	prefix, after := q.Get("prefix"), q.Get("continuation-token")
	switch s.Listing {
	case ListStall:
		s.stall(w, r)
		return
	case ListHugeError:
		s.hugeError(w, s.hugeBytes())
		return
	case ListHugePage:
		w.Header().Set("Content-Type", "application/xml")
		start := xml.Header + `<ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Name>lab</Name><Prefix>` + prefix + `</Prefix><MaxKeys>1000</MaxKeys><IsTruncated>false</IsTruncated>`
		huge(w, s.hugeBytes(), start, func(i int) string {
			return fmt.Sprintf(`<Contents><Key>%sh-%09d.txt</Key><LastModified>2026-01-01T00:00:00.000Z</LastModified><ETag>"d41d8cd98f00b204e9800998ecf8427e"</ETag><Size>0</Size><StorageClass>STANDARD</StorageClass></Contents>`, prefix, i)
		}, "</ListBucketResult>")
		return
	}
	s.mu.Lock()
	res := listResult{Name: "lab", Prefix: prefix, MaxKeys: s.PageSize, ContinuationToken: after}
	switch s.Listing {
	case ListEndless, ListEndlessEmpty:
		n, _ := strconv.Atoi(strings.TrimPrefix(after, "t"))
		res.IsTruncated, res.NextContinuationToken = true, "t"+strconv.Itoa(n+1)
		for i := range s.PageSize {
			if s.Listing == ListEndless {
				k := fmt.Sprintf("%sgen-%d-%d.txt", prefix, n, i)
				res.Contents = append(res.Contents, listEntry{Key: k, LastModified: time.Unix(0, 0).UTC().Format(time.RFC3339), ETag: s.etag(nil), StorageClass: "STANDARD"})
			}
		}
	default:
		if s.Listing == ListLoop {
			after = ""
		}
		var keys []string
		for k := range s.objects {
			if strings.HasPrefix(k, prefix) && k > after {
				keys = append(keys, k)
			}
		}
		slices.Sort(keys)
		if len(keys) > s.PageSize {
			keys, res.IsTruncated = keys[:s.PageSize], true
			res.NextContinuationToken = keys[len(keys)-1]
		}
		if s.Listing == ListLoop {
			res.IsTruncated, res.NextContinuationToken = true, "loop"
		}
		for _, k := range keys {
			o := s.objects[k]
			res.Contents = append(res.Contents, listEntry{Key: k, LastModified: o.mod.Format(time.RFC3339), ETag: s.etag(o.data), Size: len(o.data), StorageClass: "STANDARD"})
		}
	}
	s.mu.Unlock()
	res.KeyCount = len(res.Contents)
	w.Header().Set("Content-Type", "application/xml")
	fmt.Fprint(w, xml.Header)
	xml.NewEncoder(w).Encode(res)
}

func (s *Server) get(w http.ResponseWriter, r *http.Request, key string) {
	s.mu.Lock()
	how := s.tamper[key]
	if data, ok := s.onRead[key]; ok {
		delete(s.onRead, key)
		s.put(key, data)
	}
	if o, ok := s.objects[key]; ok && how == Rewritten {
		s.put(key, append(o.data, '!'))
	}
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
	body, tag, mod := o.data, s.etag(o.data), o.mod
	switch how {
	case Longer:
		body = append(slices.Clone(o.data), "and more"...)
	case OtherBytes:
		body = []byte(strings.Repeat("x", len(o.data)))
	case Newer:
		body = bytes.ToUpper(o.data) // as many bytes: only the MD5 tells
		if bytes.Equal(body, o.data) {
			body = append(body, '!')
		}
		tag, mod = s.etag(body), mod.Add(time.Minute)
	case HugeError:
		s.hugeError(w, s.hugeBytes())
		return
	}
	if want := r.Header.Get("If-Match"); want != "" && want != tag && !s.IgnoreIfMatch {
		w.Header().Set("Content-Type", "application/xml")
		w.WriteHeader(http.StatusPreconditionFailed)
		fmt.Fprint(w, xml.Header+`<Error><Code>PreconditionFailed</Code><Message>At least one of the pre-conditions you specified did not hold</Message><Condition>If-Match</Condition></Error>`)
		return
	}
	w.Header().Set("ETag", tag)
	// As S3 sends for an object written with a checksum; without one the
	// client logs a line for every read. It is the bytes sent's: a store
	// that sends other bytes than it lists is consistent about them.
	if how != NoChecksum {
		w.Header().Set("x-amz-checksum-crc32", base64.StdEncoding.EncodeToString(binary.BigEndian.AppendUint32(nil, crc32.ChecksumIEEE(body))))
	}
	w.Header().Set("Last-Modified", mod.Format(http.TimeFormat))
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	switch how {
	case Stall, StallMidway:
		if how == StallMidway {
			w.Write(body[:len(body)/2])
		}
		s.stall(w, r)
		return
	case Trickle:
		w.Header().Set("Content-Length", strconv.Itoa(1<<20))
		for {
			w.Write([]byte("x"))
			w.(http.Flusher).Flush()
			select {
			case <-r.Context().Done():
				return
			case <-s.done:
				return
			case <-time.After(time.Second):
			}
		}
	case Short:
		w.Write(body[:len(body)/2])
		// The handler's end then closes the connection, the body short.
		return
	case Chunked:
		w.Header().Del("Content-Length")
		for part := range slices.Chunk(body, 1000) {
			w.Write(part)
			w.(http.Flusher).Flush()
		}
		return
	}
	w.Write(body)
}
