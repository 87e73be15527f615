package bucket

import (
	"bytes"
	"context"
	"crypto/md5"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"gocloud.dev/blob"

	"github.com/matrixgen/matrixgen/internal/term"
)

// Every read of a store goes through a guard (its time) and, for a
// listing, a listing (its length); an object fetched into a mirror goes
// through fetch (its bytes). What a store may do wrong is bounded there,
// once, whatever called.

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

// readOptions are every object read's: the S3 client says nothing of an
// object stored without a checksum (it would print a line for each, and
// most objects are; fetch checks size and MD5 itself).
var readOptions = &blob.ReaderOptions{BeforeRead: func(as func(any) bool) error {
	var opts *[]func(*s3.Options)
	if as(&opts) {
		*opts = append(*opts, func(o *s3.Options) { o.DisableLogOutputChecksumValidationSkipped = true })
	}
	return nil
}}

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

// listedETag is the ETag an S3 listing gives an object, or "".
func listedETag(obj *blob.ListObject) string {
	var o types.Object
	if obj.As(&o) {
		return aws.ToString(o.ETag)
	}
	return ""
}

// plainMD5 is the MD5 an ETag says, when it is one (an object written
// whole); a multipart upload's ETag ("…-3") is not.
func plainMD5(etag string) ([]byte, bool) {
	etag = strings.Trim(strings.TrimPrefix(etag, "W/"), `"`)
	sum, err := hex.DecodeString(etag)
	return sum, err == nil && len(sum) == md5.Size
}

// bounded keeps the first max lines of a list and counts the rest.
type bounded struct {
	max   int
	lines []string
	more  int
}

func (b *bounded) add(line string) {
	if len(b.lines) < b.max {
		b.lines = append(b.lines, line)
	} else {
		b.more++
	}
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
// its key's record in the mirror (size and MD5, or size and time; see
// fetchedFile) says so, or, without one, the file's bytes.
//
// Every key under the prefix is looked at, whatever the store makes of the
// listing's delimiter (not every S3-compatible store honours it). Names
// starting with a dot, and folders so named, are ignored, as a local runs
// folder's are; any other .json or .md key the build does not expect (in
// a folder below the top, a name no run id can have, the same name twice,
// a name the store's client would read as another) is skipped with a line
// saying why, never failing the build.
//
// What a store may do wrong is bounded (see Limits): a read that stalls
// fails after the idle time, naming its object; a listing too long, or
// one that loops, is refused; each object is read with the bound of its
// kind and checked against what the store says of it (see fetch) before
// it replaces the mirror's copy. An object that fails is reported with
// every other one that does (the first Limits.MaxReported, then a count;
// fetching stops there), and the build does not run.
func (s *Store) FetchRuns(ctx context.Context, dir string) (Fetched, error) {
	var f Fetched
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return f, err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	state := readFetched(dir)
	type job struct {
		obj  *blob.ListObject
		etag string // as listed; "" when the store lists none
	}
	var (
		todo     = make(chan job)
		workers  sync.WaitGroup
		mu       sync.Mutex
		failed   []error // the first MaxReported
		stopped  bool
		skipped  = bounded{max: s.limits.MaxReported}
		taken    = map[string]bool{}
		fetchErr = func(err error) {
			mu.Lock()
			defer mu.Unlock()
			if stopped {
				return // cut short by the stop below: not the object's fault
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
				if unchanged(was, known, local, obj) {
					continue
				}
				var st fetchedState
				var err error
				if sameFile(local, obj) {
					st, err = recordOf(local, fetchedState{size: obj.Size, md5: hex.EncodeToString(obj.MD5), mod: obj.ModTime})
				} else {
					st, err = s.fetch(ctx, obj, j.etag, local)
				}
				if err != nil {
					fetchErr(err)
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
					skipped.add(fmt.Sprintf("skipped %s in %s: its name holds text (__0xNN__) that the store's client reads as an escaped character, so it would be read as %s; rename it", term.Name(as), s.name, term.Name(name)))
				}
				continue
			}
			if obj.IsDir || !isRunKey(name) || strings.HasPrefix(name, ".") {
				continue
			}
			if why := unexpected(name, taken); why != "" {
				skipped.add(fmt.Sprintf("skipped %s in %s: %s", term.Name(name), s.name, why))
				continue
			}
			taken[name] = true
			if path.Ext(name) == ".json" {
				f.Runs = append(f.Runs, filepath.Join(dir, name))
			}
			select {
			case todo <- job{obj, listedETag(obj)}:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
	}()
	workers.Wait()
	f.Skipped = skipped.lines
	if skipped.more > 0 {
		f.Skipped = append(f.Skipped, fmt.Sprintf("skipped %d more keys in %s", skipped.more, s.name))
	}
	if len(failed) > 0 {
		slices.SortFunc(failed, func(a, b error) int { return strings.Compare(a.Error(), b.Error()) })
		if stopped {
			failed = append(failed, fmt.Errorf("fetching from %s stopped after %d objects failed; the others were not read", s.name, len(failed)))
		}
		return f, errors.Join(failed...)
	}
	if listErr != nil {
		return f, listErr
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if n := e.Name(); !e.IsDir() && !taken[n] && isRunKey(n) {
			os.Remove(filepath.Join(dir, n))
		}
	}
	slices.Sort(f.Runs)
	// Without its record the next call compares each file's bytes: slower,
	// not wrong.
	_ = writeFetched(dir, state, taken)
	return f, nil
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

// fetch copies an object into the file local, never holding more than its
// bound, and checks what it got before it replaces local: as many bytes
// as the store said it sent, with the MD5 of its ETag when that is one;
// and, when the object read is the one listed (the same ETag, or a store
// that sends none), as many bytes as listed with the MD5 listed. An
// object written again since the listing is taken as read. The record
// returned is of what was checked: the bytes' own size and MD5.
//
// An object larger than its bound (by the listing, or by what it turns
// out to hold), or one that fails a check, is an error naming it, and
// local is left as it was.
func (s *Store) fetch(ctx context.Context, obj *blob.ListObject, listedETag, local string) (fetchedState, error) {
	limit, what := boundOf(obj.Key)
	name := term.Name(obj.Key)
	if obj.Size > limit {
		return fetchedState{}, fmt.Errorf("%s: %s: %d bytes is larger than the %d %s may be", s.name, name, obj.Size, limit, what)
	}
	g := s.guard(ctx, true)
	defer g.stop()
	r, err := s.b.NewReader(g.ctx, obj.Key, readOptions)
	if err != nil {
		return fetchedState{}, s.fail(name, g.why(err))
	}
	defer r.Close()
	tmp, err := os.CreateTemp(filepath.Dir(local), ".fetch-*")
	if err != nil {
		return fetchedState{}, err
	}
	defer os.Remove(tmp.Name()) // after a rename, nothing
	h := md5.New()
	n, err := io.Copy(io.MultiWriter(tmp, h), io.LimitReader(guardedReader{r, g}, limit+1))
	if closeErr := tmp.Close(); err == nil {
		err = closeErr
	}
	switch {
	case err != nil:
		return fetchedState{}, s.fail(name, g.why(err))
	case n > limit:
		return fetchedState{}, fmt.Errorf("%s: %s: larger than the %d bytes %s may be", s.name, name, limit, what)
	}
	sum := h.Sum(nil)
	mod, err := s.check(obj, listedETag, r, n, sum)
	if err != nil {
		return fetchedState{}, err
	}
	if err := os.Rename(tmp.Name(), local); err != nil {
		return fetchedState{}, err
	}
	return recordOf(local, fetchedState{size: n, md5: hex.EncodeToString(sum), mod: mod})
}

// check is fetch's check of the n bytes with MD5 sum read from r, obj as
// listed; it gives the time to record of the version read.
func (s *Store) check(obj *blob.ListObject, listedETag string, r *blob.Reader, n int64, sum []byte) (time.Time, error) {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%s: %s: %s; the mirror's copy was kept", s.name, term.Name(obj.Key), fmt.Sprintf(format, args...))
	}
	if said := r.Size(); said >= 0 && n != said {
		return time.Time{}, bad("the store said it sent %d bytes and sent %d", said, n)
	}
	var out s3.GetObjectOutput
	sentETag := ""
	if r.As(&out) {
		sentETag = aws.ToString(out.ETag)
	}
	if want, ok := plainMD5(sentETag); ok && !bytes.Equal(want, sum) {
		return time.Time{}, bad("the bytes sent have MD5 %x, not the %x their ETag says", sum, want)
	}
	if sentETag != "" && listedETag != "" && sentETag != listedETag {
		// Written again since the listing: the version read is the newer.
		return r.ModTime(), nil
	}
	if n != obj.Size {
		return time.Time{}, bad("listed as %d bytes, sent as %d", obj.Size, n)
	}
	if len(obj.MD5) > 0 && !bytes.Equal(obj.MD5, sum) {
		return time.Time{}, bad("listed with MD5 %x, the bytes sent have %x", obj.MD5, sum)
	}
	return obj.ModTime, nil
}
