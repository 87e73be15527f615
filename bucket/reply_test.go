package bucket

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"

	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/matrixgen/matrixgen/internal/s3fake"
	"github.com/matrixgen/matrixgen/runfile"
)

// slack is what a reply may send past the bound its reader holds it to
// before the reader stops: the buffers between the two (the server's and
// the client's, a few KB each) and one piece of the server's writing.
const slack = 64 << 10

// TestRepliesAreBounded: a listing's page, an error and an object were
// read whole, whatever their size: a page of hundreds of megabytes held
// as many in memory, and each 4 MB error was read, kept in its message and
// redacted (minutes of CPU for 20 of them). Every reply is cut at its
// bound (a page 4 MB, an error 64 KB, an object its kind's bound and one
// byte) as it is read, whether it says its length or comes in chunks, so
// the store sends little more than the bound; the error names what was
// read, on one short line, and the client logs nothing of it. A reply in
// chunks within its bound is read as any other.
func TestRepliesAreBounded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := s3fake.NewInMemory()
		putRuns(srv, 2)
		srv.Listing = s3fake.ListHugePage
		srv.HugeBytes = 64 << 20
		var log syncBuffer
		s := inMemoryStore(t, srv, "runs/", &log)
		_, err := s.FetchRuns(t.Context(), t.TempDir())
		want := "s3://lab/runs/: listing: the store's reply went past 4194304 bytes, more than one may be; the rest was not read"
		if err == nil || err.Error() != want {
			t.Errorf("a 64 MB page: %v\nwant %s", err, want)
		}
		if sent, requests := srv.Sent(); sent > maxReply+slack || requests != 1 {
			t.Errorf("a 64 MB page: %d bytes sent in %d requests, want at most %d in 1", sent, requests, maxReply+slack)
		}

		srv.Listing = s3fake.ListHugeError
		srv.HugeBytes = 4 << 20
		_, err = s.FetchRuns(t.Context(), t.TempDir())
		if err == nil || !strings.HasPrefix(err.Error(), "s3://lab/runs/: listing: ") || !strings.Contains(err.Error(), "error reply went past 65536 bytes") || len(err.Error()) > 600 {
			t.Errorf("a 4 MB error for a listing: %.2000v", err)
		}
		if sent, requests := srv.Sent(); sent > int64(requests)*(maxErrorReply+slack) {
			t.Errorf("4 MB errors: %d bytes sent in %d requests, want at most %d each", sent, requests, maxErrorReply+slack)
		}

		srv.Listing = s3fake.ListWell
		putRuns(srv, 20)
		for i := range 20 {
			srv.Misbehave(fmt.Sprintf("runs/r-%02d.json", i), s3fake.HugeError)
		}
		_, err = s.FetchRuns(t.Context(), t.TempDir())
		lines := strings.Split(fmt.Sprint(err), "\n")
		if len(lines) != 21 || lines[20] != "fetching from s3://lab/runs/ stopped after 20 objects failed; the others were not read" {
			t.Fatalf("20 objects answered with 4 MB errors: %d lines:\n%.3000v", len(lines), err)
		}
		for i, line := range lines[:20] {
			if !strings.HasPrefix(line, fmt.Sprintf("s3://lab/runs/: r-%02d.json: ", i)) || !strings.Contains(line, "error reply went past 65536 bytes") || len(line) > 600 {
				t.Errorf("line %d: %q", i, line)
			}
		}
		if sent, requests := srv.Sent(); sent > int64(requests)*(maxErrorReply+slack) {
			t.Errorf("4 MB errors: %d bytes sent in %d requests, want at most %d each", sent, requests, maxErrorReply+slack)
		}

		// In chunks: as any other within its bound, cut at it past it.
		for i := range 20 {
			srv.Misbehave(fmt.Sprintf("runs/r-%02d.json", i), s3fake.Chunked)
		}
		big := bytes.Repeat([]byte("x"), runfile.MaxBytes+100_000)
		srv.Put("runs/big.bin", big)
		srv.Misbehave("runs/big.bin", s3fake.Chunked)
		dir := t.TempDir()
		if f, err := s.FetchRuns(t.Context(), dir); err != nil || len(f.Runs) != 20 {
			t.Fatalf("objects in chunks: %d runs, %v", len(f.Runs), err)
		}
		if data, found, err := s.Get(t.Context(), "r-03.json"); err != nil || !found || string(data) != `{"run":3}` {
			t.Errorf("Get of an object in chunks: %q, %v, %v", data, found, err)
		}
		srv.Sent()
		_, _, err = s.Get(t.Context(), "big.bin")
		if want := fmt.Sprintf("s3://lab/runs/: big.bin: larger than the %d bytes an object read whole may be", runfile.MaxBytes); err == nil || err.Error() != want {
			t.Errorf("Get of %d bytes in chunks: %v", len(big), err)
		}
		if sent, _ := srv.Sent(); sent > runfile.MaxBytes+slack {
			t.Errorf("Get of %d bytes in chunks: %d bytes sent", len(big), sent)
		}
		// The client, discarding the rest of a reply cut, found it ended:
		// no line for each.
		if log.String() != "" {
			t.Errorf("the client said:\n%.2000s", log.String())
		}
	})
	// A store opened for real reads through the SDK's own client, its
	// replies' headers bounded too.
	var o s3.Options
	boundReplies(&o)
	if c, ok := o.HTTPClient.(boundedReplies).next.(*awshttp.BuildableClient); !ok || c.GetTransport().MaxResponseHeaderBytes != maxReplyHeader {
		t.Errorf("the SDK's client is %T, its header unbounded", o.HTTPClient)
	}
}

// TestEveryObjectReadIsChecked: Get read an object without the checks a
// fetch made (an object other than its ETag said was taken). Both read
// through readObject: each way a store can send other bytes than it says
// is refused by both, with the same words, naming the object; a file
// fetched into the mirror is kept as it was.
func TestEveryObjectReadIsChecked(t *testing.T) {
	for _, tt := range []struct {
		how  s3fake.Tamper
		says string
	}{
		{s3fake.Short, "the store sent nothing"}, // the connection closed: the client waits no more
		{s3fake.Longer, "the store said it sent"},
		{s3fake.OtherBytes, "not the"},
	} {
		srv := s3fake.NewInMemory()
		putRuns(srv, 1)
		s := inMemoryStore(t, srv, "runs/", io.Discard)
		dir := t.TempDir()
		if _, err := s.FetchRuns(t.Context(), dir); err != nil {
			t.Fatal(err)
		}
		srv.Put("runs/r-00.json", []byte(`{"run":"zero"}`))
		srv.Misbehave("runs/r-00.json", tt.how)
		_, _, getErr := s.Get(t.Context(), "r-00.json")
		_, fetchErr := s.FetchRuns(t.Context(), dir)
		for _, err := range []error{getErr, fetchErr} {
			if err == nil || !strings.HasPrefix(err.Error(), "s3://lab/runs/: r-00.json: ") {
				t.Errorf("tamper %d: %v", tt.how, err)
			}
		}
		if getErr != nil && fetchErr != nil && !strings.HasPrefix(fetchErr.Error(), getErr.Error()) {
			t.Errorf("tamper %d: Get said %q, the fetch %q", tt.how, getErr, fetchErr)
		}
		if have, _ := os.ReadFile(filepath.Join(dir, "r-00.json")); string(have) != `{"run":0}` {
			t.Errorf("tamper %d: the mirror's copy became %s", tt.how, have)
		}
	}
}

// TestStoreWordsClippedToOneLine: a store's words went into our errors as
// they came: megabytes, newlines that forged lines of our own, terminal
// escapes. They are one line, clipped to their ends with the count left
// out, then redacted and escaped; a key keeps its spaces (it is a name)
// but is clipped, redacted and quoted as every outside name is.
func TestStoreWordsClippedToOneLine(t *testing.T) {
	long := strings.Repeat("word ", 10_000)
	for _, tt := range []struct {
		name, in, want string
	}{
		{"lines", "Access\n\nDenied:\tno\r\nway  ", "Access Denied: no way"},
		{"escapes", "red \x1b[31mtext\x1b]0;title\a", `red \x1b[31mtext\x1b]0;title\a`},
		{"unicode spaces", "a\u2028b\u00a0\u00a0c\u0085d", "a b c d"},
		{"long", "first " + long + " last", "first" + strings.Repeat(" word", 38) + " … (49616 bytes left out) … " + strings.Repeat("word ", 39) + "last"},
		{"a secret at an edge", "token=" + strings.Repeat("Zx9", 80) + " " + long, "token=" + "<redacted>"},
	} {
		got := storeWords(tt.in)
		if tt.name == "a secret at an edge" {
			if !strings.HasPrefix(got, tt.want) || strings.Contains(got, "Zx9") {
				t.Errorf("%s: %q", tt.name, got)
			}
			continue
		}
		if got != tt.want {
			t.Errorf("%s:\n got %q\nwant %q", tt.name, got, tt.want)
		}
		if len(got) > 2*wordsEdge+60 || strings.ContainsAny(got, "\n\r\t\x1b") {
			t.Errorf("%s: %d bytes, or not one line: %q", tt.name, len(got), got)
		}
	}
	key := "a name\n" + strings.Repeat("k", 5000) + "\x1b.json"
	if got := keyName(key); !strings.HasPrefix(got, `"a name\n`) || !strings.HasSuffix(got, `\x1b.json"`) || len(got) > 2*wordsEdge+60 || strings.Contains(got, "\n") {
		t.Errorf("a long key: %q", got)
	}

	// Through a store's error: its words after the place and the key.
	s := &Store{name: "s3://lab/runs/", secrets: []string{"s3cr3tQueryValue"}}
	err := s.fail("r.json", errors.New("api error InternalError: "+strings.Repeat("oh no\n", 1<<20)+"s3cr3tQueryValue"))
	if msg := err.Error(); !strings.HasPrefix(msg, "s3://lab/runs/: r.json: api error InternalError: oh no oh no") || len(msg) > 600 || strings.Contains(msg, "\n") || strings.Contains(msg, "s3cr3t") {
		t.Errorf("a store's 6 MB error: %.1000q", msg)
	}
}

// TestWhereTellsEndpointsApart: a cache folder was named by the place
// without its query, so s3://lab/runs/ on two endpoints shared one mirror
// (one store's runs built as the other's). The endpoint counts, its user
// and query do not (nor any other parameter's secrets), and a place
// without one keeps the folder it always had.
func TestWhereTellsEndpointsApart(t *testing.T) {
	a := Where("s3://lab/runs/?endpoint=http://10.0.0.5:8333&region=us-east-1")
	for _, tt := range []struct {
		place string
		same  bool
	}{
		{"s3://lab/runs/?endpoint=http://10.0.0.6:8333&region=us-east-1", false},
		{"s3://lab/runs/?endpoint=http://10.0.0.5:8333&region=eu-west-1&profile=secret-profile", true},
		{"s3://lab/runs/?endpoint=http://user:pass@10.0.0.5:8333&region=us-east-1", true},
		{"s3://lab/runs/?region=us-east-1", false},
		{"s3://lab/other/?endpoint=http://10.0.0.5:8333", false},
	} {
		if got := Where(tt.place); (got == a) != tt.same || len(got) != 16 {
			t.Errorf("%s: %s, beside %s (same: %v)", tt.place, got, a, tt.same)
		}
	}
	// The name a place without an endpoint always had.
	old := sha256.Sum256([]byte("s3://lab/runs/"))
	if got := Where("s3://lab/runs/?region=eu-west-1&access_key=k"); got != hex.EncodeToString(old[:8]) {
		t.Errorf("an endpoint-less place: %s, want %x", got, old[:8])
	}
}
