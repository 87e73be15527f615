package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
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
		out := fs.String("o", "", "run `file` to write (default runs/<date>-<model>.json)")
		resume := fs.String("resume", "", "continue the run in this `file`")
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
	if isTerminal(stdout) {
		opts.Live = stdout
	}
	run, err := runner.Run(ctx, opts)
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
