package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/BurntSushi/toml"
	"github.com/matrixgen/matrixgen"
	"github.com/matrixgen/matrixgen/bucket"
	"github.com/matrixgen/matrixgen/config"
	"github.com/matrixgen/matrixgen/internal/plural"
	"github.com/matrixgen/matrixgen/internal/redact"
	"github.com/matrixgen/matrixgen/internal/term"
	"github.com/matrixgen/matrixgen/runfile"
	"github.com/matrixgen/matrixgen/runner"
)

var runCommand = command{
	summary: "measure a running inference server and write a run file",
	usage: `
Usage: matrixgen run [options]

Probes the OpenAI-compatible server at [server] base_url, then measures
prefill at each context and sustained decode for each context × concurrency
cell of the sweep in matrixgen.toml, saving the run file after every
measurement. Ctrl-C stops within seconds and keeps what was measured
(exit status 130).

-resume continues an interrupted run, re-running only missing or failed
cells: the sweep's settings (contexts, concurrency, window, max output,
model) come from the run file itself; the server is found as for any run,
from the config and flags, and the hint an interrupted run prints repeats
the flags that named it. A server (address, engine, version), GPUs (name,
count), model or setting other than the run's is refused, each difference
listed; -force continues anyway and records them in the run.

An API key, when the server wants one, is read from the variable
[server] api_key_env names (or -api-key-env) and never written anywhere.
`,
	examples: `
  matrixgen run
  matrixgen run -base-url http://127.0.0.1:8000 -contexts 8K,32K -concurrency 1,8 -duration 10s
  matrixgen run -resume runs/2026-12-02-1700-nemotron-gpubox.json
  matrixgen run -set sweep.cache_mode=distinct -set 'describe.gpu="RTX 4090"'
  matrixgen run -o 's3://lab/runs/?region=eu-west-1'
`,
	flags: func(fs *flag.FlagSet) func([]string, io.Writer, io.Writer) error {
		f := runFlags{fs: fs}
		f.cfgFile = configFlag(fs)
		f.out = fs.String("o", "", "run `file` to write (default runs/<date>-<model>-<host>.json), or a bucket URL s3://lab/runs/ to copy it to after every save")
		f.resume = fs.String("resume", "", "continue the run in this `file`, with its own sweep (a local file, or one in a bucket: s3://lab/runs/<id>.json)")
		f.force = fs.Bool("force", false, "with -resume: continue even against another server, GPUs, model or settings, recording the differences in the run")
		f.baseURL = fs.String("base-url", "", "server `URL`, with or without /v1 (overrides [server] base_url; default http://127.0.0.1:8000)")
		f.model = fs.String("model", "", "served `model` (overrides [server] model; default: the only one the server serves)")
		f.keyEnv = fs.String("api-key-env", "", "`variable` holding the API key, used when set (overrides [server] api_key_env)")
		fs.Func("contexts", "comma-separated `contexts`, e.g. 8K,32K,max (overrides [sweep] contexts; limits the prefill contexts too unless -prefill-contexts is given; default 8K,16K,…,512K,max)", func(v string) (err error) {
			f.contexts, err = contextList(v)
			return err
		})
		fs.Func("concurrency", "comma-separated `levels`, e.g. 1,8,64 (overrides [sweep] concurrency; default 1,2,4,…,128)", func(v string) (err error) {
			f.concurrency, err = levelList(v)
			return err
		})
		fs.Func("prefill-contexts", "comma-separated prefill `contexts` (overrides [sweep] prefill_contexts; default: the contexts)", func(v string) (err error) {
			f.prefill, err = contextList(v)
			return err
		})
		fs.Var((*durationFlag)(&f.duration), "duration", "decode window per cell, a `duration` such as 10s (overrides [sweep] duration; default 30s)")
		f.maxOutput = fs.Int("max-output", 0, "max output `tokens` per request (overrides [sweep] max_output; default 4096)")
		f.kv = fs.Int("kv-cache-tokens", 0, "KV capacity in `tokens` (overrides what the probe finds)")
		f.repeat = fs.Int("repeat", 0, "measure every decode cell `n` times, the whole matrix once, then again, so drift spreads over all cells (overrides [sweep] repeats; default 1)")
		fs.Var(&f.sets, "set", "override any config key, `section.key=value` (repeatable), e.g. -set sweep.cache_mode=distinct")
		return f.run
	},
}

type runFlags struct {
	fs                                  *flag.FlagSet
	cfgFile                             configFile
	out, resume, baseURL, model, keyEnv *string
	force                               *bool
	contexts, prefill                   []string
	concurrency                         []int
	duration                            time.Duration
	maxOutput, kv, repeat               *int
	sets                                listFlag
}

func (f *runFlags) run(args []string, stdout, stderr io.Writer) error {
	cfg, err := f.cfgFile.load()
	if err != nil {
		return err
	}
	w := runWork{stdout: stdout, stderr: stderr, resume: *f.resume, out: *f.out, force: *f.force}
	if w.resume != "" && w.out != "" {
		return usagef("-o and -resume: a resumed run is written where it is")
	}
	if err := w.openPlace(); err != nil {
		return err
	}
	defer w.close()
	if w.resume != "" { // the run's own sweep over the config's; flags still override it
		if err := sweepOfRun(&cfg, w.file); err != nil {
			return err
		}
	}
	if err := f.apply(&cfg); err != nil {
		return err
	}
	w.hintFlags = serverFlags(f.fs)
	s := runSettings(cfg)
	if err = s.Check(); err == nil {
		err = w.sweep(s)
	}
	return placeSettings(err, cfg, f.flagFor, *f.resume)
}

// keyFlags are run's flags that set a config key.
var keyFlags = map[string]string{"server.base_url": "base-url", "server.model": "model", "server.api_key_env": "api-key-env",
	"sweep.contexts": "contexts", "sweep.concurrency": "concurrency", "sweep.prefill_contexts": "prefill-contexts",
	"sweep.duration": "duration", "sweep.max_output": "max-output", "sweep.kv_cache_tokens": "kv-cache-tokens", "sweep.repeats": "repeat"}

// flagFor is the flag given that set key ("-base-url", "-set"), or "".
func (f *runFlags) flagFor(key string) string {
	if name, ok := keyFlags[key]; ok && flagSet(f.fs, name) {
		return "-" + name
	}
	if f.sets.has(key) {
		return "-set"
	}
	return ""
}

// placeSettings puts each setting the runner refused at its place: the
// flag that set it (byFlag; a command-line mistake, exit 2), the resumed
// run file its sweep came from, or its key's line in the config ("flags"
// without one). Others pass as they are.
func placeSettings(err error, cfg config.Config, byFlag func(key string) string, resumed string) error {
	return eachLeaf(err, func(e error) error {
		var setting *runner.SettingError
		switch {
		case !errors.As(e, &setting):
			return e
		case byFlag(setting.Key) != "":
			return usageError(fmt.Errorf("%s: %w", byFlag(setting.Key), e))
		case resumed != "" && strings.HasPrefix(setting.Key, "sweep."):
			return fmt.Errorf("%s, its sweep: %w", term.Name(resumed), e)
		}
		return fmt.Errorf("%s: %w", cfg.Where(setting.Key), e)
	})
}

func runSettings(c config.Config) runner.Settings {
	w := c.Sweep
	return runner.Settings{
		Server: runner.Server(c.Server),
		Sweep: runner.Sweep{Contexts: w.Contexts, Concurrency: w.Concurrency, PrefillContexts: w.PrefillContexts,
			PrefillRepeats: w.PrefillRepeats, Repeats: w.Repeats, Duration: w.Duration.Duration, MaxOutput: w.MaxOutput,
			IgnoreEOS: w.IgnoreEOS, KVCacheTokens: w.KVCacheTokens, LoopRetries: w.LoopRetries, CacheMode: w.CacheMode,
			WarmupTimeout: w.WarmupTimeout.Duration, StallTimeout: w.StallTimeout.Duration,
			ServerWait: w.ServerWait.Duration, IdleTimeout: w.IdleTimeout.Duration},
		Describe: runner.Describe(c.Describe),
	}
}

// apply puts the flags over the configuration, checked as the file is.
func (f *runFlags) apply(cfg *config.Config) error {
	cfg.Server.BaseURL = cmp.Or(*f.baseURL, cfg.Server.BaseURL)
	cfg.Server.Model = cmp.Or(*f.model, cfg.Server.Model)
	cfg.Server.APIKeyEnv = cmp.Or(*f.keyEnv, cfg.Server.APIKeyEnv)
	given := func(name string) bool { return flagSet(f.fs, name) }
	if given("contexts") {
		cfg.Sweep.Contexts = f.contexts
	}
	if given("concurrency") {
		cfg.Sweep.Concurrency = f.concurrency
	}
	if given("prefill-contexts") {
		cfg.Sweep.PrefillContexts = f.prefill
	}
	// New contexts limit the prefill too: a config's longer list must not
	// measure 1M when -contexts asked for 8K.
	if (given("contexts") || f.sets.has("sweep.contexts")) && !given("prefill-contexts") && !f.sets.has("sweep.prefill_contexts") {
		cfg.Sweep.PrefillContexts = nil
	}
	// A value no sweep can use is a command-line mistake, before any request.
	bad := func(name, want string) error {
		return usagef("-%s: want %s, not %s", name, want, f.fs.Lookup(name).Value)
	}
	switch {
	case given("duration") && f.duration <= 0: // 0 is not "the default": it was typed
		return bad("duration", "a positive window such as 30s")
	case given("max-output") && *f.maxOutput <= 0:
		return bad("max-output", "a positive number of tokens")
	case given("repeat") && (*f.repeat < 1 || *f.repeat > matrixgen.MaxRepeats):
		return bad("repeat", fmt.Sprintf("a count of measurements of every cell from 1 to %d", matrixgen.MaxRepeats))
	}
	cfg.Sweep.Duration.Duration = cmp.Or(f.duration, cfg.Sweep.Duration.Duration)
	cfg.Sweep.MaxOutput = cmp.Or(*f.maxOutput, cfg.Sweep.MaxOutput)
	cfg.Sweep.KVCacheTokens = cmp.Or(*f.kv, cfg.Sweep.KVCacheTokens)
	if given("repeat") {
		cfg.Sweep.Repeats = *f.repeat
	}
	if err := cfg.Set(f.sets); err != nil {
		return usageError(err)
	}
	return nil
}

// durationFlag is a duration flag whose mistake says what a duration looks
// like: the flag package's says only "parse error", and "-duration 5" is
// the likeliest mistake.
type durationFlag time.Duration

func (d *durationFlag) String() string { return time.Duration(*d).String() }

func (d *durationFlag) Set(s string) error {
	v, err := time.ParseDuration(s)
	if err != nil {
		return errors.New("want a duration with its unit, such as 30s or 2m")
	}
	*d = durationFlag(v)
	return nil
}

// listFlag collects a repeatable flag's values.
type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ", ") }
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }

// has reports whether one of the -set overrides sets key.
func (l listFlag) has(key string) bool {
	return slices.ContainsFunc(l, func(o string) bool {
		k, _, _ := strings.Cut(o, "=")
		return strings.TrimSpace(k) == key
	})
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

// contextList reads -contexts: labels such as 8K, token counts, or max.
func contextList(s string) ([]string, error) {
	list := splitList(s)
	if len(list) == 0 {
		return nil, errors.New("no contexts")
	}
	for _, l := range list {
		if _, err := matrixgen.ParseContext(l); err != nil && !strings.EqualFold(l, "max") {
			return nil, err
		}
	}
	return list, nil
}

// levelList reads -concurrency: whole numbers from 1 up.
func levelList(s string) ([]int, error) {
	var out []int
	for _, f := range splitList(s) {
		n, err := strconv.Atoi(f)
		if err != nil || n < 1 {
			return nil, fmt.Errorf("%q is not a whole number from 1 up", f)
		}
		out = append(out, n)
	}
	if len(out) == 0 {
		return nil, errors.New("no levels")
	}
	return out, nil
}

// sweepOfRun puts the sweep a run file was measured with into cfg, so a
// resume measures its cells the same way, whatever the config says now.
func sweepOfRun(cfg *config.Config, file string) error {
	e, err := runfile.Load(file)
	if err != nil {
		return fmt.Errorf("resume: %w", err)
	}
	r := e.Run
	w := &cfg.Sweep
	w.Contexts, w.Concurrency, w.PrefillContexts = contextLabels(r.Contexts()), r.ConcurrencyLevels(), contextLabels(r.PrefillContexts())
	if r.Sweep.DurationSeconds > 0 {
		w.Duration.Duration = time.Duration(math.Round(r.Sweep.DurationSeconds * float64(time.Second)))
	}
	w.MaxOutput = cmp.Or(r.Sweep.MaxOutputTokens, w.MaxOutput) // a loaded run's counts are never negative
	if r.Sweep.IgnoreEOS != nil {
		w.IgnoreEOS = new(*r.Sweep.IgnoreEOS)
	}
	w.CacheMode = cmp.Or(r.Sweep.CacheMode, w.CacheMode)
	w.PrefillRepeats = cmp.Or(r.Sweep.PrefillRepeats, w.PrefillRepeats)
	w.Repeats = max(r.Sweep.Repeats, 1)
	if p := r.Probe; p != nil && strings.HasPrefix(p.KVSource, runner.KVGivenByHand) {
		w.KVCacheTokens = p.KVCacheTokens
	}
	if r.Probe != nil {
		cfg.Server.Model = cmp.Or(r.Probe.Model, cfg.Server.Model)
	}
	cfg.Server.Model = cmp.Or(r.Model.ServedName, cfg.Server.Model)
	return nil
}

// contextLabels are context lengths as a sweep names them: 8K, 32K.
func contextLabels(ns []int) []string {
	out := make([]string, len(ns))
	for i, n := range ns {
		out[i] = matrixgen.ContextLabel(n)
	}
	return out
}

// serverFlags are the flags that said where the server is and how to
// reach it: a resume needs them again (the sweep is in the file).
func serverFlags(fs *flag.FlagSet) []string {
	var args []string
	fs.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "config", "base-url", "api-key-env", "force":
			// A secret is not printed: the person gives it again.
			args = append(args, "-"+f.Name+"="+redact.Text(f.Value.String()))
		case "set":
			for _, o := range *f.Value.(*listFlag) {
				if strings.HasPrefix(strings.TrimSpace(o), "server.") {
					args = append(args, "-set", hintOverride(o))
				}
			}
		}
	})
	return args
}

// hintOverride is a -set override as the resume hint prints it: its value
// hidden whole where a key on its path or in it says secret
// (server.extra.password=…, server.extra={api_key = …}) or the redaction
// step finds one in it.
func hintOverride(o string) string {
	key, value, ok := strings.Cut(o, "=")
	if !ok {
		return redact.Text(o)
	}
	secret := redact.Text(o) != o
	for _, part := range strings.Split(key, ".") {
		secret = secret || redact.NamesSecret(strings.Trim(strings.TrimSpace(part), `"'`), false)
	}
	var doc map[string]any
	if _, err := toml.Decode("v = "+value, &doc); err == nil {
		eachKey(doc["v"], func(k string) { secret = secret || redact.NamesSecret(k, false) })
	}
	if secret {
		return key + "=" + redact.Mark
	}
	return o
}

// eachKey calls f with every key of the tables in a TOML value, however deep.
func eachKey(v any, f func(string)) {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			f(k)
			eachKey(e, f)
		}
	case []any:
		for _, e := range v {
			eachKey(e, f)
		}
	case []map[string]any:
		for _, e := range v {
			eachKey(e, f)
		}
	}
}

// resumeHint is the command that continues the run in file, quoted for a shell.
func resumeHint(file string, serverFlags []string) string {
	args := append([]string{"matrixgen", "run", "-resume", file}, serverFlags...)
	for i, a := range args {
		args[i] = shellQuote(a)
	}
	return strings.Join(args, " ")
}

// shellSafe are the arguments a POSIX shell reads as they are.
var shellSafe = regexp.MustCompile(`^[A-Za-z0-9_./:@%+=,-]+$`)

// shellQuote quotes an argument for a POSIX shell where it needs it, so a
// printed command line can be pasted.
func shellQuote(s string) string {
	if shellSafe.MatchString(s) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// runWork is one `matrixgen run`: where the run file is, where it is
// copied, and where the command speaks.
type runWork struct {
	stdout, stderr io.Writer
	out, resume    string
	force          bool
	// file is the local run file: -o's, -resume's, or runs/<id>.json for a
	// bucket's; "" until a new run's id is chosen.
	file      string
	up        *uploader
	hintFlags []string // the flags a resume needs again
	saved     bool     // the run file was written
}

// openPlace finds the run file: a bucket's is fetched for a resume into runs/.
func (w *runWork) openPlace() error {
	w.file = cmp.Or(w.resume, w.out)
	if !bucket.IsURL(w.file) {
		return nil
	}
	if err := checkPlaces(w.file); err != nil {
		return err
	}
	var err error
	w.up, w.file, err = newUploader(w.file, w.resume != "", w.stdout)
	return err
}

func (w *runWork) close() {
	if w.up != nil {
		w.up.store.Close()
	}
}

// sweep runs the sweep with settings s and says what it wrote.
func (w *runWork) sweep(s runner.Settings) error {
	apiKey := ""
	if s.Server.APIKeyEnv != "" {
		// Used when set, not required: a server without a key (the sim, a
		// local vLLM) answers anyway, and one that wants it says so.
		apiKey = os.Getenv(s.Server.APIKeyEnv)
	}
	ctx, stop := interruptible()
	defer stop()
	if w.file == "" {
		if err := w.name(ctx, s, apiKey); err != nil {
			return err
		}
	}
	if id := strings.TrimSuffix(filepath.Base(w.file), ".json"); !strings.HasSuffix(w.file, ".json") || !matrixgen.ValidID(id) {
		return usagef("run file %q: want <id>.json, the id of %s", w.file, matrixgen.IDRule)
	}
	if _, err := os.Stat(w.file); err == nil && w.resume == "" {
		return fmt.Errorf("%s exists; use -resume %s to continue it, or -o for a new file", w.file, w.file)
	}
	opts := runner.Options{
		Settings: s, APIKey: apiKey, File: w.file, Resume: w.resume != "", Force: w.force,
		Log: w.stdout, Warn: w.stderr, Version: matrixgen.Version, Saved: w.savedOnce,
	}
	// A live status line on a terminal only; logs and pipes get plain lines.
	if f, ok := w.stdout.(*os.File); ok {
		if info, err := f.Stat(); err == nil && info.Mode()&os.ModeCharDevice != 0 {
			opts.Live = w.stdout
		}
	}
	run, err := runner.Run(ctx, opts)
	if w.up != nil && w.up.failed != nil && run != nil {
		// One more try now the run is over; failing that, say where it is.
		if again := w.up.saved(w.file); again != nil {
			return fmt.Errorf("%v; the run is saved in %s: continue with -resume %s once the bucket answers, or copy the file there", again, w.file, w.up.target())
		}
		fmt.Fprintf(w.stdout, "matrixgen run: copied to %s at last\n", w.up.target())
	}
	if run != nil && w.saved {
		state := "complete"
		if run.Incomplete {
			state = "incomplete: continue with " + w.resumeHint()
		}
		fmt.Fprintf(w.stdout, "matrixgen run: %s, in %s (%s)\n", doneLine(run), w.file, state)
	}
	return w.failed(err)
}

// doneLine says how far a run got: its cells and prefill rows done (a
// failed one counted apart, as a resume measures it again) and, where the
// sweep repeats, its decode repeats made ("4 of 9 cells and prefill rows
// done, 7 of 14 decode repeats made"). A repeated cell is done once every
// repeat is made; one over capacity is so every time, so its first such
// repeat stands for all.
func doneLine(run *matrixgen.Run) string {
	repeats := max(run.Sweep.Repeats, 1)
	done, failed, made, failedRepeats := 0, 0, 0, 0
	count := func(s matrixgen.Status, done, failed *int) {
		switch s {
		case matrixgen.StatusNotRun:
		case matrixgen.StatusError:
			*failed++
		default:
			*done++
		}
	}
	for _, p := range run.Prefill {
		count(p.Status, &done, &failed)
	}
	for _, d := range run.Decode {
		if repeats == 1 {
			count(d.Status, &done, &failed)
			continue
		}
		n := 0
		for _, m := range d.Repeats {
			count(m.Status, &n, &failedRepeats)
		}
		if n > 0 && d.Status == matrixgen.StatusOverCapacity {
			n = repeats
		}
		n = min(n, repeats)
		made += n
		if n == repeats {
			done++
		}
	}
	line := fmt.Sprintf("%d of %s done", done, plural.Count(len(run.Prefill)+len(run.Decode), "cell and prefill row", "cells and prefill rows"))
	if failed > 0 {
		line += fmt.Sprintf(", %d failed", failed)
	}
	if repeats > 1 {
		line += fmt.Sprintf(", %d of %s made", made, plural.Count(len(run.Decode)*repeats, "decode repeat", "decode repeats"))
		if failedRepeats > 0 {
			line += fmt.Sprintf(", %s failed", plural.Count(failedRepeats, "repeat", "repeats"))
		}
	}
	return line
}

// resumeHint is the command that continues this run; a bucket's URL is
// printed without its query (it may hold keys), so the hint says so.
func (w *runWork) resumeHint() string {
	if w.up == nil {
		return resumeHint(w.file, w.hintFlags)
	}
	hint := resumeHint(w.up.target(), w.hintFlags)
	if u, err := url.Parse(cmp.Or(w.resume, w.out)); err == nil && u.RawQuery != "" {
		hint += ", the bucket URL's query added back"
	}
	return hint
}

// failed is the error a run ended with, saying what became of the run file;
// one stopped by Ctrl-C or SIGTERM exits 130, so a script tells it from a
// run that failed.
func (w *runWork) failed(err error) error {
	interrupted := errors.Is(err, context.Canceled)
	switch {
	case err == nil || w.saved && !interrupted:
		return err
	case w.saved:
		return exitError{errors.New("interrupted; what was measured is saved"), exitStopped}
	}
	state := "no run file was written"
	if w.resume != "" {
		state = w.file + " is as it was"
	}
	if interrupted {
		return exitError{errors.New("interrupted before anything was measured; " + state), exitStopped}
	}
	return fmt.Errorf("%w\n%s: nothing was measured", err, state)
}

// savedOnce is told of every save: the first says where the run goes; each
// is copied on to the bucket, if any.
func (w *runWork) savedOnce(file string) error {
	if !w.saved {
		w.saved = true
		fmt.Fprintf(w.stdout, "matrixgen run: saving %s after every measurement\n", file)
		if w.up != nil {
			fmt.Fprintf(w.stdout, "matrixgen run: copying it to %s after every save\n", w.up.target())
		}
	}
	if w.up != nil {
		return w.up.saved(file)
	}
	return nil
}

// name chooses a new run's file: runs/<date>-<model>-<host>.json, the
// model as the server names it.
func (w *runWork) name(ctx context.Context, s runner.Settings, apiKey string) error {
	model := s.Server.Model
	if model == "" {
		probe, cancel := context.WithTimeout(ctx, 30*time.Second)
		model = runner.ServedModel(probe, cmp.Or(s.Server.BaseURL, "http://127.0.0.1:8000"), apiKey)
		cancel()
	}
	host, _ := os.Hostname()
	id, err := freeRunID("runs", newRunID(time.Now(), model, host))
	if err != nil {
		return err
	}
	w.file = filepath.Join("runs", id+".json")
	if w.up != nil {
		w.up.key = id + ".json"
	}
	return nil
}

// idUnsafe are the runs of characters a run id part turns into one '-'.
var idUnsafe = regexp.MustCompile(`[^a-z0-9._]+`)

// idPart is text made fit for a run id: lower case, safe characters only,
// no "..", at most max bytes, never empty.
func idPart(s string, max int, fallback string) string {
	s = idUnsafe.ReplaceAllString(strings.ToLower(s), "-")
	for strings.Contains(s, "..") {
		s = strings.ReplaceAll(s, "..", ".")
	}
	s = strings.Trim(s, "-._")
	if len(s) > max {
		s = strings.TrimRight(s[:max], "-._")
	}
	return cmp.Or(s, fallback)
}

// newRunID names a run a person can read and sort, by UTC minute, model
// (its path's last part) and host: 2026-12-04-1624-nemotron-gpubox.
func newRunID(now time.Time, model, host string) string {
	model = model[strings.LastIndexByte(model, '/')+1:]
	return now.UTC().Format("2006-01-02-1504") + "-" + idPart(model, 64, "model") + "-" + idPart(host, 40, "host")
}

// freeRunID is id, or id-2, id-3… when a run of that id is already in dir
// (the same model on the same box within the same minute).
func freeRunID(dir, id string) (string, error) {
	for n := 1; n < 1000; n++ {
		candidate := id
		if n > 1 {
			candidate = id + "-" + strconv.Itoa(n)
		}
		if _, err := os.Stat(filepath.Join(dir, candidate+".json")); err != nil {
			return candidate, nil
		}
	}
	return "", fmt.Errorf("%s holds runs %s to %s-999 already; name the run with -o", dir, id, id)
}

// uploader copies a run file to a bucket after every save: the first copy
// creates the object, refusing an id another writer holds; later ones
// replace it. A failed copy is retried, and never costs the local file.
type uploader struct {
	store   *bucket.Store
	key     string // <id>.json in the bucket; "" until the id is known
	created bool   // the object is ours: replace it from now on
	failed  error  // the last copy's error, nil once a copy succeeds
}

// uploadRetries are the waits between attempts of one copy to a bucket.
var uploadRetries = []time.Duration{time.Second, 4 * time.Second, 15 * time.Second}

// newUploader opens the bucket of place (…/runs/ or …/runs/<id>.json) and
// gives the local file runs/<id>.json; to resume, the bucket's copy first.
func newUploader(place string, resume bool, log io.Writer) (*uploader, string, error) {
	folder, key := place, ""
	if u, err := url.Parse(place); err == nil && strings.HasSuffix(u.Path, ".json") {
		folder, key = splitRunURL(u)
	}
	if resume && key == "" {
		return nil, "", fmt.Errorf("-resume %s: name the run file in the bucket (…/<id>.json)", bucket.Redact(place))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	open := bucket.OpenForWriting
	if resume {
		open = bucket.Open // the run is there, or the place is wrong
	}
	store, err := open(ctx, folder)
	if err != nil {
		return nil, "", err
	}
	up := &uploader{store: store, key: key}
	if key == "" {
		return up, "", nil
	}
	file := filepath.Join("runs", key)
	if !resume {
		return up, file, nil
	}
	up.created = true
	if _, err := os.Stat(file); err == nil { // every save writes it first: never older than the bucket's
		fmt.Fprintf(log, "matrixgen run: resuming from the local copy %s\n", file)
		return up, file, nil
	}
	data, found, err := store.Get(ctx, key)
	if err == nil && !found {
		err = fmt.Errorf("%s has no %s to resume", store, key)
	}
	if err == nil {
		err = os.MkdirAll("runs", 0o755)
	}
	if err == nil {
		err = os.WriteFile(file, data, 0o644)
	}
	if err != nil {
		store.Close()
		return nil, "", err
	}
	return up, file, nil
}

func (u *uploader) target() string { return strings.TrimSuffix(u.store.String(), "/") + "/" + u.key }

// saved copies file to the bucket, retrying; another writer holding the id
// stops the run.
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
		case attempt >= len(uploadRetries):
			u.failed = fmt.Errorf("copying the run to %s failed %d times: %v", u.target(), attempt+1, err)
			return u.failed
		}
		time.Sleep(uploadRetries[attempt])
	}
}
