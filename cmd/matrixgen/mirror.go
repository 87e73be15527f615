package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/matrixgen/matrixgen/bucket"
	"github.com/matrixgen/matrixgen/internal/term"
)

// bucketMirror is serve's local folder of a bucket's runs. Each poll
// fetches into stagingFolder inside it, and only a poll that fetched
// everything swaps its files in: never a mix of two listings.
type bucketMirror struct {
	store *bucket.Store
	dir   string
	log   io.Writer
	// said are the skipped keys' lines of the last poll: a line is said when
	// it first appears, and again only after a poll without it.
	said map[string]bool
}

// stagingFolder is where a poll fetches: a dot name, which a build passes over.
const stagingFolder = ".fetch"

func newBucketMirror(store *bucket.Store, dir string, log io.Writer) *bucketMirror {
	return &bucketMirror{store: store, dir: dir, log: log, said: map[string]bool{}}
}

// fetch brings the staging folder up to date with the bucket.
func (m *bucketMirror) fetch(ctx context.Context) error {
	fetched, err := m.store.FetchRuns(ctx, filepath.Join(m.dir, stagingFolder))
	said := make(map[string]bool, len(fetched.Skipped))
	for _, line := range fetched.Skipped {
		if !m.said[line] {
			fmt.Fprintln(m.log, term.Clean(line))
		}
		said[line] = true
	}
	m.said = said
	return err
}

// swapIn makes the mirror hold the staging folder's runs and notes: each
// file that differs linked in (or copied) under a temporary name and
// renamed over the old, each the staging folder no longer has removed.
// FetchRuns replaces files by renaming too, so a linked file never changes.
func (m *bucketMirror) swapIn() error {
	staging := filepath.Join(m.dir, stagingFolder)
	entries, err := os.ReadDir(staging)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if !runsFile(e) {
			continue
		}
		name := e.Name()
		from, to := filepath.Join(staging, name), filepath.Join(m.dir, name)
		if sameFile(from, to) {
			continue
		}
		tmp := filepath.Join(m.dir, ".swap-"+name)
		os.Remove(tmp)
		if err := os.Link(from, tmp); err != nil {
			if err := copyInto(from, tmp); err != nil {
				return err
			}
		}
		if err := os.Rename(tmp, to); err != nil {
			os.Remove(tmp)
			return err
		}
	}
	entries, err = os.ReadDir(m.dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		name := e.Name()
		if !runsFile(e) {
			continue
		}
		// Looked up by the file system: where it ignores case, a name the
		// staging folder holds in another case is kept.
		if _, err := os.Lstat(filepath.Join(staging, name)); errors.Is(err, fs.ErrNotExist) {
			if err := os.Remove(filepath.Join(m.dir, name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return err
			}
		}
	}
	return nil
}

// runsFile reports whether e is a run file or notes a build reads.
func runsFile(e fs.DirEntry) bool {
	ext := filepath.Ext(e.Name())
	return e.Type().IsRegular() && !strings.HasPrefix(e.Name(), ".") && (ext == ".json" || ext == ".md")
}

func sameFile(a, b string) bool {
	ia, errA := os.Lstat(a)
	ib, errB := os.Lstat(b)
	return errA == nil && errB == nil && os.SameFile(ia, ib)
}

func copyInto(from, to string) error {
	src, err := os.Open(from)
	if err != nil {
		return err
	}
	defer src.Close()
	dst, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	_, err = io.Copy(dst, src)
	if closeErr := dst.Close(); err == nil {
		err = closeErr
	}
	if err != nil {
		os.Remove(to)
	}
	return err
}

// pollBucket mirrors the bucket every mirrorEvery until ctx ends, in its
// own goroutine: a slow store holds neither the rebuilds nor the site.
func (s *server) pollBucket(ctx context.Context) {
	tick := time.NewTicker(mirrorEvery)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			s.pollOnce(ctx)
		}
	}
}

// pollOnce fetches the bucket's runs and, when every one was fetched,
// swaps them into the mirror while no build reads it.
func (s *server) pollOnce(ctx context.Context) error {
	err := s.mirror.fetch(ctx)
	if err == nil {
		s.mu.Lock()
		err = s.mirror.swapIn()
		s.mu.Unlock()
	}
	if err != nil && ctx.Err() == nil {
		fmt.Fprintf(cmp.Or(s.errLog, s.log), "reading the bucket's runs failed; still serving the last good site:\n%s\n", term.Clean(indent(err).Error()))
	}
	return err
}
