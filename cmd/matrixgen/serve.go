package main

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/matrixgen/matrixgen/bucket"
	"github.com/matrixgen/matrixgen/config"
	"github.com/matrixgen/matrixgen/internal/plural"
	"github.com/matrixgen/matrixgen/internal/regular"
	"github.com/matrixgen/matrixgen/render"
	"github.com/matrixgen/matrixgen/runfile"
	"github.com/matrixgen/matrixgen/site"
)

var serveCommand = command{
	summary: "build, serve on localhost, rebuild on changes and reload open pages",
	usage: `
Usage: matrixgen serve [options]

Builds the site into the output folder (public, as build does: a site
build made there is built over, reusing the pages of unchanged runs),
serves it on 127.0.0.1:1313, and keeps it up to date whenever a run file,
a note or the config changes (and a template or static file, when run in a
checkout of matrixgen, from its templates/ and static/). A changed run
rewrites only its pages and the page of the index it is on; runs.csv is
then made on request and removed from the folder, so run build before
publishing the folder. Open pages reload themselves after each rebuild. A
failed rebuild keeps serving the last good site and prints every bad file
on stderr. Ctrl-C (or SIGTERM) stops it at once, a build in progress
included.
`,
	examples: `
  matrixgen serve
  matrixgen serve -addr 127.0.0.1:8080 -runs runs
`,
	flags: func(fs *flag.FlagSet) func([]string, io.Writer, io.Writer) error {
		addr := fs.String("addr", "127.0.0.1:1313", "`host:port` to serve on")
		runs := fs.String("runs", "runs", "`place` of the run files: a folder, or a bucket URL such as s3://lab/runs/")
		out := fs.String("o", "public", "`folder` to build the site into and serve")
		cfgFile := configFlag(fs)
		return func(args []string, stdout, stderr io.Writer) error {
			if err := checkPlaces(*runs); err != nil {
				return err
			}
			_, port, err := net.SplitHostPort(*addr)
			if n, nerr := strconv.Atoi(port); err != nil || nerr != nil || n < 0 || n > 65535 { // 0: any port
				return usagef("-addr: want host:port with a port from 0 to 65535 (127.0.0.1:1313, or :1313 for every address), not %q", *addr)
			}
			ctx, stop := interruptible()
			defer stop()
			ln, err := net.Listen("tcp", *addr)
			if err != nil {
				return err
			}
			defer ln.Close()
			s := &server{runs: *runs, out: *out, cfgFile: *cfgFile.name, cfgNamed: cfgFile.named(), log: stdout, errLog: stderr}
			if bucket.IsURL(*runs) { // mirrored into a local folder, polled
				store, err := bucket.Open(ctx, *runs)
				if err != nil {
					return err
				}
				defer store.Close()
				dir, err := os.MkdirTemp("", "matrixgen-serve-runs-")
				if err != nil {
					return err
				}
				defer os.RemoveAll(dir)
				s.runs = dir
				s.mirror = newBucketMirror(store, dir, stdout)
				if err := s.mirror.fetch(ctx); err != nil {
					return err
				}
				if err := s.mirror.swapIn(); err != nil {
					return err
				}
			}
			return s.serve(ctx, ln, 500*time.Millisecond)
		}
	},
}

func flagSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// server is `matrixgen serve`: a build, a file server, a watcher.
type server struct {
	runs, out, cfgFile string
	cfgNamed           bool
	log                io.Writer       // what it did
	errLog             io.Writer       // what failed; log when nil
	version            atomic.Int64    // bumped by every good build; pages poll it
	mu                 sync.Mutex      // one build at a time
	ctx                context.Context // ends serve, and a build in progress
	// current is the site as last built, updated in place when only runs
	// change; nil until a full build succeeds.
	current atomic.Pointer[site.Live]
	mirror  *bucketMirror // for runs in a bucket, polled by pollBucket
	broken  atomic.Bool   // the last build or update failed
}

// mended is what a good build or update adds to its line after a failed
// one: the person who fixed a file sees the fix took.
func (s *server) mended() string {
	if s.broken.Swap(false) {
		return "; the build works again, serving the site as built now"
	}
	return ""
}

// liveAssets are templates/ and static/ from disk when serve runs in
// matrixgen's own checkout, so their edits show at once; nil elsewhere,
// where folders of those names are someone else's.
func liveAssets() *render.Assets {
	mod, err := os.ReadFile("go.mod")
	first, _, _ := strings.Cut(string(mod), "\n")
	if err != nil || !slices.Equal(strings.Fields(first), []string{"module", "github.com/matrixgen/matrixgen"}) {
		return nil
	}
	for _, d := range liveAssetDirs {
		if info, err := os.Stat(d); err != nil || !info.IsDir() {
			return nil
		}
	}
	return &render.Assets{Templates: os.DirFS("templates"), Static: os.DirFS("static")}
}

// mirrorEvery is how often serve checks a bucket's runs for changes.
var mirrorEvery = 5 * time.Second

// liveAssetDirs are where a checkout keeps the templates and static files.
var liveAssetDirs = []string{"templates", "static"}

// build builds the site whole (whole, or before a first good build) or, after
// runs or notes changed, rewrites only the pages they touch; false when it failed.
func (s *server) build(whole bool) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	start, live := time.Now(), s.current.Load()
	whole = whole || live == nil
	var cfg config.Config
	var files []string
	var stats render.Stats
	var err error
	if whole {
		cfg, err = config.Load(s.cfgFile, !s.cfgNamed)
	}
	if err == nil {
		files, err = runfile.Files(s.runs)
	}
	done, note := "updated %s of %s", ""
	switch {
	case err == nil && whole:
		settings := renderSite(cfg.Site)
		settings.BaseURL, settings.Assets = "", liveAssets() // served here, not where it will be published
		if live, stats, err = site.NewLive(s.ctx, files, settings, s.out); err == nil {
			s.current.Store(live)
		}
		done, note = "built %s from %s", reusedNote(stats)
	case err == nil:
		stats, err = live.Update(files)
	}
	switch {
	case err == nil:
		s.version.Add(1)
		fmt.Fprintf(s.log, done+" in %s%s%s\n", plural.Count(stats.Pages, "page", "pages"),
			plural.Count(stats.Runs, "run", "runs"), took(start), note, s.mended())
		sayHidden(s.log, stats)
		return true
	case whole && s.ctx.Err() != nil:
		return false // stopped: no failure to tell
	}
	s.failed(err)
	return false
}

func (s *server) failed(err error) {
	if bad, ok := errors.AsType[*render.BadRunsError](err); ok {
		err = indent(errors.Join(bad.Errs...))
	}
	s.broken.Store(true)
	fmt.Fprintf(cmp.Or(s.errLog, s.log), "build failed; still serving the last good site:\n%v\n", err)
}

// fingerprint is the size and time of every file a build reads: the runs
// and their notes, and apart, what needs a whole build.
func (s *server) fingerprint() (runs, site string) {
	var b strings.Builder
	add := func(p string) {
		if info, err := os.Stat(p); err == nil {
			fmt.Fprintf(&b, "%s %d %d\n", p, info.Size(), info.ModTime().UnixNano())
		}
	}
	for _, pattern := range []string{"*.json", "*.md"} {
		names, _ := filepath.Glob(filepath.Join(s.runs, pattern))
		for _, n := range names {
			if !strings.HasPrefix(filepath.Base(n), ".") { // not runs, as the build says
				add(n)
			}
		}
	}
	runs = b.String()
	b.Reset()
	add(s.cfgFile)
	if liveAssets() != nil {
		for _, d := range liveAssetDirs {
			filepath.WalkDir(d, func(p string, e fs.DirEntry, err error) error {
				if err == nil && !e.IsDir() {
					add(p)
				}
				return nil
			})
		}
	}
	return runs, b.String()
}

func (s *server) serve(ctx context.Context, ln net.Listener, poll time.Duration) error {
	s.ctx = ctx
	if !s.build(true) && ctx.Err() == nil && !site.IsSite(s.out) {
		// -o / must not put the machine's files on the network.
		return fmt.Errorf("no site to serve: the build failed and %s holds no site matrixgen built", s.out)
	}
	if ctx.Err() != nil {
		return nil // stopped while building
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /__matrixgen/version", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Cache-Control", "no-store")
		w.Write([]byte(strconv.FormatInt(s.version.Load(), 10)))
	})
	mux.Handle("/", s.live(s.siteCSV(siteFiles(s.out))))
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	fmt.Fprintf(s.log, "serving http://%s/ (Ctrl-C to stop)\n", ln.Addr())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	if s.mirror != nil {
		polls, stopPolling := context.WithCancel(ctx)
		var polling sync.WaitGroup
		polling.Go(func() { s.pollBucket(polls) })
		defer polling.Wait() // after stopPolling: a poll in flight ends with its context
		defer stopPolling()
	}
	lastRuns, lastSite := s.fingerprint()
	tick := time.NewTicker(poll)
	defer tick.Stop()
	for {
		select {
		case err := <-done:
			return err
		case <-ctx.Done():
			// Open pages hold idle connections, closed at once; a
			// download in progress gets a moment to end, then is cut.
			shutdown, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
			defer cancel()
			if srv.Shutdown(shutdown) != nil {
				srv.Close()
			}
			if live := s.current.Load(); live != nil && live.CSVGone() {
				fmt.Fprintf(s.log, "%s lacks runs.csv, served on request while runs changed: run matrixgen build before publishing it\n", s.out)
			}
			return nil
		case <-tick.C:
			runs, settings := s.fingerprint()
			switch {
			case settings != lastSite:
				s.build(true)
			case runs != lastRuns:
				s.build(false)
			}
			lastRuns, lastSite = runs, settings
		}
	}
}

// live marks HTML pages as served live, so the site script polls for new
// builds and reloads. The mark is a meta element, not a script: pages keep
// their Content-Security-Policy. Pages are marked as they pass, never held whole.
func (s *server) live(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasSuffix(r.URL.Path, "/") && !strings.HasSuffix(r.URL.Path, ".html") {
			if strings.HasPrefix(r.URL.Path, "/assets/index/") || strings.HasPrefix(r.URL.Path, "/assets/compared/") {
				// These change as runs do: a page reloaded must not read old ones.
				w.Header().Set("Cache-Control", "no-store")
			}
			next.ServeHTTP(w, r)
			return
		}
		// A page changes on its way: a part asked for by offsets would be wrong.
		r.Header.Del("Range")
		w.Header().Set("Cache-Control", "no-store")
		m := &marker{ResponseWriter: w}
		next.ServeHTTP(m, r)
		m.finish()
	})
}

// headEnd is what the live mark goes before, and markSearch how far into a
// page it is looked for: every page's head ends in its first kilobytes.
var headEnd = []byte("</head>")

const (
	liveMeta   = `<meta name="matrixgen-live" content="/__matrixgen/version">` + "\n"
	markSearch = 64 << 10
)

// marker passes a response on, adding the live mark before the first
// </head> of an HTML page that starts within markSearch bytes. It holds
// back only the last bytes of each write that could begin a </head>.
type marker struct {
	http.ResponseWriter
	started, marking bool
	at               int    // how many bytes of the page were passed on
	held             []byte // the bytes held back, at most len(headEnd)-1
}

func (m *marker) WriteHeader(status int) {
	if !m.started {
		m.started = true
		if status == http.StatusOK && strings.HasPrefix(m.Header().Get("Content-Type"), "text/html") {
			m.marking = true
			m.Header().Del("Content-Length")
		}
	}
	m.ResponseWriter.WriteHeader(status)
}

func (m *marker) Write(b []byte) (int, error) {
	if !m.started {
		m.WriteHeader(http.StatusOK)
	}
	if !m.marking {
		return m.ResponseWriter.Write(b)
	}
	data := append(m.held, b...)
	keep := min(len(headEnd)-1, len(data))
	if i := bytes.Index(data, headEnd); i >= 0 && m.at+i < markSearch {
		m.marking = false
		data, keep = slices.Insert(data, i, []byte(liveMeta)...), 0 // data is a copy
	} else if m.at+len(data)-keep >= markSearch { // no </head> can start in time now
		m.marking, keep = false, 0
	}
	m.at += len(data) - keep
	m.held = append([]byte(nil), data[len(data)-keep:]...)
	_, err := m.ResponseWriter.Write(data[:len(data)-keep])
	return len(b), err
}

// finish sends what was held back at the end of a page without a mark.
func (m *marker) finish() {
	if len(m.held) > 0 {
		m.ResponseWriter.Write(m.held)
	}
}

// siteFiles serves the site in dir: only regular files and folders that
// resolve inside it, never a name starting with a dot (the site's marker, a
// kept .git folder); a folder's listing shows only what may be served. The
// folder is opened for each request: a build swaps a new one in.
func siteFiles(dir string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		root, err := os.OpenRoot(dir)
		if err != nil {
			http.Error(w, "no site", http.StatusServiceUnavailable)
			return
		}
		defer root.Close()
		files := siteFS{root}
		if clean := path.Clean("/" + r.URL.Path); path.Base(clean) == "index.html" {
			// The file server redirects …/index.html to …/; a page's own
			// address is the file's, so it is answered as the folder's.
			info, err := fs.Stat(files, strings.TrimPrefix(clean, "/"))
			if err != nil || !info.Mode().IsRegular() {
				http.NotFound(w, r)
				return
			}
			r = r.Clone(r.Context())
			r.URL.Path = strings.TrimSuffix(clean, "index.html")
		}
		http.FileServerFS(files).ServeHTTP(w, r)
	})
}

// siteFS is a site's folder as serve may show it.
type siteFS struct{ root *os.Root }

func (s siteFS) Open(name string) (fs.File, error) {
	notFound := &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
	if !fs.ValidPath(name) || hasDotPart(name) {
		return nil, notFound
	}
	// Opened once, without waiting, following links only inside the root;
	// what was opened is what is checked.
	f, info, err := regular.Open(s.root, name)
	switch {
	case err != nil:
		return nil, notFound
	case info.IsDir():
		return servedDir{f}, nil
	case info.Mode().IsRegular():
		return f, nil
	}
	f.Close()
	return nil, notFound
}

// servedDir lists only the entries siteFS would open.
type servedDir struct{ *os.File }

func (d servedDir) ReadDir(n int) ([]fs.DirEntry, error) {
	entries, err := d.File.ReadDir(n)
	return slices.DeleteFunc(entries, func(e fs.DirEntry) bool {
		return strings.HasPrefix(e.Name(), ".") || !e.Type().IsRegular() && !e.IsDir()
	}), err
}

func hasDotPart(name string) bool {
	return slices.ContainsFunc(strings.Split(name, "/"), func(part string) bool { return strings.HasPrefix(part, ".") && part != "." })
}

// siteCSV answers runs.csv and its parts by month from the live site, made
// on request (an update would rewrite the whole file), the rest from next.
func (s *server) siteCSV(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		live := s.current.Load()
		name := strings.TrimPrefix(r.URL.Path, "/")
		if live == nil || r.Method != http.MethodGet || !isSiteCSV(name) {
			next.ServeHTTP(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/csv; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		body := &counted{w: w}
		ok, err := live.SiteCSV(body, name)
		switch {
		case !ok:
			http.NotFound(w, r)
		case err != nil && body.n == 0:
			http.Error(w, "runs.csv could not be made: "+err.Error(), http.StatusInternalServerError)
		case err != nil:
			// Cut the response, so the download fails rather than looks whole.
			panic(http.ErrAbortHandler)
		}
	})
}

// isSiteCSV reports whether name is runs.csv or one of its parts by month.
func isSiteCSV(name string) bool {
	return name == "runs.csv" || strings.HasPrefix(name, "runs-") && strings.HasSuffix(name, ".csv") && !strings.Contains(name, "/")
}

// counted counts what it passed on.
type counted struct {
	w io.Writer
	n int64
}

func (c *counted) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}
