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

// What a store may do wrong is bounded once, whatever called: every read's
// time by a guard, a listing's length by listing, every object read by
// readObject, every reply by boundedReplies (reply.go).

// guard bounds one read: cancelled, with a cause saying why, after the
// store's Idle time without a byte, or its Object time for a whole object.
type guard struct {
	ctx           context.Context
	cancel        context.CancelCauseFunc
	idle          time.Duration
	idleT, wholeT *time.Timer
}

// guard starts a read's bound, of its total time too if whole; stop ends it.
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

// listing is one listing of a store, bounded in time (a page within the
// idle time) and length (keys and pages), and refused if a continuation
// token comes twice (it would loop).
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

// before is called before each request for a page, with the request,
// from within next's l.it.Next: l.g is set.
func (l *listing) before(as func(any) bool) error {
	l.g.progress()
	l.pages++
	if l.pages > l.s.limits.MaxPages {
		l.err = fmt.Errorf("the store's listing went on for more than %d pages; a runs folder needs far fewer", l.s.limits.MaxPages)
		return l.err
	}
	// ListObjectsV2 alone: openS3 never asks s3blob for the legacy listing.
	var in *s3.ListObjectsV2Input
	if as(&in) && in.ContinuationToken != nil {
		sum := sha256.Sum256([]byte(*in.ContinuationToken))
		k := [16]byte(sum[:16])
		if l.tokens[k] {
			l.err = fmt.Errorf("the store's listing repeated a continuation token (page %d): it would never end", l.pages)
			return l.err
		}
		l.tokens[k] = true
	}
	return nil
}

// next is the listing's next object, io.EOF at its end.
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

// stored is an object's name in the store where gocloud's driver lists it
// as another: S3's and a folder's read "__0xNN__" as the character NN (and
// would read the wrong object, or none). ok is false when the names agree
// or the driver does not say; a folder's is its base name.
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

// cleanETag is etag if it can be recorded and sent back (If-Match): at most
// maxETag bytes of printable ASCII; else "", as if the store gave none.
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

// sameETag reports whether two ETags, quoted or not, weak or not, agree.
func sameETag(a, b string) bool { return bareETag(a) == bareETag(b) }

// plainMD5 is the MD5 an ETag says, when it is one (an object written
// whole); a multipart upload's ETag ("…-3") is not.
func plainMD5(etag string) ([]byte, bool) {
	sum, err := hex.DecodeString(bareETag(etag))
	return sum, err == nil && len(sum) == md5.Size
}

// Fetched is what FetchRuns brought: the run files, sorted, and a line for
// each key it skipped (the first Limits.MaxReported, then a count).
type Fetched struct {
	Runs    []string
	Skipped []string
}

// FetchRuns makes dir hold the run files (<id>.json) and notes (<id>.md)
// at the top of the store as one listing saw them, whatever writers do
// meanwhile: only what changed is fetched (fetchedFile), what is no longer
// listed removed. The listing is streamed, its objects fetched as it goes,
// fetchesInFlight at once: memory holds names, never runs. Each object is
// read as listed (If-Match); when one was written since, the store is
// listed once more, and an object written again after that too is an
// error naming it.
//
// Every key under the prefix is looked at (not every store honours the
// delimiter). Dot names are ignored; any other .json or .md key a build
// does not expect (below the top, no run id, twice, twice but for case, a
// name the client would read as another) is skipped with a line saying
// why. Failed objects are reported together (Limits.MaxReported, where
// fetching stops, then a count), and the build does not run.
func (s *Store) FetchRuns(ctx context.Context, dir string) (Fetched, error) {
	if err := s.checkFolder(); err != nil {
		return Fetched{}, err
	}
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
		key, listed := p.listed[strings.ToLower(n)]
		// On a file system that ignores case, a name kept by the listing
		// in another case is the same file.
		if !e.IsDir() && key != n && isRunKey(n) && !(listed && sameEntry(dir, n, key)) {
			os.Remove(filepath.Join(dir, n))
		}
	}
	slices.Sort(p.f.Runs)
	// Without its record the next call compares bytes: slower, not wrong.
	_ = writeFetched(dir, state, p.listed)
	return p.f, nil
}

// pass is one listing's fetch: what it brought, the keys it kept (by their
// lower case), those written again since the listing, the failures.
type pass struct {
	f       Fetched
	listed  map[string]string
	changed []string
	err     error
}

// fetchPass lists the store once and fetches what changed into dir.
func (s *Store) fetchPass(ctx context.Context, dir string, state map[string]fetchedState) pass {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	p := pass{listed: map[string]string{}}
	var (
		todo    = make(chan *blob.ListObject)
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
	)
	for range fetchesInFlight {
		workers.Go(func() {
			for obj := range todo {
				local, etag := filepath.Join(dir, obj.Key), listedETag(obj)
				mu.Lock()
				was := state[obj.Key]
				mu.Unlock()
				st, err := was, error(nil)
				switch {
				case unchanged(was, local, obj, etag):
					// A record from before ETags were kept: the same
					// version, by its MD5 or time, now known by its ETag.
					st.etag = cmp.Or(was.etag, etag)
				case sameFile(local, obj):
					st, err = recordOf(local, obj, obj.MD5, etag)
				default:
					st, err = s.fetch(ctx, obj, etag, local)
				}
				mu.Lock()
				switch {
				case err == nil:
					state[obj.Key] = st
				case stopped: // cut short by the stop below: not the object's fault
				case errors.Is(err, errChanged):
					p.changed = append(p.changed, obj.Key)
				default:
					if failed = append(failed, err); len(failed) == s.limits.MaxReported {
						stopped = true
						cancel() // enough to say: the others are not read
					}
				}
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
			if why := unexpected(name, p.listed); why != "" {
				skip(keyName(name), why)
				continue
			}
			p.listed[strings.ToLower(name)] = name
			if path.Ext(name) == ".json" {
				p.f.Runs = append(p.f.Runs, filepath.Join(dir, name))
			}
			select {
			case todo <- obj:
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

// isRunKey reports whether a key names a run file or notes.
func isRunKey(key string) bool {
	ext := path.Ext(key)
	return ext == ".json" || ext == ".md"
}

// recordOf is the record of obj as fetched into local, its bytes' MD5 sum.
func recordOf(local string, obj *blob.ListObject, sum []byte, etag string) (fetchedState, error) {
	info, err := os.Lstat(local)
	if err != nil {
		return fetchedState{}, err
	}
	st := fetchedState{size: obj.Size, md5: hex.EncodeToString(sum), mod: obj.ModTime, file: info.ModTime()}
	st.etag = etag
	return st, nil
}

// fetch copies an object, as listed, through readObject into a temporary
// file that then replaces local, and records the bytes written and the
// ETag read under. On an error (errChanged included), naming the object,
// local is left as it was.
func (s *Store) fetch(ctx context.Context, obj *blob.ListObject, etag, local string) (fetchedState, error) {
	tmp, err := os.CreateTemp(filepath.Dir(local), ".fetch-*")
	if err != nil {
		return fetchedState{}, err
	}
	defer os.Remove(tmp.Name()) // after a rename, nothing
	sum, err := s.readObject(ctx, obj.Key, obj, etag, tmp)
	switch err = cmp.Or(err, tmp.Close()); {
	case errors.Is(err, errChanged):
		return fetchedState{}, err
	case err != nil:
		return fetchedState{}, fmt.Errorf("%w; the mirror's copy was kept", err)
	}
	if err := os.Rename(tmp.Name(), local); err != nil {
		return fetchedState{}, err
	}
	return recordOf(local, obj, sum, etag)
}

var (
	// errNotFound is readObject's answer for a key the store does not hold.
	errNotFound = errors.New("no such object")
	// errChanged marks an object written again (or removed) since it was
	// listed: a 412 on its listed ETag, another ETag, or no object.
	errChanged = errors.New("written again since it was listed")
)

// readObject is every read of an object: it copies key into w within the
// store's read bounds (guard) and checks it: at most its kind's bound
// (boundOf; maxGet for a key no listing named, obj nil), said or sent; as
// many as said; a plain ETag's MD5; and for an object listed, the version
// listed, asked for by its etag (If-Match; a 412 or another ETag is
// errChanged), its listed size and MD5. Every error names the store and
// the key; errNotFound for no such key unlisted. It returns the bytes' MD5.
func (s *Store) readObject(ctx context.Context, key string, obj *blob.ListObject, etag string, w io.Writer) ([]byte, error) {
	name := keyName(key)
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%s: %s: "+format, append([]any{s.name, name}, args...)...)
	}
	limit, what := int64(maxGet), "an object read whole"
	if obj != nil {
		limit, what = boundOf(key)
		if obj.Size > limit {
			return nil, bad("%d bytes is larger than the %d %s may be", obj.Size, limit, what)
		}
	}
	g := s.guard(ctx, true)
	defer g.stop()
	opts := &blob.ReaderOptions{BeforeRead: func(as func(any) bool) error {
		var opts *[]func(*s3.Options)
		if as(&opts) {
			// No line from the S3 client for each object stored without a
			// checksum (most are; this read makes its own checks).
			*opts = append(*opts, func(o *s3.Options) { o.DisableLogOutputChecksumValidationSkipped = true })
		}
		var in *s3.GetObjectInput
		if etag != "" && as(&in) {
			in.IfMatch = aws.String(etag)
		}
		return nil
	}}
	r, err := s.b.NewReader(withObjectBound(g.ctx, limit+1), key, opts)
	switch {
	case err == nil:
	case gcerrors.Code(err) == gcerrors.NotFound && obj == nil:
		return nil, errNotFound
	case gcerrors.Code(err) == gcerrors.NotFound:
		return nil, bad("%w: the store no longer has it", errChanged)
	case preconditionFailed(err):
		return nil, bad("%w: the store no longer has the version listed (ETag %s)", errChanged, storeWords(etag))
	default:
		return nil, s.fail(name, g.why(err))
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
		return nil, bad("%d bytes is larger than the %d %s may be", said, limit, what)
	case etag != "" && sent != "" && !sameETag(sent, etag):
		return nil, bad("%w: the store sent ETag %s, not the %s listed", errChanged, storeWords(sent), storeWords(etag))
	}
	h := md5.New()
	n, err := io.Copy(io.MultiWriter(w, h), io.LimitReader(guardedReader{r, g}, limit+1))
	if err != nil {
		return nil, s.fail(name, g.why(err))
	}
	sum := h.Sum(nil)
	switch md5Sent, plain := plainMD5(sent); {
	case n > limit:
		return nil, bad("larger than the %d bytes %s may be", limit, what)
	case said >= 0 && n != said:
		return nil, bad("the store said it sent %d bytes and sent %d", said, n)
	case plain && !bytes.Equal(md5Sent, sum):
		return nil, bad("the bytes sent have MD5 %x, not the %x their ETag says", sum, md5Sent)
	case obj != nil && n != obj.Size:
		return nil, bad("listed as %d bytes, sent as %d", obj.Size, n)
	case obj != nil && len(obj.MD5) > 0 && !bytes.Equal(obj.MD5, sum):
		return nil, bad("listed with MD5 %x, the bytes sent have %x", obj.MD5, sum)
	}
	return sum, nil
}

// preconditionFailed reports whether err is a 412: not the version asked for.
func preconditionFailed(err error) bool {
	if re, ok := errors.AsType[*awshttp.ResponseError](err); ok && re.HTTPStatusCode() == http.StatusPreconditionFailed {
		return true
	}
	return gcerrors.Code(err) == gcerrors.FailedPrecondition
}
