package main

import (
	"bytes"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"
)

// liveMark is what serve adds to a page before its </head>.
const liveMark = `<meta name="matrixgen-live" content="/__matrixgen/version">` + "\n"

// TestLiveMarkStreams: serve's live wrapper held each page whole in memory
// to add its mark. It marks pages as they pass, so pages of any size are
// streamed: many random pages, written in random pieces, with </head>
// anywhere in them (split across pieces too) or nowhere, come out as the
// page with the mark before its first </head> within markSearch bytes,
// and otherwise unchanged.
func TestLiveMarkStreams(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 4))
	s := &server{}
	for i := range 500 {
		page := randomPage(rng)
		at := bytes.Index(page, []byte("</head>"))
		want := page
		if at >= 0 && at < markSearch {
			want = append(append(append([]byte{}, page[:at]...), liveMark...), page[at:]...)
		}
		h := s.live(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			w.Header().Set("Content-Length", strconv.Itoa(len(page)))
			for rest := page; len(rest) > 0; {
				n := min(len(rest), 1+rng.IntN(9000))
				w.Write(rest[:n])
				rest = rest[n:]
			}
		}))
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", "/runs/a/", nil))
		if got := rec.Body.Bytes(); !bytes.Equal(got, want) {
			t.Fatalf("page %d (%d bytes, </head> at %d): %d bytes out, want %d", i, len(page), at, len(got), len(want))
		}
		if rec.Header().Get("Content-Length") != "" && at >= 0 && at < markSearch {
			t.Fatalf("page %d: a marked page keeps the length of the unmarked one", i)
		}
	}
}

// randomPage is bytes around an optional </head>, with near misses
// ("</hea", "<</head") before it.
func randomPage(rng *rand.Rand) []byte {
	var b bytes.Buffer
	pieces := []string{"<html><head><title>x</title>", "</hea", "<</head", "d>", "<p>text</p>", "\n", "</body>"}
	for range rng.IntN(40) {
		b.WriteString(pieces[rng.IntN(len(pieces))])
	}
	if rng.IntN(8) == 0 { // far into the page, past where the mark is looked for
		b.Write(bytes.Repeat([]byte("x"), markSearch-b.Len()-3+rng.IntN(6)))
	}
	if rng.IntN(5) != 0 {
		b.WriteString("</head>")
	}
	for range rng.IntN(40) {
		b.WriteString(pieces[rng.IntN(len(pieces))])
	}
	return b.Bytes()
}

// TestServeDoesNotHoldPages: a 64 MB page was read whole into memory for
// each request (the wrapper's buffer), two copies with the mark added. A
// page is streamed from its file: what one request allocates stays far
// below the page's size.
func TestServeDoesNotHoldPages(t *testing.T) {
	dir := t.TempDir()
	const size = 64 << 20
	page := append([]byte("<html><head><title>big</title></head><body>"), bytes.Repeat([]byte("<p>row</p>\n"), size/11)...)
	if err := os.WriteFile(filepath.Join(dir, "index.html"), page, 0o644); err != nil {
		t.Fatal(err)
	}
	page = nil
	h := (&server{}).live(siteFiles(dir))
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	w := &countingWriter{header: http.Header{}}
	h.ServeHTTP(w, httptest.NewRequest("GET", "/", nil))
	runtime.ReadMemStats(&after)
	if w.n < size {
		t.Fatalf("served %d bytes of %d", w.n, size)
	}
	if got := after.TotalAlloc - before.TotalAlloc; got > size/8 {
		t.Errorf("one request for a %d MB page allocated %d MB", size>>20, got>>20)
	}
}

// countingWriter is a ResponseWriter that counts what it is sent.
type countingWriter struct {
	header http.Header
	n      int
}

func (c *countingWriter) Header() http.Header         { return c.header }
func (c *countingWriter) Write(b []byte) (int, error) { c.n += len(b); return len(b), nil }
func (c *countingWriter) WriteHeader(int)             {}
