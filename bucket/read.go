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
	"net/http"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"gocloud.dev/blob"
	"gocloud.dev/gcerrors"
)

// Every read of a store goes through a guard (its time) and, for a
// listing, a listing (its length); every object read through readObject
// (its bytes, checked), every reply through boundedReplies (reply.go), and
// every object fetched into a mirror through fetch (its bytes). What a
// store may do wrong is bounded there, once, whatever called.

// guard bounds one read: cancelled, with a cause saying why, when the
// store sends nothing for the store's Idle time, or when a whole object
// takes longer than its Object time.
type guard struct {
	ctx           context.Context
	cancel        context.CancelCauseFunc
	idle          time.Duration
	idleT, wholeT *time.Timer
}

// guard starts a read's bound; whole bounds the read's total time too.
// stop must be called when the read is done.
func (s *Store) guard(ctx context.Context, whole bool) *guard {
	g := &guard{idle: s.limits.Idle}
	g.ctx, g.cancel = context.WithCancelCause(ctx)
	g.idleT = time.AfterFunc(g.idle, func() {
		g.cancel(fmt.Errorf("the store sent nothing for %v (an idle store is given up on after that long)", g.idle))
	})
	if whole {
		d := s.limits.Object
		g.wholeT = time.AfterFunc(d, func() { g.cancel(fmt.Errorf("not read whole within %v", d)) })
	}
	return g
}

// progress says the store sent something: the idle time starts again.
func (g *guard) progress() { g.idleT.Reset(g.idle) }

func (g *guard) stop() {
	g.idleT.Stop()
	if g.wholeT != nil {
		g.wholeT.Stop()
	}
	g.cancel(nil)
}

// why is the guard's reason when it cut the read short, else err.
func (g *guard) why(err error) error {
	cause := context.Cause(g.ctx)
	if cause != nil && !errors.Is(cause, context.Canceled) && !errors.Is(cause, context.DeadlineExceeded) {
		return cause
	}
	return err
}

// guardedReader tells its guard of every byte read.
type guardedReader struct {
	r io.Reader
	g *guard
}

func (r guardedReader) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	if n > 0 {
		r.g.progress()
	}
	return n, err
}

// listing is one listing of a store, bounded: in time (a page within the
// idle time), in length (keys and pages), and never looping (a store that
// gives a continuation token it gave before is refused).
type listing struct {
	s      *Store
	it     *blob.ListIterator
	g      *guard // the current Next's
	keys   int
	pages  int
	tokens map[[16]byte]bool
	err    error // why the listing was refused, by before
}

func (s *Store) list() *listing {
	l := &listing{s: s, tokens: map[[16]byte]bool{}}
	l.it = s.b.List(&blob.ListOptions{BeforeList: l.before})
	return l
}

// before is called before each request for a page, with the request.
func (l *listing) before(as func(any) bool) error {
	if l.g != nil {
		l.g.progress()
	}
	l.pages++
	if l.pages > l.s.limits.MaxPages {
		l.err = fmt.Errorf("the store's listing went on for more than %d pages; a runs folder needs far fewer", l.s.limits.MaxPages)
		return l.err
	}
	var token *string
	var in *s3.ListObjectsV2Input
	var legacy *s3.ListObjectsInput
	switch {
	case as(&in):
		token = in.ContinuationToken
	case as(&legacy):
		token = legacy.Marker
	}
	if token != nil {
		sum := sha256.Sum256([]byte(*token))
		k := [16]byte(sum[:16])
		if l.tokens[k] {
			l.err = fmt.Errorf("the store's listing repeated a continuation token (page %d): it would never end", l.pages)
			return l.err
		}
		l.tokens[k] = true
	}
	return nil
}

// next is the listing's next object, io.EOF at its end, or an error that
// names the store and what went wrong.
func (l *listing) next(ctx context.Context) (*blob.ListObject, error) {
	l.g = l.s.guard(ctx, false)
	defer l.g.stop()
	obj, err := l.it.Next(l.g.ctx)
	switch {
	case errors.Is(err, io.EOF):
		return nil, io.EOF
	case l.err != nil:
		return nil, fmt.Errorf("%s: listing: %w", l.s.name, l.err)
	case err != nil:
		return nil, l.s.fail("listing", l.g.why(err))
	}
	if l.keys++; l.keys > l.s.limits.MaxKeys {
		return nil, fmt.Errorf("%s: listing: the store listed more than %d keys; a runs folder holds fewer", l.s.name, l.s.limits.MaxKeys)
	}
	return obj, nil
}

// stored is the name an object has in the store where gocloud's driver
// lists it under another: S3's and a folder's read "__0xNN__" in a name as
// the character NN (and would read the object under that other name: the
// wrong object, or none). ok is false when the names agree, or the driver
// does not say. A folder's is its base name.
func (s *Store) stored(obj *blob.ListObject) (name string, ok bool) {
	var o types.Object
	if obj.As(&o) {
		name = strings.TrimPrefix(aws.ToString(o.Key), s.prefix)
		return name, name != obj.Key
	}
	var fi os.FileInfo
	if obj.As(&fi) && fi != nil && !fi.IsDir() {
		return fi.Name(), fi.Name() != path.Base(obj.Key)
	}
	return "", false
}

// listedETag is the ETag an S3 listing gives an object (cleanETag), or "".
func listedETag(obj *blob.ListObject) string {
	var o types.Object
	if obj.As(&o) {
		return cleanETag(aws.ToString(o.ETag))
	}
	return ""
}

// cleanETag is etag when it can be recorded and sent back (If-Match): at
// most maxETag bytes of printable ASCII; otherwise "", as if the store
// gave none.
func cleanETag(etag string) string {
	if len(etag) > maxETag || strings.ContainsFunc(etag, func(r rune) bool { return r < 0x21 || r > 0x7e }) {
		return ""
	}
	return etag
}

// maxETag bounds an ETag kept: S3's are 34 to 40 bytes.
const maxETag = 256

// bareETag is an ETag without its quotes and weak mark.
func bareETag(etag string) string { return strings.Trim(strings.TrimPrefix(etag, "W/"), `"`) }

// sameETag reports whether two ETags name one version, written with
// quotes or without, weak or strong.
func sameETag(a, b string) bool { return bareETag(a) == bareETag(b) }

// plainMD5 is the MD5 an ETag says, when it is one (an object written
// whole); a multipart upload's ETag ("…-3") is not.
func plainMD5(etag string) ([]byte, bool) {
	sum, err := hex.DecodeString(bareETag(etag))
	return sum, err == nil && len(sum) == md5.Size
}

// Fetched is what FetchRuns brought: the run files, sorted, and a line for
// each key it skipped (the first Limits.MaxReported, then one counting the
// rest).
type Fetched struct {
	Runs    []string
	Skipped []string
}

// FetchRuns makes dir hold the run files (<id>.json) and notes (<id>.md)
// at the top of the store, a snapshot of one listing: a build reads what
// the store held at one moment, whatever writers do meanwhile. A file dir
// already holds with the same bytes is not fetched again, and one the
// store no longer lists is removed, so a mirror kept by calling it again
// costs only what changed.
//
// The listing is read as a stream, a page at a time, and the objects it
// names are fetched as it goes, fetchesInFlight at once, each copied to
// its file as it arrives: a bucket of 100,000 runs costs the names, never
// the runs, in memory. An object is fetched again only when it changed:
// its key's record in the mirror (its ETag, or size and MD5, or size and
// time; see fetchedFile) says so, or, without one, the file's bytes.
//
// Each object is read as it was listed (If-Match on its listed ETag; see
// readObject): one written again since the listing is not mixed into the
// snapshot. The whole listing is read again, once, when one was; an
// object written again after that too is an error naming it.
//
// Every key under the prefix is looked at, whatever the store makes of the
// listing's delimiter (not every S3-compatible store honours it). Names
// starting with a dot, and folders so named, are ignored, as a local runs
// folder's are; any other .json or .md key the build does not expect (in
// a folder below the top, a name no run id can have, the same name twice,
// a name the store's client would read as another, a name that differs
// from another's only in case) is skipped with a line saying why, never
// failing the build.
//
// What a store may do wrong is bounded (see Limits and boundedReplies): a
// read that stalls fails after the idle time, naming its object; a
// listing too long, or one that loops, is refused; each object is read
// with the bound of its kind and checked against what the store says of
// it (see readObject) before it replaces the mirror's copy; the whole
// fetch ends at Limits.Fetch. An object that fails is reported with every
// other one that does (the first Limits.MaxReported, then a count;
// fetching stops there), and the build does not run.
func (s *Store) FetchRuns(ctx context.Context, dir string) (Fetched, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return Fetched{}, err
	}
	d := s.limits.Fetch
	tooLong := fmt.Errorf("%s: fetching took longer than %v, the most a whole fetch may take; the objects not yet fetched keep their copies in the mirror", s.name, d)
	ctx, cancel := context.WithTimeoutCause(ctx, d, tooLong)
	defer cancel()
	state := readFetched(dir)
	p := s.fetchPass(ctx, dir, state)
	if p.err == nil && len(p.changed) > 0 {
		// Written since the listing: a new one lists them as they are now.
		p = s.fetchPass(ctx, dir, state)
		if p.err == nil && len(p.changed) > 0 {
			slices.Sort(p.changed)
			var errs []error
			for _, key := range p.changed {
				errs = append(errs, fmt.Errorf("%s: %s: written again since it was listed, and again since a second listing; the mirror's copy was kept (fetch again once its writer is done)", s.name, keyName(key)))
			}
			p.err = errors.Join(errs...)
		}
	}
	if context.Cause(ctx) == tooLong {
		return p.f, tooLong
	}
	if p.err != nil {
		return p.f, p.err
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		n := e.Name()
		if e.IsDir() || p.taken[n] || !isRunKey(n) {
			continue
		}
		// On a file system that ignores case, a name kept by the listing
		// in another case is the same file.
		if key, ok := p.folded[strings.ToLower(n)]; ok && sameEntry(dir, n, key) {
			continue
		}
		os.Remove(filepath.Join(dir, n))
	}
	slices.Sort(p.f.Runs)
	// Without its record the next call compares each file's bytes: slower,
	// not wrong.
	_ = writeFetched(dir, state, p.taken)
	return p.f, nil
}

// pass is one listing's fetch: what it brought, the keys it kept (as
// listed, and by their lower case), the keys written again since the
// listing, and the failures.
type pass struct {
	f       Fetched
	taken   map[string]bool
	folded  map[string]string
	changed []string
	err     error
}

// fetchPass lists the store once and fetches what changed into dir,
// recording each object fetched in state.
func (s *Store) fetchPass(ctx context.Context, dir string, state map[string]fetchedState) pass {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	p := pass{taken: map[string]bool{}, folded: map[string]string{}}
	type job struct {
		obj  *blob.ListObject
		etag string // as listed; "" when the store lists none
	}
	var (
		todo    = make(chan job)
		workers sync.WaitGroup
		mu      sync.Mutex
		failed  []error // the first MaxReported
		stopped bool
		skips   int // the keys skipped; the first MaxReported have a line
		skip    = func(key, why string) {
			if skips++; skips <= s.limits.MaxReported {
				p.f.Skipped = append(p.f.Skipped, fmt.Sprintf("skipped %s in %s: %s", key, s.name, why))
			}
		}
		fetchErr = func(key string, err error) {
			mu.Lock()
			defer mu.Unlock()
			switch {
			case stopped:
				return // cut short by the stop below: not the object's fault
			case errors.Is(err, errChanged):
				p.changed = append(p.changed, key)
				return
			}
			if failed = append(failed, err); len(failed) == s.limits.MaxReported {
				stopped = true
				cancel() // enough to say: the others are not read
			}
		}
	)
	for range fetchesInFlight {
		workers.Go(func() {
			for j := range todo {
				obj := j.obj
				local := filepath.Join(dir, obj.Key)
				mu.Lock()
				was, known := state[obj.Key]
				mu.Unlock()
				st, err := was, error(nil)
				switch {
				case unchanged(was, known, local, obj, j.etag):
					// A record from before ETags were kept: the same
					// version, by its MD5 or time, now known by its ETag.
					st.etag = cmp.Or(was.etag, j.etag)
				case sameFile(local, obj):
					st, err = recordOf(local, fetchedState{size: obj.Size, md5: hex.EncodeToString(obj.MD5), mod: obj.ModTime, etag: j.etag})
				default:
					st, err = s.fetch(ctx, obj, j.etag, local)
				}
				if err != nil {
					fetchErr(obj.Key, err)
					continue
				}
				mu.Lock()
				state[obj.Key] = st
				mu.Unlock()
			}
		})
	}
	listErr := func() error {
		defer close(todo)
		l := s.list()
		for {
			obj, err := l.next(ctx)
			if errors.Is(err, io.EOF) {
				return nil
			}
			if err != nil {
				return err
			}
			name := obj.Key
			if as, other := s.stored(obj); other {
				if isRunKey(as) || isRunKey(name) {
					skip(keyName(as), fmt.Sprintf("its name holds text (__0xNN__) that the store's client reads as an escaped character, so it would be read as %s; rename it", keyName(name)))
				}
				continue
			}
			if obj.IsDir || !isRunKey(name) || strings.HasPrefix(name, ".") {
				continue
			}
			if why := unexpected(name, p.taken); why != "" {
				skip(keyName(name), why)
				continue
			}
			// Run ids are ASCII: their lower case is how a file system
			// that ignores case (macOS's, Windows') sees them.
			if first, ok := p.folded[strings.ToLower(name)]; ok {
				skip(keyName(name), fmt.Sprintf("its name differs from %s only in case, and a file system that ignores case (macOS, Windows) holds the two as one file; rename one", keyName(first)))
				continue
			}
			p.taken[name] = true
			p.folded[strings.ToLower(name)] = name
			if path.Ext(name) == ".json" {
				p.f.Runs = append(p.f.Runs, filepath.Join(dir, name))
			}
			select {
			case todo <- job{obj, listedETag(obj)}:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
	}()
	workers.Wait()
	if more := skips - s.limits.MaxReported; more > 0 {
		p.f.Skipped = append(p.f.Skipped, fmt.Sprintf("skipped %d more keys in %s", more, s.name))
	}
	switch {
	case len(failed) > 0:
		slices.SortFunc(failed, func(a, b error) int { return strings.Compare(a.Error(), b.Error()) })
		if stopped {
			failed = append(failed, fmt.Errorf("fetching from %s stopped after %d objects failed; the others were not read", s.name, len(failed)))
		}
		p.err = errors.Join(failed...)
	case listErr != nil:
		p.err = listErr
	}
	return p
}

// sameEntry reports whether the names a and b in dir are one file.
func sameEntry(dir, a, b string) bool {
	ia, errA := os.Lstat(filepath.Join(dir, a))
	ib, errB := os.Lstat(filepath.Join(dir, b))
	return errA == nil && errB == nil && os.SameFile(ia, ib)
}

// isRunKey reports whether a key names what a runs folder holds: a run
// file or notes.
func isRunKey(key string) bool {
	ext := path.Ext(key)
	return ext == ".json" || ext == ".md"
}

// recordOf is st with the time of the file local as it is now.
func recordOf(local string, st fetchedState) (fetchedState, error) {
	info, err := os.Lstat(local)
	if err != nil {
		return st, err
	}
	st.file = info.ModTime()
	return st, nil
}

// fetch copies an object, as listed, into the file local through
// readObject (never holding more than its kind's bound, every check
// made), and only then replaces local; the record returned is of the
// bytes written and the ETag they were read under. An object that fails,
// or was written again since the listing (errChanged), is an error naming
// it, and local is left as it was.
func (s *Store) fetch(ctx context.Context, obj *blob.ListObject, etag, local string) (fetchedState, error) {
	limit, what := boundOf(obj.Key)
	tmp, err := os.CreateTemp(filepath.Dir(local), ".fetch-*")
	if err != nil {
		return fetchedState{}, err
	}
	defer os.Remove(tmp.Name()) // after a rename, nothing
	got, err := s.readObject(ctx, obj.Key, listedAs{size: obj.Size, md5: obj.MD5, etag: etag}, limit, what, tmp)
	if closeErr := tmp.Close(); err == nil && closeErr != nil {
		err = closeErr
	}
	if err != nil {
		if errors.Is(err, errChanged) {
			return fetchedState{}, err
		}
		return fetchedState{}, fmt.Errorf("%w; the mirror's copy was kept", err)
	}
	if err := os.Rename(tmp.Name(), local); err != nil {
		return fetchedState{}, err
	}
	return recordOf(local, fetchedState{size: got.n, md5: hex.EncodeToString(got.md5), mod: obj.ModTime, etag: etag})
}

// listedAs is what a listing said of an object, which readObject holds the
// object read to; notListed, for a read of a key no listing named (Get).
type listedAs struct {
	size int64 // -1 when not listed
	md5  []byte
	etag string
}

var notListed = listedAs{size: -1}

// objectRead is what readObject read: its bytes' count and MD5.
type objectRead struct {
	n   int64
	md5 []byte
}

var (
	// errNotFound is readObject's answer for a key the store does not hold.
	errNotFound = errors.New("no such object")
	// errChanged marks an object written again (or removed) since it was
	// listed: the store refused the listed ETag (412), sent another, or
	// no longer has it.
	errChanged = errors.New("written again since it was listed")
)

// readObject is every read of an object, Get's and fetch's: it copies key
// into w, never more than limit bytes (what says of what kind: "a run
// file"), within the store's read bounds (guard), and checks what it got:
//
//   - no more bytes than limit, said or sent: one byte past it is read
//     (the reply's bound is limit+1, withObjectBound) and refused by name;
//   - as many bytes as the store said it sent, when it said (a reply in
//     chunks says none);
//   - the MD5 of a plain ETag (an object written whole), when it sends one;
//   - for an object listed, the version listed: it asks for it by its
//     listed ETag (If-Match), so a store answers 412 for one written
//     again since, and one that ignores If-Match and sends another ETag is
//     refused the same way (errChanged, read no further); as many bytes as
//     listed, and the listed MD5.
//
// Every error names the store and the key (keyName); errNotFound when
// the store has no such key and none was listed.
func (s *Store) readObject(ctx context.Context, key string, want listedAs, limit int64, what string, w io.Writer) (objectRead, error) {
	name := keyName(key)
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%s: %s: "+format, append([]any{s.name, name}, args...)...)
	}
	if want.size > limit {
		return objectRead{}, bad("%d bytes is larger than the %d %s may be", want.size, limit, what)
	}
	g := s.guard(ctx, true)
	defer g.stop()
	opts := &blob.ReaderOptions{BeforeRead: func(as func(any) bool) error {
		var opts *[]func(*s3.Options)
		if as(&opts) {
			// The S3 client says nothing of an object stored without a
			// checksum (it would print a line for each, and most objects
			// are; the checks below are this read's).
			*opts = append(*opts, func(o *s3.Options) { o.DisableLogOutputChecksumValidationSkipped = true })
		}
		var in *s3.GetObjectInput
		if want.etag != "" && as(&in) {
			in.IfMatch = aws.String(want.etag)
		}
		return nil
	}}
	r, err := s.b.NewReader(withObjectBound(g.ctx, limit+1), key, opts)
	switch {
	case err == nil:
	case gcerrors.Code(err) == gcerrors.NotFound && want.size < 0:
		return objectRead{}, errNotFound
	case gcerrors.Code(err) == gcerrors.NotFound:
		return objectRead{}, bad("%w: the store no longer has it", errChanged)
	case preconditionFailed(err):
		return objectRead{}, bad("%w: the store no longer has the version listed (ETag %s)", errChanged, storeWords(want.etag))
	default:
		return objectRead{}, s.fail(name, g.why(err))
	}
	defer r.Close()
	said, sent := r.Size(), ""
	var out s3.GetObjectOutput
	if r.As(&out) {
		// A reply in chunks says no length: the driver's size is then 0.
		said, sent = -1, cleanETag(aws.ToString(out.ETag))
		if out.ContentLength != nil {
			said = *out.ContentLength
		}
	}
	switch {
	case said > limit:
		return objectRead{}, bad("%d bytes is larger than the %d %s may be", said, limit, what)
	case want.etag != "" && sent != "" && !sameETag(sent, want.etag):
		return objectRead{}, bad("%w: the store sent ETag %s, not the %s listed", errChanged, storeWords(sent), storeWords(want.etag))
	}
	h := md5.New()
	n, err := io.Copy(io.MultiWriter(w, h), io.LimitReader(guardedReader{r, g}, limit+1))
	if err != nil {
		return objectRead{}, s.fail(name, g.why(err))
	}
	sum := h.Sum(nil)
	switch md5Sent, plain := plainMD5(sent); {
	case n > limit:
		return objectRead{}, bad("larger than the %d bytes %s may be", limit, what)
	case said >= 0 && n != said:
		return objectRead{}, bad("the store said it sent %d bytes and sent %d", said, n)
	case plain && !bytes.Equal(md5Sent, sum):
		return objectRead{}, bad("the bytes sent have MD5 %x, not the %x their ETag says", sum, md5Sent)
	case want.size >= 0 && n != want.size:
		return objectRead{}, bad("listed as %d bytes, sent as %d", want.size, n)
	case len(want.md5) > 0 && !bytes.Equal(want.md5, sum):
		return objectRead{}, bad("listed with MD5 %x, the bytes sent have %x", want.md5, sum)
	}
	return objectRead{n: n, md5: sum}, nil
}

// preconditionFailed reports whether err is a store's 412: the version a
// read asked for (If-Match) is not the one it holds.
func preconditionFailed(err error) bool {
	if re, ok := errors.AsType[*awshttp.ResponseError](err); ok && re.HTTPStatusCode() == http.StatusPreconditionFailed {
		return true
	}
	return gcerrors.Code(err) == gcerrors.FailedPrecondition
}
