package site

import (
	"bufio"
	"bytes"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"debug/elf"
	"encoding/gob"
	"encoding/hex"
	"fmt"
	"io"
	"iter"
	"os"
	"path/filepath"
	"sync"

	"github.com/matrixgen/matrixgen"
	"github.com/matrixgen/matrixgen/internal/regular"
	"github.com/matrixgen/matrixgen/internal/term"
	"github.com/matrixgen/matrixgen/render"
	"github.com/matrixgen/matrixgen/runfile"
)

// A build reuses the pages of runs whose inputs (run file, notes, the
// site's settings, matrixgen's executable) did not change since the old
// site: their folders linked into the new one and their summaries taken
// from the old site's cache, the same bytes a full build writes.
//
// Anyone who can write the site can write the cache, which may speed a
// build up, never change what it publishes: so it is signed (HMAC-SHA256)
// with a key of this user's that never leaves this machine, and records a
// hash of each page, checked before the page is linked.

// cacheFile is the previous build's cache, at the site's root.
const cacheFile = ".matrixgen-cache"

// The cache is a stream of gobs, signed: a cacheHeader, then each run's
// render.CachedRun in id order (so two builds agree), one at a time, so
// the whole list is never held twice.

// cacheHeader begins the cache file.
type cacheHeader struct {
	Key  string
	Runs int
}

// executableHash identifies the running program's bytes (code and
// templates): its Go build ID, a few kilobytes read where hashing the
// 40 MB program cost 25 ms, or else the hash of the whole file.
var executableHash = sync.OnceValue(func() string {
	name, err := os.Executable()
	if err != nil {
		return ""
	}
	f, err := os.Open(name)
	if err != nil {
		return ""
	}
	defer f.Close()
	if id := goBuildID(f); id != "" {
		return "go-build-id:" + id
	}
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return ""
	}
	return hex.EncodeToString(h.Sum(nil))
})

// goBuildID reads a Go program's build ID, or "".
func goBuildID(f *os.File) string {
	if e, err := elf.NewFile(f); err == nil {
		if s := e.Section(".note.go.buildid"); s != nil {
			// One note: name size, description size, type (4), "Go\0\0", the ID.
			if note, err := s.Data(); err == nil && len(note) > 16 && string(note[12:16]) == "Go\x00\x00" {
				if size := int(e.ByteOrder.Uint32(note[4:])); 16+size <= len(note) {
					return string(note[16 : 16+size])
				}
			}
		}
		return ""
	}
	head := make([]byte, 32<<10)
	n, _ := f.ReadAt(head, 0) // not moving the offset the whole file's hash reads from
	const marker = "\xff Go build ID: \""
	_, after, hasMarker := bytes.Cut(head[:n], []byte(marker))
	id, _, ended := bytes.Cut(after, []byte{'"'})
	if !hasMarker || !ended {
		return ""
	}
	return string(id)
}

// reuseKey is what every run page depends on beside its run: matrixgen and
// the site's settings; "" when pages cannot be reused (templates on disk,
// or matrixgen unknown).
func reuseKey(site render.Site) string {
	exe := executableHash()
	if exe == "" || site.Assets != nil {
		return ""
	}
	h := sha256.New()
	for _, part := range []string{exe, matrixgen.Version, site.Title, site.Description, site.BaseURL, fmt.Sprint(site.PublishServerAddress)} {
		h.Write([]byte(part))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))
}

// maxCacheBytes bounds the cache a build reads: 100,000 runs' is ~60 MB.
const maxCacheBytes = 256 << 20

// loadReuse reads the runs, by id, of the cache of the site at out, if
// its key is key and it is signed with secret.
func loadReuse(out, key string, secret []byte) map[string]render.CachedRun {
	if key == "" || secret == nil {
		return nil
	}
	name := filepath.Join(out, cacheFile)
	f, info, err := regular.OpenEntry(name)
	if err != nil {
		return nil
	}
	signed, err := regular.Read(f, info, maxCacheBytes, term.Name(name), "a reuse cache")
	if err != nil || len(signed) < sha256.Size {
		return nil
	}
	data, sig := signed[:len(signed)-sha256.Size], signed[len(signed)-sha256.Size:]
	mac := hmac.New(sha256.New, secret)
	mac.Write(data)
	if !hmac.Equal(sig, mac.Sum(nil)) {
		return nil // not a cache this user's builds wrote: build everything
	}
	dec := gob.NewDecoder(bytes.NewReader(data))
	var head cacheHeader
	if dec.Decode(&head) != nil || head.Key != key || head.Runs < 0 || head.Runs > len(data) {
		return nil
	}
	runs := make(map[string]render.CachedRun, head.Runs)
	for range head.Runs {
		var r render.CachedRun
		if dec.Decode(&r) != nil {
			return nil // cut short: build everything
		}
		runs[r.ID] = r
	}
	return runs
}

// cacheSecret is this user's key for signing caches, made on first use in
// ~/.cache/matrixgen/reuse-key, readable by this user alone; nil without
// a cache folder.
var cacheSecret = sync.OnceValue(func() []byte {
	dir, err := os.UserCacheDir()
	if err != nil {
		return nil
	}
	name := filepath.Join(dir, "matrixgen", "reuse-key")
	read := func() []byte {
		if key, err := os.ReadFile(name); err == nil && len(key) == 32 {
			return key
		}
		return nil
	}
	if key := read(); key != nil {
		return key
	}
	key := make([]byte, 32)
	rand.Read(key)
	if err := os.MkdirAll(filepath.Dir(name), 0o700); err != nil {
		return nil
	}
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return read() // another build made it meanwhile: its key is the one
	}
	_, err = f.Write(key)
	if closeErr := f.Close(); err != nil || closeErr != nil {
		os.Remove(name)
		return nil
	}
	return key
})

// reuse is the reuse cache of a build into dest.
type reuse struct {
	key    string
	secret []byte // signs the cache (cacheSecret)
	// previous are the old site's cached runs, by id.
	previous map[string]render.CachedRun
	dest     *folder
}

// newReuse is the reuse cache of a build into dest, or nil.
func newReuse(site render.Site, dest *folder) render.Cache {
	c := &reuse{key: reuseKey(site), secret: cacheSecret(), dest: dest}
	if c.key == "" || c.secret == nil {
		return nil // a nil interface, not a nil *reuse: render tells no cache by it
	}
	if dest.previous != "" {
		c.previous = loadReuse(dest.previous, c.key, c.secret)
	}
	return c
}

// Reuse links a run's folder from the old site into the new one when its
// inputs and files are those the cache recorded, and gives its summary;
// false when it must be built.
func (c *reuse) Reuse(e runfile.Entry) (string, render.CachedRow, bool) {
	h := sha256.New() // of the run's file and notes
	h.Write(e.Raw)
	h.Write([]byte{0})
	h.Write(e.Notes)
	input := hex.EncodeToString(h.Sum(nil))
	r, ok := c.previous[e.ID]
	if !ok || r.Input != input {
		return input, render.CachedRow{}, false
	}
	old, folder := filepath.Join(c.dest.previous, "runs", e.ID), filepath.Join(c.dest.dir, "runs", e.ID)
	if err := os.MkdirAll(folder, 0o755); err != nil {
		return input, render.CachedRow{}, false
	}
	for i, name := range render.RunFiles {
		size, ok := fileHasSum(filepath.Join(old, name), r.Row.Sums[i])
		c.dest.cache.done(filepath.Join(old, name), size)
		if !ok || !linkRegular(filepath.Join(old, name), filepath.Join(folder, name)) {
			os.RemoveAll(folder)
			return input, render.CachedRow{}, false
		}
	}
	return input, r.Row, true
}

// Save writes the cache, signed, for the next build.
func (c *reuse) Save(n int, runs iter.Seq[render.CachedRun]) error {
	f, err := c.dest.Create(cacheFile)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 256<<10)
	mac := hmac.New(sha256.New, c.secret)
	enc := gob.NewEncoder(io.MultiWriter(w, mac))
	err = enc.Encode(cacheHeader{Key: c.key, Runs: n})
	for r := range runs {
		if err != nil {
			break
		}
		err = enc.Encode(r)
	}
	if err == nil {
		_, err = w.Write(mac.Sum(nil))
	}
	if err == nil {
		err = w.Flush()
	}
	if err != nil {
		f.Abort()
		return err
	}
	return f.Close()
}

// fileHasSum reports whether regular file name hashes to sum, and its size.
func fileHasSum(name string, sum [sha256.Size]byte) (int64, bool) {
	f, _, err := regular.OpenEntry(name) // a link, however it resolves, is not a page of ours
	if err != nil {
		return 0, false
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	return n, err == nil && bytes.Equal(h.Sum(nil), sum[:])
}

// linkRegular links a regular file of the old site into the new one, and
// reports whether it did: a symbolic link, even one swapped in meanwhile,
// is refused (os.Link on Linux would link the link, pointing out).
func linkRegular(old, name string) bool {
	before, err := os.Lstat(old)
	if err != nil || !before.Mode().IsRegular() {
		return false
	}
	if os.Link(old, name) != nil {
		return false
	}
	after, err := os.Lstat(name)
	if err != nil || !after.Mode().IsRegular() || !os.SameFile(before, after) {
		os.Remove(name)
		return false
	}
	return true
}
