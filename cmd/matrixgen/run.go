package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"github.com/matrixgen/matrixgen/bucket"
	"io"
	"net/url"
	"os"
	"os/signal"
	"path"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/matrixgen/matrixgen"
	"github.com/matrixgen/matrixgen/config"
	"github.com/matrixgen/matrixgen/runner"
)

var runCommand = command{
	summary: "measure a running inference server and write a run file",
	usage: `
Usage: matrixgen run [options]

Probes the OpenAI-compatible server at [server] base_url, then measures
prefill at each context and sustained decode for each context × concurrency
cell of the sweep in matrixgen.toml, saving the run file after every
measurement. Ctrl-C stops within seconds and keeps what was measured;
-resume continues an interrupted run, re-running only missing or failed
cells. The API key is read from the variable [server] api_key_env names and
is never written anywhere.

Examples:
  matrixgen run
  matrixgen run -base-url http://127.0.0.1:8000 -contexts 8K,32K -concurrency 1,8 -duration 10s
  matrixgen run -resume runs/20261202-170000-nemotron.json
  matrixgen run -set sweep.cache_mode=distinct -set 'describe.gpu="RTX 4090"'

`,
	flags: func(fs *flag.FlagSet) func([]string, io.Writer) error {
		cfgFile := fs.String("config", config.DefaultFile, "configuration `file`; the default may be absent")
		out := fs.String("o", "", "run `file` to write (default runs/<date>-<model>.json), or a bucket URL s3://lab/runs/ to copy it to after every save")
		resume := fs.String("resume", "", "continue the run in this `file` (a local one, or one in a bucket: s3://lab/runs/<id>.json)")
		force := fs.Bool("force", false, "with -resume: continue even against another server, model or settings, recording the differences in the run")
		baseURL := fs.String("base-url", "", "server `URL` (overrides [server] base_url)")
		model := fs.String("model", "", "served `model` (overrides [server] model)")
		keyEnv := fs.String("api-key-env", "", "`variable` holding the API key (overrides [server] api_key_env)")
		contexts := fs.String("contexts", "", "comma-separated `contexts`, e.g. 8K,32K,max (overrides [sweep] contexts)")
		concurrency := fs.String("concurrency", "", "comma-separated `levels`, e.g. 1,8,64 (overrides [sweep] concurrency)")
		prefill := fs.String("prefill-contexts", "", "comma-separated prefill `contexts` (overrides [sweep] prefill_contexts)")
		duration := fs.Duration("duration", 0, "decode window per cell (overrides [sweep] duration)")
		maxOutput := fs.Int("max-output", 0, "max output `tokens` per request (overrides [sweep] max_output)")
		kv := fs.Int("kv-cache-tokens", 0, "KV capacity in `tokens` (overrides what the probe finds)")
		var sets listFlag
		fs.Var(&sets, "set", "override any config key, `section.key=value` (repeatable), e.g. -set sweep.cache_mode=distinct")
		return func(args []string, stdout io.Writer) error {
			if len(args) > 0 {
				return fmt.Errorf("unexpected arguments %q", args)
			}
			cfg, err := loadConfig(fs, *cfgFile)
			if err != nil {
				return err
			}
			override(&cfg.Server.BaseURL, *baseURL)
			override(&cfg.Server.Model, *model)
			override(&cfg.Server.APIKeyEnv, *keyEnv)
			if *contexts != "" {
				cfg.Sweep.Contexts = splitList(*contexts)
			}
			if *prefill != "" {
				cfg.Sweep.PrefillContexts = splitList(*prefill)
			}
			if *concurrency != "" {
				if cfg.Sweep.Concurrency, err = intList(*concurrency); err != nil {
					return fmt.Errorf("-concurrency: %w", err)
				}
			}
			if *duration != 0 {
				cfg.Sweep.Duration.Duration = *duration
			}
			if *maxOutput != 0 {
				cfg.Sweep.MaxOutput = *maxOutput
			}
			if *kv != 0 {
				cfg.Sweep.KVCacheTokens = *kv
			}
			if err := cfg.Set(sets); err != nil {
				return err
			}
			err = runSweep(cfg.Settings(), *out, *resume, *force, stdout)
			var setting *runner.SettingError
			if errors.As(err, &setting) {
				return fmt.Errorf("%s: %w", cfg.Where(setting.Key), err)
			}
			return err
		}
	},
}

// listFlag collects a repeatable flag's values.
type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ", ") }
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }

func override(dst *string, v string) {
	if v != "" {
		*dst = v
	}
}

func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

func intList(s string) ([]int, error) {
	var out []int
	for _, f := range splitList(s) {
		n, err := strconv.Atoi(f)
		if err != nil {
			return nil, fmt.Errorf("%q is not a whole number", f)
		}
		out = append(out, n)
	}
	return out, nil
}

// isTerminal reports whether w is a terminal, where a live status line can
// be rewritten in place; logs and pipes get plain lines only.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	info, err := f.Stat()
	return err == nil && info.Mode()&os.ModeCharDevice != 0
}

var unsafeID = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// defaultRunFile names a new run: runs/<UTC date and time>-<model>.json.
func defaultRunFile(model string) string {
	name := strings.Trim(unsafeID.ReplaceAllString(filepath.Base(model), "-"), "-.")
	if name == "" {
		name = "run"
	}
	return filepath.Join("runs", time.Now().UTC().Format("20060102-150405")+"-"+name+".json")
}

func runSweep(s runner.Settings, out, resume string, force bool, stdout io.Writer) error {
	file := out
	if resume != "" {
		file = resume
	}
	// A bucket: the run is saved in runs/ here as ever, and copied to the
	// bucket after every save.
	var up *uploader
	if bucket.IsURL(file) {
		var err error
		if up, file, err = newUploader(file, resume != "", stdout); err != nil {
			return err
		}
		defer up.close()
	}
	apiKey := ""
	if s.Server.APIKeyEnv != "" {
		apiKey = os.Getenv(s.Server.APIKeyEnv)
		if apiKey == "" {
			return fmt.Errorf("[server] api_key_env names %s, which is not set", s.Server.APIKeyEnv)
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if file == "" {
		model := s.Server.Model
		if model == "" {
			probe, cancel := context.WithTimeout(ctx, 30*time.Second)
			model = runner.ServedModel(probe, cmp.Or(s.Server.BaseURL, "http://127.0.0.1:8000"), apiKey)
			cancel()
		}
		file = defaultRunFile(model)
	}
	if up != nil && up.key == "" {
		// A new run in a shared bucket: its id names the box it ran on too.
		file = strings.TrimSuffix(file, ".json") + "-" + hostID() + ".json"
		up.key = filepath.Base(file)
	}
	if id := strings.TrimSuffix(filepath.Base(file), ".json"); !strings.HasSuffix(file, ".json") || !matrixgen.ValidID(id) {
		return fmt.Errorf("run file %q: want <id>.json, the id of letters, digits, '.', '_' and '-'", file)
	}
	if resume == "" {
		if _, err := os.Stat(file); err == nil {
			return fmt.Errorf("%s exists; use -resume %s to continue it, or -o for a new file", file, file)
		}
	}
	fmt.Fprintf(stdout, "matrixgen run: writing %s\n", file)
	opts := runner.Options{
		Settings: s, APIKey: apiKey, File: file, Resume: resume != "", Force: force, Log: stdout, Version: matrixgen.Version,
	}
	if up != nil {
		opts.Saved = up.saved
		fmt.Fprintf(stdout, "matrixgen run: copying it to %s after every save\n", up.target())
	}
	if isTerminal(stdout) {
		opts.Live = stdout
	}
	run, err := runner.Run(ctx, opts)
	if up != nil && up.failed != nil && run != nil {
		// One more try now the run is over; failing that, say where it is.
		if again := up.saved(file); again != nil {
			return fmt.Errorf("%v; the run is saved in %s: continue with -resume %s once the bucket answers, or copy the file there", again, file, up.target())
		}
		fmt.Fprintf(stdout, "matrixgen run: copied to %s at last\n", up.target())
	}
	if run != nil {
		total := len(run.Prefill) + len(run.Decode)
		measured := run.CountStatuses(func(s matrixgen.Status) bool { return s != matrixgen.StatusNotRun })
		state := "complete"
		if run.Incomplete {
			state = "incomplete: continue with -resume " + file
		}
		fmt.Fprintf(stdout, "matrixgen run: %d of %d measurements in %s (%s)\n", measured, total, file, state)
	}
	if errors.Is(err, context.Canceled) {
		if run == nil {
			return errors.New("interrupted before anything was measured; no run file was written")
		}
		return errors.New("interrupted; what was measured is saved")
	}
	return err
}

// uploader copies a run file to a bucket after every save: the first copy
// creates the object, refusing an id another writer holds; later ones
// replace it. A failed copy is retried, and never costs the local file.
type uploader struct {
	store   *bucket.Store
	key     string // <id>.json in the bucket; "" until the id is known
	created bool   // the object is ours: replace it from now on
	log     io.Writer
	// retries are the waits between attempts of one copy.
	retries []time.Duration
	// failed is the last copy's error, nil once a copy succeeds.
	failed error
}

// uploadRetries are the waits between attempts of one copy to a bucket.
var uploadRetries = []time.Duration{time.Second, 4 * time.Second, 15 * time.Second}

// newUploader opens the bucket of place (s3://lab/runs/ or
// s3://lab/runs/<id>.json) and gives the local file the run is saved in:
// runs/<id>.json. To resume, the bucket's copy is fetched first.
func newUploader(place string, resume bool, log io.Writer) (*uploader, string, error) {
	folder, key := place, ""
	if u, err := url.Parse(place); err == nil && strings.HasSuffix(u.Path, ".json") {
		key = path.Base(u.Path)
		u.Path = path.Dir(u.Path) + "/"
		folder = u.String()
	}
	if resume && key == "" {
		return nil, "", fmt.Errorf("-resume %s: name the run file in the bucket (…/<id>.json)", bucket.Redact(place))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	store, err := bucket.Open(ctx, folder)
	if err != nil {
		return nil, "", err
	}
	up := &uploader{store: store, key: key, log: log, retries: uploadRetries}
	if key == "" {
		return up, "", nil
	}
	file := filepath.Join("runs", key)
	if !resume {
		return up, file, nil
	}
	up.created = true
	if _, err := os.Stat(file); err == nil {
		// The local copy is the one every save wrote first: it is never
		// older than the bucket's.
		fmt.Fprintf(log, "matrixgen run: resuming from the local copy %s\n", file)
		return up, file, nil
	}
	data, found, err := store.Get(ctx, key)
	if err != nil || !found {
		store.Close()
		return nil, "", cmp.Or(err, fmt.Errorf("%s has no %s to resume", store, key))
	}
	if err := os.MkdirAll("runs", 0o755); err != nil {
		store.Close()
		return nil, "", err
	}
	if err := os.WriteFile(file, data, 0o644); err != nil {
		store.Close()
		return nil, "", err
	}
	return up, file, nil
}

func (u *uploader) target() string { return strings.TrimSuffix(u.store.String(), "/") + "/" + u.key }

func (u *uploader) close() { u.store.Close() }

// saved copies file to the bucket, trying again after each of the retry
// waits. Another writer holding the id stops the run.
func (u *uploader) saved(file string) error {
	data, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	for attempt := 0; ; attempt++ {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		if u.created {
			err = u.store.Put(ctx, u.key, data)
		} else {
			err = u.store.Create(ctx, u.key, data)
		}
		cancel()
		switch {
		case err == nil:
			u.created, u.failed = true, nil
			return nil
		case errors.Is(err, bucket.ErrExists):
			return fmt.Errorf("%w: %s already holds %s (another box's run); start again for a new id", runner.ErrSaveRefused, u.store, u.key)
		case attempt >= len(u.retries):
			u.failed = fmt.Errorf("copying the run to %s failed %d times: %v", u.target(), attempt+1, err)
			return u.failed
		}
		time.Sleep(u.retries[attempt])
	}
}

// hostID is this machine's name as a run id may carry it.
func hostID() string {
	name, _ := os.Hostname()
	name = strings.Trim(unsafeID.ReplaceAllString(strings.ToLower(name), "-"), "-.")
	return cmp.Or(name, "host")
}
