package runner

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/matrixgen/matrixgen"
	"github.com/matrixgen/matrixgen/internal/plural"
	"github.com/matrixgen/matrixgen/internal/redact"
	"github.com/matrixgen/matrixgen/internal/term"
	"github.com/matrixgen/matrixgen/runfile"
	"github.com/matrixgen/matrixgen/stats"
	"github.com/matrixgen/matrixgen/telemetry"
)

// Options are the run's settings plus what the command line decides.
type Options struct {
	Settings Settings
	// APIKey is read from the environment by the caller; it is sent to the
	// server and never written anywhere.
	APIKey string
	// File is the run file, written after every measurement.
	File string
	// Resume continues the run in File: cells already measured are kept.
	Resume bool
	// Force resumes a run measured against another server or with other
	// settings, recording the differences in the run.
	Force bool
	// Simulated marks the run as measured against `matrixgen sim`.
	Simulated bool
	// Log receives progress lines.
	Log io.Writer
	// Warn receives what was skipped or is in doubt, and why, and before
	// each step that can take minutes without a measurement, what it is and
	// its deadline: stderr, so CI logs keep them. Log when nil.
	Warn io.Writer
	// Saved, when set, is told after every save of the run file (to copy
	// it to a bucket). Its error is said in the log and the run goes on,
	// but ErrSaveRefused stops the run.
	Saved func(file string) error
	// Live, when set (a terminal), gets a status line rewritten every second
	// while a cell runs: its phase, time and live tok/s.
	Live io.Writer
	// Version is matrixgen's version, recorded as the tool's.
	Version string

	// dial, when set, opens the client's connections: the tests connect to
	// the sim in memory, inside a bubble of virtual time.
	dial dialFunc
	// gpuTool is the command for the GPUs' telemetry: when empty,
	// telemetry.DefaultTool; tests name a fake, or telemetry.NoTool.
	gpuTool string
}

// Run probes the server and measures every prefill context and decode
// cell, saving the run file after each; on cancellation it saves what it
// has, marked incomplete, and returns the context's error. Its error, log
// lines and run file pass through one redaction step with the live key.
func Run(ctx context.Context, o Options) (*matrixgen.Run, error) {
	red := redact.New(o.APIKey).Also(requestSecrets(o.Settings.Server)...).Also(urlPasswords(o.Settings.Server)...)
	run, err := sweepAll(ctx, o, red)
	return run, red.Error(err)
}

func sweepAll(ctx context.Context, o Options, red *redact.Redactor) (*matrixgen.Run, error) {
	o.Settings.defaults()
	if o.dial != nil && o.gpuTool == "" {
		o.gpuTool = telemetry.NoTool // in memory means in virtual time: no processes to wait on
	}
	o.gpuTool = cmp.Or(o.gpuTool, telemetry.DefaultTool())
	s := o.Settings
	if err := s.Check(); err != nil {
		return nil, err
	}
	c := newClient(s.Server.BaseURL, o.APIKey, slices.Max(s.Sweep.Concurrency), o.dial)
	c.model = s.Server.Model
	c.chat = chatOptions{temperature: s.Server.Temperature, ignoreEOS: *s.Sweep.IgnoreEOS,
		kwargs: s.Server.ChatTemplateKwargs, extra: s.Server.Extra}
	logTo := func(w io.Writer) func(string, ...any) {
		return func(format string, args ...any) {
			if o.Live != nil {
				fmt.Fprint(o.Live, "\r\033[K") // clear the live line first
			}
			// A line can carry a server's words: secrets hidden, control
			// characters shown, not obeyed by the terminal.
			fmt.Fprintln(w, term.Clean(red.Text(fmt.Sprintf(format, args...))))
		}
	}
	logf, warnf := logTo(o.Log), logTo(cmp.Or(o.Warn, o.Log))
	if w := red.Warning(); w != "" {
		warnf("%s", w)
	}

	warnf("probing %s: its models, its engine's endpoints and a 4-token request, up to %v", redact.Text(s.Server.BaseURL), probeStreamTimeout)
	probe, err := c.probe(ctx, s.Server.MetricsURL)
	if err != nil {
		return nil, keyHint(err, s.Server.APIKeyEnv, o.APIKey != "")
	}
	if s.Sweep.KVCacheTokens > 0 {
		probe.KVCacheTokens, probe.KVSource = s.Sweep.KVCacheTokens, KVGivenByHand
	}
	probe.BaseURL = serverAddress(s.Server.BaseURL)
	logf("server: %s %s, model %s, max length %d, KV cache %d tokens (%s)",
		probe.Engine, probe.EngineVersion, probe.Model, probe.MaxModelLen, probe.KVCacheTokens, cmp.Or(probe.KVSource, "unknown"))
	plan, err := resolvePlan(s.Sweep, probe.MaxModelLen)
	if err != nil {
		return nil, &SettingError{Key: "sweep.contexts", Err: err}
	}
	if err := plan.fits(probe.MaxModelLen, s.Sweep.MaxOutput); err != nil {
		return nil, err
	}
	run := newRun(ctx, o, probe, plan)
	run.Request = requestOf(s.Server, red)
	// What the run file holds before any cell ([describe], the GPUs found,
	// the sweep) must pass validate, or build would refuse the file after
	// hours of measuring.
	if problems := run.Validate(); len(problems) > 0 {
		return nil, fmt.Errorf("the run file would not validate, so nothing was measured: %s", problemList(problems))
	}
	// Incomplete from the first save to the last measurement: a run killed
	// in between must not look finished.
	run.Incomplete = true
	if o.Resume {
		if run, err = resumeRun(o.File, run, o.Force); err != nil {
			return nil, err
		}
		if n := dropFailedRepeats(run); n > 0 {
			logf("resume: %s that failed to be measured again", plural.Count(n, "repeat", "repeats"))
		}
	}
	sw := &sweeper{c: c, o: o, s: s, run: run, probe: probe, logf: logf, warnf: warnf, red: red,
		sampler: &metricsSampler{c: c, url: s.Server.MetricsURL, enabled: probe.Metrics, interval: time.Second},
		started: time.Now(), nonce: rand.Uint64(), contexts: matrixgen.Union(plan.contexts, plan.prefill), setUp: map[int]bool{},
		etaModel: etaModel{window: s.Sweep.Duration, maxAttempts: 1 + *s.Sweep.LoopRetries}}
	sw.tok = c.tokenizerFor(ctx, probe)
	logf("prompts: %s", probe.Tokenizer)
	sw.chooseIdleSignal(ctx)
	logf("idle before each measurement: by %s", sw.idleBy())
	telCtx, stopTelemetry := context.WithCancel(ctx)
	tel := sw.startTelemetry(telCtx)
	defer func() { stopTelemetry(); tel.Wait() }()
	if err := sw.save(); err != nil {
		return nil, err
	}
	err = sw.sweep(ctx)
	// Incomplete while a measurement was not attempted yet; failed ones were.
	notRun := sw.left(func(s matrixgen.Status) bool { return s == matrixgen.StatusNotRun })
	run.Incomplete = err != nil || notRun > 0
	if !run.Incomplete {
		run.FinishedAt = time.Now().UTC().Truncate(time.Second)
	}
	if saveErr := sw.save(); saveErr != nil {
		return run, errors.Join(err, saveErr)
	}
	return run, err
}

// plan is the resolved sweep: contexts in tokens.
type plan struct {
	contexts, prefill, concurrency []int
}

// SettingError is a setting that cannot be, found by Settings.Check or the
// probe before any measurement. Key names it as the config does.
type SettingError struct {
	Key string
	Err error
}

func (e *SettingError) Error() string { return e.Key + ": " + e.Err.Error() }
func (e *SettingError) Unwrap() error { return e.Err }

// fits checks every decode context leaves room for the output in the
// model's length: such a cell could never run, so the sweep is wrong.
func (p plan) fits(maxModelLen, maxOutput int) error {
	if maxModelLen == 0 {
		return nil
	}
	var bad []string
	for _, n := range p.contexts {
		if sum, ok := addInts(n, maxOutput); !ok || sum > maxModelLen {
			bad = append(bad, matrixgen.ContextLabel(n))
		}
	}
	if len(bad) == 0 {
		return nil
	}
	return &SettingError{Key: "sweep.contexts", Err: fmt.Errorf(
		"%s + max_output %d exceed the model's maximum length of %d tokens; use \"max\" for the largest context that fits",
		strings.Join(bad, ", "), maxOutput, maxModelLen)}
}

// maxMargin keeps "max" a little under the model's length, room for the
// per-request suffix and the chat template.
const maxMargin = 64

func resolvePlan(s Sweep, maxModelLen int) (plan, error) {
	resolve := func(labels []string) ([]int, error) {
		var out []int
		for _, l := range labels {
			if strings.EqualFold(strings.TrimSpace(l), "max") {
				if maxModelLen == 0 {
					return nil, errors.New(`context "max" needs the server's max_model_len, which it did not report`)
				}
				n := (maxModelLen - s.MaxOutput - maxMargin) / matrixgen.TokensPerK * matrixgen.TokensPerK
				if n <= 0 {
					return nil, fmt.Errorf("max_output %d leaves no room in max_model_len %d", s.MaxOutput, maxModelLen)
				}
				out = append(out, n)
				continue
			}
			n, err := matrixgen.ParseContext(l)
			if err != nil {
				return nil, err
			}
			out = append(out, n)
		}
		return matrixgen.Union(out), nil
	}
	p := plan{concurrency: matrixgen.Union(s.Concurrency)}
	var err error
	if p.contexts, err = resolve(s.Contexts); err == nil && len(s.PrefillContexts) > 0 {
		p.prefill, err = resolve(s.PrefillContexts)
	} else if err == nil {
		p.prefill = slices.Clone(p.contexts)
	}
	return p, err
}

func newRun(ctx context.Context, o Options, probe *matrixgen.Probe, p plan) *matrixgen.Run {
	s := o.Settings
	d := s.Describe
	hw := telemetry.Detect(ctx, o.gpuTool)
	giveHardware(&hw, d)
	r := &matrixgen.Run{
		Schema:    matrixgen.SchemaVersion,
		StartedAt: time.Now().UTC().Truncate(time.Second),
		Simulated: o.Simulated || strings.Contains(probe.EngineVersion, "matrixgen.sim"),
		Tool:      matrixgen.Tool{Name: "matrixgen", Version: o.Version},
		Hardware:  hw,
		Engine: matrixgen.Engine{
			Name: cmp.Or(d.Engine, probe.Engine), Version: cmp.Or(d.EngineVersion, probe.EngineVersion),
			Quantization: d.Quantization, Backend: d.Backend, Repository: redact.WithoutUserinfo(d.Repository), Build: d.Build, Commit: d.Commit,
		},
		Model: matrixgen.Model{
			Name: cmp.Or(d.ModelName, lastSegment(probe.ModelRoot), probe.Model), ServedName: probe.Model,
			Revision: d.Revision, MaxModelLen: boundedCount(probe.MaxModelLen),
		},
		LaunchCommand: strings.TrimSpace(redact.Text(d.LaunchCommand)),
		Probe:         probe,
		Sweep: matrixgen.Sweep{
			DecodeTest: matrixgen.DecodeFixedDuration, PrefillMode: matrixgen.PrefillWarmed, PrefillRepeats: cmp.Or(s.Sweep.PrefillRepeats, defaultPrefillRepeats),
			DurationSeconds: s.Sweep.Duration.Seconds(), MaxOutputTokens: s.Sweep.MaxOutput,
			Contexts: p.contexts, Concurrency: p.concurrency, PrefillContexts: p.prefill,
			IgnoreEOS: s.Sweep.IgnoreEOS, CacheMode: s.Sweep.CacheMode,
		},
	}
	if s.Sweep.Repeats > 1 {
		r.Sweep.Repeats = s.Sweep.Repeats
	}
	for _, n := range p.prefill {
		r.Prefill = append(r.Prefill, matrixgen.Prefill{ContextTokens: n, Status: matrixgen.StatusNotRun})
	}
	for _, n := range p.contexts {
		for _, cc := range p.concurrency {
			r.Decode = append(r.Decode, matrixgen.Decode{ContextTokens: n, Concurrency: cc, Status: matrixgen.StatusNotRun})
		}
	}
	return r
}

// problemList is problems on one line, "field: what; field: what".
func problemList(problems []matrixgen.Problem) string {
	texts := make([]string, len(problems))
	for i, p := range problems {
		texts[i] = p.Field + ": " + p.Msg
	}
	return strings.Join(texts, "; ")
}

// boundedCount is a count a server gave, or 0 (not known) past what a run
// file may hold (matrixgen.MaxFigure), which validate and build refuse;
// the run's probe keeps the server's word.
func boundedCount(n int) int {
	if int64(n) > matrixgen.MaxFigure {
		return 0
	}
	return n
}

func lastSegment(path string) string {
	return path[strings.LastIndexByte(path, '/')+1:]
}

// resumeRun takes the finished cells of an earlier run of the same sweep,
// server and GPUs. Any difference would mix two runs under one's name, so
// all are listed and refused, unless force records them in the run. The
// old run's probe is kept as it was measured.
func resumeRun(file string, fresh *matrixgen.Run, force bool) (*matrixgen.Run, error) {
	e, err := runfile.Load(file)
	if err != nil {
		return nil, fmt.Errorf("resume: %w", err)
	}
	old := e.Run
	if diffs := resumeDifferences(old, fresh); len(diffs) > 0 {
		if !force {
			return nil, fmt.Errorf("resume: %s was measured differently, so its cells and new ones would not be one run:\n  %s\n(-force resumes anyway and records these differences in the run)",
				file, strings.Join(diffs, "\n  "))
		}
		old.ResumedDespite = append(old.ResumedDespite, diffs...)
	}
	old.Incomplete = true
	return old, nil
}

// dropFailedRepeats takes out of each repeated cell the repeats that
// failed or never ran (the cell's figures become its median kept
// repeat's), so that a resume measures them again; it returns how many.
func dropFailedRepeats(r *matrixgen.Run) int {
	dropped := 0
	for i := range r.Decode {
		d := &r.Decode[i]
		kept := slices.DeleteFunc(slices.Clone(d.Repeats), func(m matrixgen.Decode) bool { return !finished(m.Status) })
		if len(kept) == len(d.Repeats) {
			continue
		}
		dropped += len(d.Repeats) - len(kept)
		*d = matrixgen.Decode{ContextTokens: d.ContextTokens, Concurrency: d.Concurrency, Status: matrixgen.StatusNotRun}
		for _, m := range kept {
			d.AddRepeat(m)
		}
	}
	return dropped
}

// resumeDifferences lists what differs between a run and the run a resume
// would measure now: the server as probed, the GPUs, the sweep's settings.
// An address not recorded cannot show it is the same server: a difference.
func resumeDifferences(old, fresh *matrixgen.Run) []string {
	var diffs []string
	differ := func(what string, a, b any) {
		if fmt.Sprint(a) != fmt.Sprint(b) {
			diffs = append(diffs, fmt.Sprintf("%s: %v then, %v now", what, a, b))
		}
	}
	op, np := cmp.Or(old.Probe, &matrixgen.Probe{}), fresh.Probe
	differ("server address", cmp.Or(serverAddress(op.BaseURL), "not recorded"), np.BaseURL) // as recorded now
	differ("engine", op.Engine, np.Engine)
	differ("engine version", op.EngineVersion, np.EngineVersion)
	differ("model", op.Model, np.Model)
	differ("maximum length", op.MaxModelLen, np.MaxModelLen)
	differ("KV cache tokens", op.KVCacheTokens, np.KVCacheTokens)
	differ("GPU", cmp.Or(old.Hardware.GPU, "none detected"), cmp.Or(fresh.Hardware.GPU, "none detected"))
	differ("GPU count", old.Hardware.GPUCount, fresh.Hardware.GPUCount)
	os, ns := old.Sweep, fresh.Sweep
	differ("contexts", os.Contexts, ns.Contexts)
	differ("concurrency", os.Concurrency, ns.Concurrency)
	differ("prefill contexts", os.PrefillContexts, ns.PrefillContexts)
	differ("window seconds", os.DurationSeconds, ns.DurationSeconds)
	differ("max output tokens", os.MaxOutputTokens, ns.MaxOutputTokens)
	differ("ignore_eos", deref(os.IgnoreEOS), deref(ns.IgnoreEOS))
	if os.CacheMode != "" { // files from before it was recorded say nothing
		differ("cache mode", os.CacheMode, ns.CacheMode)
	}
	if os.PrefillRepeats != 0 { // likewise
		differ("prefill repeats", os.PrefillRepeats, ns.PrefillRepeats)
	}
	differ("repeats", max(os.Repeats, 1), max(ns.Repeats, 1))
	// A file written before requests were kept says none, as one that set
	// nothing: it cannot show it sent the same, so a resume that sends
	// something is refused (-force resumes it and says so).
	if a, b := cmp.Or(old.Request.Text(), "none"), cmp.Or(fresh.Request.Text(), "none"); a != b {
		// Compared whole, named cut: a request may be a megabyte of settings.
		diffs = append(diffs, fmt.Sprintf("request: %s then, %s now", capText(a, maxDiffText), capText(b, maxDiffText)))
	}
	return diffs
}

func deref(b *bool) bool { return b != nil && *b }

func finished(s matrixgen.Status) bool {
	return s != matrixgen.StatusNotRun && s != matrixgen.StatusError
}

// sweeper carries a sweep's state from cell to cell.
type sweeper struct {
	c       *client
	o       Options
	s       Settings
	run     *matrixgen.Run
	probe   *matrixgen.Probe
	tok     tokenizer
	sampler *metricsSampler
	// logf says progress; warnf what was skipped or is in doubt, and what
	// the runner is waiting on and until when.
	logf, warnf func(string, ...any)
	red         *redact.Redactor // the one redaction step, for the run file
	started     time.Time
	done        int
	etaModel    etaModel
	retrying    bool // the current cell looped and is running again
	// nonce makes this process's prompts its own: no server has seen their
	// first tokens, not even in an earlier attempt at the same run.
	nonce   uint64
	simLost float64 // how far behind its schedule the sim was when last said

	// contexts are the sweep's; setUp marks those whose prompt is built and
	// prefill row measured or cache warmed, for the ETA; settingUp is the
	// one being set up since setupStart (0: none).
	contexts   []int
	setUp      map[int]bool
	settingUp  int
	setupStart time.Time

	// tel is the GPUs' telemetry, nil on a machine without; noPower why a
	// machine whose GPU tool failed has none; telLost and noReadingSaid
	// that a stopped sampler and a window without a reading were reported.
	tel           gpuSampler
	telLost       bool
	noPower       string
	noReadingSaid bool

	// How the server tells it is idle, and what the last cell left running.
	idle      *ownIdle // nil: the server gives no sign
	idleRate  float64  // decode tok/s of the idle probe on an idle server, when by rate
	lastRate  float64  // the idle probe's rate when last asked in this wait
	cut       int      // streams the last cell cut
	busyFor   time.Duration
	cellEnded time.Time

	pass int // which measurement of every cell the sweep is making
}

// left counts the prefill rows and decode cells whose status says todo;
// where the sweep repeats, every repeat still to make of each cell.
func (sw *sweeper) left(todo func(matrixgen.Status) bool) int {
	n := 0
	for _, p := range sw.run.Prefill {
		if todo(p.Status) {
			n++
		}
	}
	for i := range sw.run.Decode {
		d := &sw.run.Decode[i]
		if sw.repeats() == 1 {
			if todo(d.Status) {
				n++
			}
		} else {
			n += sw.repeatsLeft(d)
		}
	}
	return n
}

// repeatsLeft is how many repeats of a cell the sweep has still to make:
// none once one was over capacity, which it is every time.
func (sw *sweeper) repeatsLeft(d *matrixgen.Decode) int {
	if len(d.Repeats) > 0 && d.Status == matrixgen.StatusOverCapacity {
		return 0
	}
	return max(0, sw.repeats()-len(d.Repeats))
}

// repeats is how many times each cell is measured.
func (sw *sweeper) repeats() int { return max(sw.run.Sweep.Repeats, 1) }

// sweep measures the matrix once, then again for each repeat, so drift on
// the machine spreads over every cell.
func (sw *sweeper) sweep(ctx context.Context) error {
	for sw.pass = 1; sw.pass <= sw.repeats(); sw.pass++ {
		for _, n := range sw.contexts {
			if err := sw.context(ctx, n); err != nil {
				return err
			}
		}
	}
	return nil
}

// context measures one context: its prefill row (or, once that is done, a
// request to warm the cache), then its decode cells by concurrency.
func (sw *sweeper) context(ctx context.Context, n int) error {
	pre := sw.prefillRow(n)
	cells := sw.cellsAt(n)
	if (pre == nil || finished(pre.Status)) && len(cells) == 0 {
		return nil
	}
	start := time.Now()
	sw.settingUp, sw.setupStart = n, start
	h := newHeads(sw.nonce, n)
	built, err := sw.buildPrompt(ctx, n, h)
	if err != nil {
		return err
	}
	// The cache salt keeps vLLM's prefix cache per run, context and process.
	cacheSalt := fmt.Sprintf("matrixgen-%s-%s-%016x", sw.run.StartedAt.Format("20060102T150405Z"), matrixgen.ContextLabel(n), sw.nonce)
	if pre != nil && !finished(pre.Status) {
		err = sw.measurePrefill(ctx, n, h, built, cacheSalt, pre, start)
	} else if err = sw.warmContext(ctx, n, built, cacheSalt); err == nil {
		sw.contextSetUp(n, start)
	}
	if err != nil {
		return err
	}
	for _, i := range cells {
		if err := sw.cell(ctx, i, built, cacheSalt); err != nil {
			return err
		}
	}
	return nil
}

// builtPrompt is a context's prompt and what the runner knows of its length.
type builtPrompt struct {
	text string
	// tokens is its length as the tokenizer counted it: exactly (the prompt
	// itself was counted) or as calibrated (its twin with the other head).
	tokens int
	exact  bool
}

// slack is how many tokens the server's count of a prompt may fall short
// of the built count before the prompt counts as cut: for a calibrated
// one, what reordering its first line's words can change.
func (b builtPrompt) slack() int {
	if b.exact {
		return 0
	}
	return headWords
}

func (sw *sweeper) buildPrompt(ctx context.Context, n int, h heads) (builtPrompt, error) {
	if _, calibrating := sw.tok.(usageTokenizer); calibrating {
		sw.warnf("%s building the %s prompt by calibration: a request per count, each up to %v", sw.progress(), matrixgen.ContextLabel(n), usageCountTimeout)
	}
	text, got, exact, err := exactPrompt(ctx, sw.tok, n, h, uint64(n))
	if err != nil {
		return builtPrompt{}, fmt.Errorf("prompt of %s tokens: %w", matrixgen.ContextLabel(n), err)
	}
	if got != n {
		sw.logf("note: the tokenizer landed on %d tokens for %s, not %d; measuring that prompt", got, matrixgen.ContextLabel(n), n)
	}
	return builtPrompt{text: text, tokens: got, exact: exact}, nil
}

func (sw *sweeper) prefillRow(n int) *matrixgen.Prefill {
	if i := slices.IndexFunc(sw.run.Prefill, func(p matrixgen.Prefill) bool { return p.ContextTokens == n }); i >= 0 {
		return &sw.run.Prefill[i]
	}
	return nil
}

// cellsAt lists the decode cells at context n the current pass has still
// to measure, by concurrency (a cell over capacity once is so every time).
func (sw *sweeper) cellsAt(n int) []int {
	var out []int
	for i := range sw.run.Decode {
		d := &sw.run.Decode[i]
		if d.ContextTokens != n {
			continue
		}
		todo := !finished(d.Status)
		if sw.repeats() > 1 {
			todo = len(d.Repeats) < sw.pass && sw.repeatsLeft(d) > 0
		}
		if todo {
			out = append(out, i)
		}
	}
	return out
}

// cell measures one decode cell, retrying it with a fresh suffix while it
// loops, up to the configured number of retries.
func (sw *sweeper) cell(ctx context.Context, i int, prompt builtPrompt, salt string) error {
	cellAt := &sw.run.Decode[i]
	d := cellAt
	n, cc := d.ContextTokens, d.Concurrency
	// A repeat is measured on its own and joins the cell's repeats when it
	// is done, so that a resume knows it is still to make.
	var repeat matrixgen.Decode
	if sw.repeats() > 1 {
		repeat = matrixgen.Decode{ContextTokens: n, Concurrency: cc, Status: matrixgen.StatusNotRun}
		d = &repeat
	}
	start := time.Now()
	if reason := sw.overCapacity(n, cc); reason != "" {
		*d = matrixgen.Decode{ContextTokens: n, Concurrency: cc, Status: matrixgen.StatusOverCapacity, Reason: reason}
	} else {
		waitedForServer := false
		for attempt := 1; ; attempt++ {
			waited, err := sw.waitIdle(ctx)
			if err != nil {
				return err
			}
			sw.warnf("%s decoding %s × %d: %s warming up (up to %v), then a %v window",
				sw.progress(), matrixgen.ContextLabel(n), cc, plural.Count(cc, "stream", "streams"), sw.s.Sweep.WarmupTimeout, sw.s.Sweep.Duration)
			sw.etaModel.attempts++
			got, w, err := sw.c.decodeCell(ctx, cellPlan{
				context: n, concurrency: cc, prompt: prompt.text, promptTokens: prompt.tokens - prompt.slack(), salt: salt, attempt: attempt,
				sweep: sw.s.Sweep, live: sw.o.Live,
				label:          sw.progress() + " " + matrixgen.ContextLabel(n) + " × " + fmt.Sprint(cc),
				baselineActive: sw.baselineActive(n, cc),
				counter:        sw.c.eng.metrics().tokens,
			}, sw.sampler)
			sw.retrying = false
			sw.noteCut(w, sw.s.Sweep.MaxOutput)
			got.IdleWaitSeconds = waited
			got.Power, got.PowerMissing = sw.power(got)
			checkFigures(&got, sw.s.Sweep.MaxOutput, sw.run.Hardware.GPUCount, sw.run.Sweep.DurationSeconds)
			var lost *lostServer
			if errors.As(err, &lost) {
				*d = got
				if waitedForServer {
					break // it came back and failed again: keep the error, go on
				}
				if werr := sw.waitForServer(ctx, lost); werr != nil {
					_ = sw.save()
					return werr
				}
				waitedForServer = true
				continue
			}
			if err != nil {
				return err
			}
			*d = got
			if d.Status == matrixgen.StatusError || d.Status == matrixgen.StatusOverCapacity {
				break
			}
			if ev := w.looped(); ev != nil {
				d.Status, d.Loop = matrixgen.StatusLooped, ev
				d.Reason = fmt.Sprintf("output repeated %q from byte %d", ev.Unit, ev.StartOffset)
				if attempt <= *sw.s.Sweep.LoopRetries {
					sw.retrying = true // until the next attempt ends
					sw.logf("%s %s × %d looped; retrying with a fresh prompt", sw.progress(), matrixgen.ContextLabel(n), cc)
					continue
				}
			}
			break
		}
	}
	sw.done++
	if d != cellAt {
		cellAt.AddRepeat(*d)
	}
	if d.Status != matrixgen.StatusOverCapacity {
		sw.etaModel.cells++
		sw.etaModel.cellTime += time.Since(start)
	}
	which := ""
	if sw.repeats() > 1 {
		which = fmt.Sprintf(" (%d of %d)", len(cellAt.Repeats), sw.repeats())
	}
	sw.logf("%s decode %s × %d%s: %s", sw.progress(), matrixgen.ContextLabel(n), cc, which, describeDecode(*d))
	if c := d.ServerCount; c != nil && c.Disagrees() {
		sw.warnf("warning: %s × %d: we counted %s, the server %d (%+.1f%%, by %s)",
			matrixgen.ContextLabel(n), cc, plural.Count(c.ClientTokens, "token", "tokens"), c.ServerTokens, 100*c.Deviation(), c.Source)
	}
	sw.checkSimSchedule(ctx)
	return sw.save()
}

// checkSimSchedule warns, here where the figures are recorded, when a
// simulated server fell further behind its profile's schedule: a machine
// too busy for it makes every figure run slow. One that does not answer
// (another version of the sim) is not asked again.
func (sw *sweeper) checkSimSchedule(ctx context.Context) {
	if !sw.run.Simulated || sw.simLost < 0 {
		return
	}
	var t struct {
		LostSeconds      float64 `json:"lost_seconds"`
		ScheduledSeconds float64 `json:"scheduled_seconds"`
		LateSteps        int     `json:"late_steps"`
		KeepingUp        bool    `json:"keeping_up"`
	}
	// An answer no sim gives (more than a year behind): not the sim.
	const year = 365 * 24 * 3600
	if err := sw.c.getJSON(ctx, "/sim/timing", &t); err != nil || t.LostSeconds > year || t.ScheduledSeconds > year {
		sw.simLost = -1
		return
	}
	if t.KeepingUp || t.LostSeconds <= sw.simLost {
		return
	}
	sw.simLost = t.LostSeconds
	sw.warnf("warning: the sim is %.1f s behind its schedule of %.1f s (%s): this machine is too busy for its profile, so the figures measured run slow",
		t.LostSeconds, t.ScheduledSeconds, plural.Count(t.LateSteps, "late step", "late steps"))
}

// baselineActive is the share of its window a stream spent producing in
// the lowest-concurrency cell measured at context n below cc; 0 if none.
func (sw *sweeper) baselineActive(n, cc int) float64 {
	for _, d := range sw.run.Decode { // by concurrency within a context
		if d.ContextTokens == n && d.Concurrency < cc && d.Status == matrixgen.StatusValid && d.AvgActive != nil {
			return *d.AvgActive / float64(d.Concurrency)
		}
	}
	return 0
}

// waitForServer waits, up to the configured bound, for a server that
// stopped answering to be healthy again.
func (sw *sweeper) waitForServer(ctx context.Context, lost *lostServer) error {
	limit := sw.s.Sweep.ServerWait
	sw.warnf("the server stopped answering (%v); waiting up to %v for it to come back", lost.cause, limit)
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		probe, cancel := context.WithTimeout(ctx, 5*time.Second)
		healthy := sw.c.healthy(probe)
		cancel()
		if healthy {
			sw.logf("the server is back; measuring the cell again")
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(min(time.Second, time.Until(deadline))):
		}
	}
	return fmt.Errorf("the server at %s stopped answering (%v) and did not come back within %v; what was measured is saved, continue with -resume once it is up",
		redact.Text(sw.s.Server.BaseURL), lost.cause, limit)
}

// overCapacity says why a cell cannot run, before sending anything: it
// needs more KV cache than the server has, or more than the model's length.
func (sw *sweeper) overCapacity(n, cc int) string {
	maxOut := sw.s.Sweep.MaxOutput
	// In overflow-safe arithmetic: a max_output near the int limit must not
	// wrap the products around into a cell that "fits".
	perRequest, ok := addInts(n, maxOut)
	if l := sw.probe.MaxModelLen; l > 0 && (!ok || perRequest > l) {
		return fmt.Sprintf("%d prompt + %d output tokens exceed the model's maximum length of %d", n, maxOut, l)
	}
	if kv := sw.probe.KVCacheTokens; kv > 0 {
		need, ok2 := mulInts(cc, perRequest)
		if !ok || !ok2 || need > kv {
			return fmt.Sprintf("%d × (%d + %d) tokens exceed the KV cache of %d tokens (%s)", cc, n, maxOut, kv, sw.probe.KVSource)
		}
	}
	return ""
}

// addInts and mulInts report whether the result fits an int; mulInts
// takes no negative number (a level, a request's tokens).
func addInts(a, b int) (int, bool) {
	s := a + b
	return s, (b >= 0) == (s >= a)
}

func mulInts(a, b int) (int, bool) {
	p := a * b
	return p, a == 0 || p/a == b
}

func describeDecode(d matrixgen.Decode) string {
	if d.TotalTokS == nil {
		return d.Status.Label() + ": " + d.Reason
	}
	s := fmt.Sprintf("%.1f tok/s total, %s in %.1f s", *d.TotalTokS, plural.Count(*d.OutputTokens, "token", "tokens"), *d.WindowSeconds)
	if d.TTFTMs != nil {
		s += fmt.Sprintf(", TTFT %.0f ms", d.TTFTMs.P50)
	}
	if c := d.ServerCount; c != nil {
		s += fmt.Sprintf("; the server's own count %d (%+.1f%%)", c.ServerTokens, 100*c.Deviation())
	}
	if d.Status != matrixgen.StatusValid {
		s += " — " + d.Status.Label() + ": " + d.Reason
	}
	return s
}

// save writes the run file atomically, each decode cell with its interval.
func (sw *sweeper) save() error {
	cleanServerText(sw.run, sw.red)
	stats.SetInterval(sw.run)
	if err := runfile.Save(sw.o.File, sw.run); err != nil {
		return err
	}
	if sw.o.Saved != nil {
		if err := sw.o.Saved(sw.o.File); errors.Is(err, ErrSaveRefused) {
			return err
		} else if err != nil {
			sw.warnf("%v; the run file %s is kept, and the next save tries again", err, sw.o.File)
		}
	}
	return nil
}

// ErrSaveRefused, from Options.Saved, stops the run: where its copy goes,
// its id is someone else's.
var ErrSaveRefused = errors.New("the run file's copy was refused")

// Bounds on text a server chose, as a run file keeps it: a server that
// answers /version with 50 MB must not make a 100 MB run file.
const (
	maxNameText   = 256  // names and versions
	maxReasonText = 4000 // error messages and other explanations
	maxDiffText   = 300  // each side of a difference a resume names
)

// cleanServerText redacts every string of the run (by MapText, so a field
// added to the model is not missed), then cuts each a server or a tool
// chose to its length: in that order, so a key is whole when it is hidden.
func cleanServerText(r *matrixgen.Run, red *redact.Redactor) {
	r.MapText(red.Text)
	// Not the launch command, the person's own; nor the request, not the
	// server's: requestOf redacted and cut it once, and a second cut of cut
	// text would read as another request on resume.
	capAll := func(limit int, ss ...*string) {
		for _, s := range ss {
			*s = capText(*s, limit)
		}
	}
	capAll(maxNameText, &r.Engine.Name, &r.Engine.Version, &r.Engine.Repository, &r.Engine.Build,
		&r.Engine.Commit, &r.Engine.Quantization, &r.Engine.Backend, &r.Model.Name, &r.Model.ServedName, &r.Model.Revision,
		&r.Hardware.Type, &r.Hardware.GPU, &r.Hardware.CPU, &r.Hardware.OS, &r.Hardware.Driver, &r.Hardware.Kernel, &r.Hardware.CUDA)
	for i := range r.ResumedDespite {
		capAll(maxReasonText, &r.ResumedDespite[i])
	}
	if p := r.Probe; p != nil {
		capAll(maxNameText, &p.Engine, &p.EngineVersion, &p.Model, &p.ModelRoot)
		capAll(maxReasonText, &p.KVSource, &p.Tokenizer)
	}
	for i := range r.Prefill {
		capAll(maxReasonText, &r.Prefill[i].Reason, &r.Prefill[i].Note)
	}
	for i := range r.Decode {
		d := &r.Decode[i]
		capAll(maxReasonText, &d.Reason)
		if d.Loop != nil {
			capAll(maxReasonText, &d.Loop.Unit, &d.Loop.Excerpt)
		}
	}
}

// capText cuts s to at most n bytes on a character boundary, saying how
// much was cut.
func capText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return fmt.Sprintf("%s… (%d more bytes)", s[:cut], len(s)-cut)
}
