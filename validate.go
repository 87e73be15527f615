package matrixgen

import (
	"bytes"
	"fmt"
	"maps"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// Problem is one impossible value in a run, named by its field path
// (decode[3].total_tok_s) so the decoder can place it in the file.
type Problem struct {
	Field string
	Msg   string
	// Uses are the other fields the judgement read (a cell's concurrency,
	// for its average of active requests): where one of them could not
	// be decoded, the problem is the decoder's follow-on and is left out.
	// A problem placed at a whole object that it did not read whole (a
	// cell that appears twice, by its context and concurrency) names the
	// members it read here, and another member undecoded leaves it in;
	// "path[]" is an array's length alone (a member that could not be
	// decoded still counts).
	Uses []string
}

// MaxProblems caps how many problems one file reports; past that the rest
// are noise. Exported for package runfile, whose reading of a refused file
// adds the decoder's own problems and stops at the same count.
const MaxProblems = 20

// Validate lists every value in the run that cannot be true: figures that
// are negative or not finite, concurrency 0, cells named twice, a valid cell
// without its throughput. A run that passes is safe to render.
func (r *Run) Validate() []Problem { return r.ValidateExcept(nil) }

// ValidateExcept is Validate without the problems except reports true
// for, which do not count against MaxProblems either: package runfile
// leaves out the problems that follow from a value it could not decode,
// and twenty of those must not crowd out a real one.
func (r *Run) ValidateExcept(except func(Problem) bool) []Problem {
	v := validator{maxOutput: r.Sweep.MaxOutputTokens, gpus: r.Hardware.GPUCount, duration: r.Sweep.DurationSeconds, except: except}
	if r.Schema != SchemaVersion {
		v.add("schema", fmt.Sprintf("unsupported version %d; this build reads %d", r.Schema, SchemaVersion))
	}
	v.required("model.name", r.Model.Name)
	v.required("engine.name", r.Engine.Name)
	v.required("tool.name", r.Tool.Name)
	v.date("started_at", r.StartedAt)
	v.date("finished_at", r.FinishedAt)
	if !r.StartedAt.IsZero() && !r.FinishedAt.IsZero() && r.FinishedAt.Before(r.StartedAt) {
		v.add("finished_at", "is before started_at", "started_at")
	}
	v.nonNegative("", "hardware.vram_gb", &r.Hardware.VRAMGB)
	v.count("", "hardware.gpu_count", r.Hardware.GPUCount)
	if r.Hardware.GPUCount > maxGPUs {
		v.add("hardware.gpu_count", fmt.Sprintf("%d GPUs serve no one model (%d at most)", r.Hardware.GPUCount, maxGPUs))
	}
	v.nonNegative("", "hardware.power_limit_w", &r.Hardware.PowerLimitW)
	v.nonNegative("", "hardware.default_power_limit_w", &r.Hardware.DefaultPowerLimitW)
	v.nonNegative("", "hardware.idle_power_w", r.Hardware.IdlePowerW)
	v.given(r.Hardware.Given)
	v.boardPower(r)
	v.count("", "model.max_model_len", r.Model.MaxModelLen)
	v.sweep(&r.Sweep)
	if r.Request != nil {
		v.nonNegative("", "request.temperature", r.Request.Temperature)
	}
	v.prefill(r.Prefill, r.Sweep.PrefillContexts)
	v.decode(r.Decode, &r.Sweep)
	return v.problems
}

type validator struct {
	problems []Problem
	// maxOutput and gpus are the sweep's max output tokens and the
	// machine's GPUs: what bounds a cell's tokens and power (Impossible).
	maxOutput, gpus int
	// duration is the sweep's window, which bounds the per-second counts
	// of a cell that gives no window of its own.
	duration float64
	// except leaves problems out (ValidateExcept); nil keeps them all.
	except func(Problem) bool
}

// date refuses a time outside the years 0000 to 9999 in UTC, where every
// page, runs.csv and run.json show it: RFC 3339 has four-digit years, so
// 9999-12-31T23:59:59-01:00, which decodes, would be shown in the year
// 10000, a date nothing reads back.
func (v *validator) date(field string, t time.Time) {
	if t.IsZero() {
		return
	}
	if y := t.UTC().Year(); y < 0 || y > 9999 {
		v.add(field, fmt.Sprintf("%s is in the year %d in UTC; a time must fall within the years 0000 to 9999", t.Format(time.RFC3339), y))
	}
}

// add records a problem at field; uses are the other fields the judgement
// read. A problem the caller leaves out (ValidateExcept) does not count
// against MaxProblems.
func (v *validator) add(field, msg string, uses ...string) {
	p := Problem{Field: field, Msg: msg, Uses: uses}
	if len(v.problems) < MaxProblems && (v.except == nil || !v.except(p)) {
		v.problems = append(v.problems, p)
	}
}

func (v *validator) required(field, s string) {
	if s == "" {
		v.add(field, "required")
	}
}

func (v *validator) count(at, name string, n int) {
	if n < 0 {
		v.add(at+name, fmt.Sprintf("must not be negative, got %d", n))
	}
}

// nonNegative checks an optional figure: finite, not negative, and below
// maxFigure, past any figure a benchmark measures in the units the run
// file keeps (1e300 passed once, and a page printed it). The field's name
// comes in two parts, joined only for a problem: a run has thousands of
// figures.
func (v *validator) nonNegative(at, name string, x *float64) {
	switch {
	case fine(x):
	case math.IsNaN(*x) || math.IsInf(*x, 0):
		v.add(at+name, "must be a finite number")
	case *x < 0:
		v.add(at+name, fmt.Sprintf("must not be negative, got %s", strconv.FormatFloat(*x, 'g', -1, 64)))
	default:
		v.add(at+name, fmt.Sprintf("%s is past any figure a benchmark measures (%g at most)", strconv.FormatFloat(*x, 'g', 6, 64), float64(maxFigure)))
	}
}

// namedFigure is a figure and its JSON name, for nonNegatives.
type namedFigure struct {
	name string
	x    *float64
}

// nonNegatives checks each of an object's figures with nonNegative, in
// order.
func (v *validator) nonNegatives(at string, figures []namedFigure) {
	for _, f := range figures {
		v.nonNegative(at, "."+f.name, f.x)
	}
}

// maxGPUs bounds hardware.gpu_count: the power a run's GPUs may draw grows
// with it.
const maxGPUs = 4096

// maxFigure bounds every figure of a run file: a trillion (milliseconds,
// tokens per second, watts, seconds alike).
const maxFigure = 1e12

// maxTokS bounds a rate of tokens: a hundred million a second, far past
// any server's prefill or decode.
const maxTokS = 1e8

// rate checks an optional tokens-per-second figure: a figure, and within
// maxTokS.
func (v *validator) rate(at, name string, x *float64) {
	v.nonNegative(at, name, x)
	if fine(x) && x != nil && *x > maxTokS {
		v.add(at+name, fmt.Sprintf("%s tok/s is past any server's (%g at most)", strconv.FormatFloat(*x, 'g', 6, 64), float64(maxTokS)))
	}
}

func (v *validator) contexts(field string, xs []int) {
	for i, n := range xs {
		if n <= 0 || n > maxContextTokens {
			v.add(fmt.Sprintf("%s[%d]", field, i), fmt.Sprintf("want a token count between 1 and %d, got %d", maxContextTokens, n))
		}
	}
	v.ascending(field, xs)
}

// ascending checks that a list of the sweep names each size once, smallest
// first.
func (v *validator) ascending(field string, xs []int) {
	if !slices.IsSorted(xs) || len(slices.Compact(slices.Clone(xs))) != len(xs) {
		v.add(field, "must be ascending without repeats")
	}
}

// given checks hardware.given names hardware fields a person can give,
// each once.
func (v *validator) given(fields []string) {
	for i, f := range fields {
		at := fmt.Sprintf("hardware.given[%d]", i)
		switch {
		case !slices.Contains(GivenHardwareFields, f):
			v.add(at, fmt.Sprintf("unknown %q (want one of %s)", f, strings.Join(GivenHardwareFields, ", ")))
		case slices.Contains(fields[:i], f):
			v.add(at, fmt.Sprintf("%q is named twice", f))
		}
	}
}

func (v *validator) sweep(s *Sweep) {
	if !slices.Contains([]string{"", DecodeFixedDuration, DecodeFixedCount}, s.DecodeTest) {
		v.add("sweep.decode_test", fmt.Sprintf("unknown %q (want fixed_duration or fixed_count)", s.DecodeTest))
	}
	if !slices.Contains([]string{"", PrefillDecodeWarmup, PrefillSeparate, PrefillWarmed}, s.PrefillMode) {
		v.add("sweep.prefill_mode", fmt.Sprintf("unknown %q (want warmed_repeats, decode_warmup or separate)", s.PrefillMode))
	}
	if s.CacheMode != "" && s.CacheMode != CacheShared && s.CacheMode != CacheDistinct {
		v.add("sweep.cache_mode", fmt.Sprintf("unknown %q (want shared or distinct)", s.CacheMode))
	}
	v.nonNegative("", "sweep.duration_seconds", &s.DurationSeconds)
	v.count("", "sweep.max_output_tokens", s.MaxOutputTokens)
	v.count("", "sweep.prefill_repeats", s.PrefillRepeats)
	v.count("", "sweep.repeats", s.Repeats)
	if s.Repeats > MaxRepeats {
		v.add("sweep.repeats", fmt.Sprintf("%d repeats of every cell (%d at most)", s.Repeats, MaxRepeats))
	}
	v.contexts("sweep.contexts", s.Contexts)
	v.contexts("sweep.prefill_contexts", s.PrefillContexts)
	for i, c := range s.Concurrency {
		if c < 1 {
			v.add(fmt.Sprintf("sweep.concurrency[%d]", i), fmt.Sprintf("must be at least 1, got %d", c))
		}
	}
	v.ascending("sweep.concurrency", s.Concurrency)
}

func (v *validator) prefill(ps []Prefill, planned []int) {
	seen := make(map[int]string, len(ps)) // each context's first place
	for i, p := range ps {
		at := "prefill[" + strconv.Itoa(i) + "]"
		v.context(at, p.ContextTokens, planned, "sweep.prefill_contexts")
		if first, twice := seen[p.ContextTokens]; twice {
			v.add(at+".context_tokens", fmt.Sprintf("context %s is measured twice (first as %s)", ContextLabel(p.ContextTokens), first), first+".context_tokens")
		} else {
			seen[p.ContextTokens] = at
		}
		v.status(at, p.Status, p.PromptTokS, "prompt_tok_s")
		v.count(at, ".prompt_tokens", p.PromptTokens)
		v.rate(at, ".prompt_tok_s", p.PromptTokS)
		v.nonNegative(at, ".ttft_ms", p.TTFTMs)
		v.promptRate(at, p)
		v.countPtr(at, ".completed", p.Completed)
		v.rate(at, ".server_prompt_tok_s", p.ServerPromptTokS)
		v.nonNegative(at, ".server_prompt_ms", p.ServerPromptMs)
		v.nonNegative(at, ".cold_ttft_ms", p.ColdTTFTMs)
		v.nonNegative(at, ".idle_wait_seconds", p.IdleWaitSeconds)
		for j, r := range p.Requests {
			req := at + ".requests[" + strconv.Itoa(j) + "]"
			v.count(req, ".prompt_tokens", r.PromptTokens)
			v.nonNegative(req, ".ttft_ms", &r.TTFTMs)
			v.rate(req, ".prompt_tok_s", &r.PromptTokS)
			v.nonNegative(req, ".server_prompt_ms", r.ServerPromptMs)
			v.rate(req, ".server_prompt_tok_s", r.ServerPromptTokS)
		}
	}
}

// promptRate checks a prefill row's rate against its own tokens and TTFT:
// prompt tokens / TTFT, within a tenth (a page rounds "33K"; a median of
// repeats is not quite the median TTFT's rate).
func (v *validator) promptRate(at string, p Prefill) {
	if p.PromptTokS == nil || p.TTFTMs == nil || p.PromptTokens <= 0 || !(*p.TTFTMs > 0) || !fine(p.PromptTokS) || !fine(p.TTFTMs) {
		return
	}
	want := float64(p.PromptTokens) / (*p.TTFTMs / 1000)
	if math.Abs(*p.PromptTokS-want) > 0.1*want {
		v.add(at+".prompt_tok_s", fmt.Sprintf("%s tok/s is not its %d prompt tokens in %s ms (%s tok/s)",
			strconv.FormatFloat(*p.PromptTokS, 'g', 6, 64), p.PromptTokens, strconv.FormatFloat(*p.TTFTMs, 'g', 6, 64), strconv.FormatFloat(want, 'g', 6, 64)),
			at+".prompt_tokens", at+".ttft_ms")
	}
}

func (v *validator) decode(ds []Decode, s *Sweep) {
	seen := make(map[[2]int]string, len(ds)) // each cell's first place
	for i, d := range ds {
		at := "decode[" + strconv.Itoa(i) + "]"
		v.context(at, d.ContextTokens, s.Contexts, "sweep.contexts")
		if d.Concurrency < 1 {
			v.add(at+".concurrency", fmt.Sprintf("must be at least 1, got %d", d.Concurrency))
		} else if len(s.Concurrency) > 0 && !slices.Contains(s.Concurrency, d.Concurrency) {
			v.add(at+".concurrency", fmt.Sprintf("%d is not in sweep.concurrency", d.Concurrency), "sweep.concurrency")
		}
		key := [2]int{d.ContextTokens, d.Concurrency}
		if first, twice := seen[key]; twice {
			v.add(at, fmt.Sprintf("cell %s × %d appears twice (first as %s)", ContextLabel(d.ContextTokens), d.Concurrency, first),
				at+".context_tokens", at+".concurrency", first+".context_tokens", first+".concurrency")
		} else {
			seen[key] = at
		}
		v.date(at+".window_start", d.WindowStart)
		v.cell(at, d)
		v.repeats(at, d, s)
	}
}

// cell checks one measurement of a cell: its figures, power and metrics,
// each on its own and against each other (Impossible).
func (v *validator) cell(at string, d Decode) {
	for _, p := range d.Impossible(v.maxOutput, v.gpus) {
		uses := make([]string, len(p.Uses))
		for i, u := range p.Uses {
			uses[i] = u
			if !strings.HasPrefix(u, "sweep.") && !strings.HasPrefix(u, "hardware.") {
				uses[i] = at + "." + u
			}
		}
		v.add(at+"."+p.Field, p.Msg, uses...)
	}
	v.status(at, d.Status, d.TotalTokS, "total_tok_s")
	v.rate(at, ".total_tok_s", d.TotalTokS)
	v.interval(at+".interval", d)
	v.rate(at, ".per_request_tok_s", d.PerRequestTokS)
	v.rate(at, ".server_per_request_tok_s", d.ServerPerRequestTokS)
	v.rate(at, ".client_rate_of_server_timed", d.ClientRateOfServerTimed)
	v.nonNegative(at, ".avg_active", d.AvgActive)
	v.nonNegative(at, ".window_seconds", d.WindowSeconds)
	if d.AvgActive != nil && *d.AvgActive > float64(d.Concurrency)*1.05 {
		v.add(at+".avg_active", fmt.Sprintf("%g active requests cannot exceed concurrency %d", *d.AvgActive, d.Concurrency), at+".concurrency")
	}
	v.percentiles(at, ".ttft_ms", d.TTFTMs)
	v.percentiles(at, ".tbt_ms", d.TBTMs)
	v.countPtr(at, ".completed", d.Completed)
	v.countPtr(at, ".output_tokens", d.OutputTokens)
	v.count(at, ".attempts", d.Attempts)
	v.nonNegative(at, ".idle_wait_seconds", d.IdleWaitSeconds)
	if p := d.Power; p != nil {
		v.nonNegatives(at+".power", []namedFigure{
			{"energy_joules", &p.EnergyJoules}, {"mean_power_w", &p.MeanPowerW},
			{"tok_s_per_w", p.TokSPerW}, {"joules_per_1k_tokens", p.JoulesPer1KTokens},
		})
		for j, g := range p.GPUs {
			v.nonNegatives(at+".power.gpus["+strconv.Itoa(j)+"]", []namedFigure{
				{"mean_power_w", g.MeanPowerW}, {"peak_power_w", g.PeakPowerW},
				{"mean_sm_clock_mhz", g.MeanSMClockMHz}, {"mean_utilization_pct", g.MeanUtilization},
				{"peak_memory_mib", g.PeakMemoryMiB}, {"peak_temperature_c", g.PeakTemperatureC},
			})
		}
	}
	if c := d.ServerCount; c != nil {
		v.count(at, ".server_count.server_tokens", c.ServerTokens)
		v.count(at, ".server_count.client_tokens", c.ClientTokens)
		if c.Source == "" {
			v.add(at+".server_count.source", "required: which counter the server's figure came from")
		}
	}
	if d.TokenSource != "" && !slices.Contains(TokenSources, d.TokenSource) {
		v.add(at+".token_source", fmt.Sprintf("unknown %q", d.TokenSource))
	}
	if d.WindowSeconds == nil && len(d.PerSecondTokens) > 0 {
		window := Decode{WindowSeconds: &v.duration}
		if most, ok := window.MaxSeconds(); ok && v.duration > 0 && len(d.PerSecondTokens) > most {
			v.add(at+".per_second_tokens", fmt.Sprintf("%d seconds of counts, but the cell gives no window_seconds and sweep.duration_seconds is %s: at most %d (its seconds rounded, and one more)",
				len(d.PerSecondTokens), strconv.FormatFloat(v.duration, 'g', 6, 64), most), at+".window_seconds", "sweep.duration_seconds", at+".per_second_tokens[]")
		}
	}
	for j, n := range d.PerSecondTokens {
		if n < 0 {
			v.count(at, ".per_second_tokens["+strconv.Itoa(j)+"]", n)
		}
	}
	for j, m := range d.ServerMetrics {
		v.nonNegatives(at+".server_metrics["+strconv.Itoa(j)+"]", []namedFigure{
			{"at_seconds", &m.AtSeconds}, {"running", m.Running}, {"waiting", m.Waiting},
			{"kv_cache_usage", m.KVCacheUsage}, {"preemptions", m.Preemptions}, {"spec_acceptance_rate", m.SpecAcceptanceRate},
		})
	}
}

// interval checks a cell's stored interval is one: finite ends of no less
// than 0 in order (a rate is never negative), a confidence of at least 0.5
// (the least any interval has: the median of 2 repeats) and below 1, and a
// figure it is the interval of. It does not ask that the figure lie
// inside: the interval is of the samples' mean (or of the repeats'
// median), which the figure need not be.
func (v *validator) interval(at string, d Decode) {
	in := d.Interval
	if in == nil {
		return
	}
	if d.TotalTokS == nil {
		v.add(at, "an interval of no figure: the cell has no total_tok_s")
	}
	ends := true
	for _, end := range []struct {
		name string
		x    float64
	}{{".low", in.Low}, {".high", in.High}} {
		switch {
		case math.IsNaN(end.x) || math.Abs(end.x) > maxFigure:
			v.add(at+end.name, fmt.Sprintf("must be a finite number within ±%g", float64(maxFigure)))
			ends = false
		case end.x < 0:
			v.add(at+end.name, fmt.Sprintf("an interval of a rate cannot reach below 0, got %s", strconv.FormatFloat(end.x, 'g', 6, 64)))
			ends = false
		}
	}
	if ends && in.Low > in.High {
		v.add(at, fmt.Sprintf("low %s is above high %s", strconv.FormatFloat(in.Low, 'g', 6, 64), strconv.FormatFloat(in.High, 'g', 6, 64)), at+".low", at+".high")
	}
	if !(in.Level >= MinLevel && in.Level < 1) {
		v.add(at+".level", fmt.Sprintf("a confidence from %g (the median of 2 repeats) to below 1 (0.95), got %s", MinLevel, strconv.FormatFloat(in.Level, 'g', 6, 64)))
	}
}

// repeats checks a repeated cell's measurements: each a measurement of the
// same cell, without repeats of its own, no more than the sweep made.
func (v *validator) repeats(at string, d Decode, s *Sweep) {
	if len(d.Repeats) == 0 {
		return
	}
	if len(d.Repeats) > max(s.Repeats, 1) {
		v.add(at+".repeats", fmt.Sprintf("%d measurements, but sweep.repeats is %d", len(d.Repeats), s.Repeats), "sweep.repeats", at+".repeats[]")
	}
	for j, r := range d.Repeats {
		rat := at + ".repeats[" + strconv.Itoa(j) + "]"
		if r.ContextTokens != d.ContextTokens || r.Concurrency != d.Concurrency {
			v.add(rat, fmt.Sprintf("is %s × %d, not the cell's %s × %d", ContextLabel(r.ContextTokens), r.Concurrency, ContextLabel(d.ContextTokens), d.Concurrency),
				at+".context_tokens", at+".concurrency", rat+".context_tokens", rat+".concurrency")
		}
		if len(r.Repeats) > 0 {
			v.add(rat+".repeats", "a repeat has no repeats of its own")
		}
		if r.Interval != nil {
			v.add(rat+".interval", "a repeat carries no interval: the cell's interval is over its repeats")
		}
		v.cell(rat, r)
	}
	// The cell's figures are its median repeat's: an edited one would show
	// and compare a figure no repeat measured.
	m := MedianRepeat(d.Repeats)
	median := d.Repeats[m]
	const why = "a repeated cell's figures are its median repeat's"
	switch {
	case d.Status != median.Status:
		v.add(at+".status", fmt.Sprintf("%s, but its median repeat, repeats[%d], is %s: %s", d.Status, m, median.Status, why), at+".repeats")
	case !sameFigure(d.TotalTokS, median.TotalTokS):
		v.add(at+".total_tok_s", fmt.Sprintf("%s, but its median repeat, repeats[%d], is %s: %s",
			figureText(d.TotalTokS), m, figureText(median.TotalTokS), why), at+".repeats")
	default:
		if field := differingField(d, median); field != "" {
			v.add(at+"."+field, fmt.Sprintf("is not its median repeat's, repeats[%d]: %s", m, why), at+".repeats")
		}
	}
}

// differingField is the first field, by name, in which a repeated cell
// differs from its median repeat, but for the repeats and the interval
// only a cell has; "" when none does.
func differingField(cell, median Decode) string {
	cell.Repeats, cell.Interval = nil, nil
	fields := func(d Decode) map[string]jsontext.Value {
		var out map[string]jsontext.Value
		if data, err := json.Marshal(d); err == nil {
			_ = json.Unmarshal(data, &out)
		}
		return out
	}
	a, b := fields(cell), fields(median)
	names := slices.AppendSeq(slices.Collect(maps.Keys(a)), maps.Keys(b))
	slices.Sort(names)
	for _, name := range slices.Compact(names) {
		if !bytes.Equal(a[name], b[name]) {
			return name
		}
	}
	return ""
}

// sameFigure reports whether two optional figures are both absent or equal.
func sameFigure(a, b *float64) bool {
	return a == nil && b == nil || a != nil && b != nil && *a == *b
}

// figureText is an optional figure as written, or "none".
func figureText(f *float64) string {
	if f == nil {
		return "none"
	}
	return strconv.FormatFloat(*f, 'g', -1, 64)
}

func (v *validator) context(at string, n int, planned []int, plannedField string) {
	switch {
	case n <= 0 || n > maxContextTokens:
		v.add(at+".context_tokens", fmt.Sprintf("want a token count between 1 and %d, got %d", maxContextTokens, n))
	case len(planned) > 0 && !slices.Contains(planned, n):
		v.add(at+".context_tokens", fmt.Sprintf("%s is not in %s", ContextLabel(n), plannedField), plannedField)
	}
}

func (v *validator) status(at string, s Status, figure *float64, figureName string) {
	if !s.Known() {
		v.add(at+".status", fmt.Sprintf("unknown status %q", string(s)))
	}
	if s == StatusValid && figure == nil {
		v.add(at+"."+figureName, "required for a valid measurement")
	}
}

func (v *validator) countPtr(at, name string, n *int) {
	if n != nil {
		v.count(at, name, *n)
	}
}

// fine says whether an optional figure is absent or a finite number of at
// least zero.
func fine(x *float64) bool {
	return x == nil || *x >= 0 && *x <= maxFigure
}

func (v *validator) percentiles(at, name string, p *Percentiles) {
	if p == nil || fine(&p.P50) && fine(p.P90) && fine(p.P99) {
		return
	}
	v.nonNegative(at, name+".p50", &p.P50)
	v.nonNegative(at, name+".p90", p.P90)
	v.nonNegative(at, name+".p99", p.P99)
}

// idPattern is what a run id may look like: it becomes a folder name and a
// URL segment, so nothing that could climb out of either.
var idPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`)

// ValidID reports whether id can name a run's folder and URL safely.
func ValidID(id string) bool { return idPattern.MatchString(id) && !strings.Contains(id, "..") }

// What is physically possible, checked by Validate for every run file and
// by the runner for every cell before it is saved: a figure past these is
// an error, not a measurement.

// MaxSeconds is the most per-second counts a cell's window can hold: its
// seconds rounded (as the runner cuts a window into seconds), and one more
// for a window another tool cut otherwise. Every count is a sample of the
// significance test, so counts past the window would make a cell look
// surer than it was measured. ok is false without window_seconds.
func (d *Decode) MaxSeconds() (int, bool) {
	if d.WindowSeconds == nil || !(*d.WindowSeconds >= 0) || *d.WindowSeconds > maxWindowSeconds {
		return 0, false
	}
	return int(math.Round(*d.WindowSeconds)) + 1, true
}

// maxWindowSeconds bounds the windows MaxSeconds reads: a year, past any
// sweep (and far inside an int).
const maxWindowSeconds = 366 * 24 * 3600

// minWindowSeconds is the shortest window a measured cell may have: a
// millisecond.
const minWindowSeconds = 0.001

// MaxBoardPowerW bounds the board power one GPU can draw. The largest
// accelerators draw about 1.4 kW (NVIDIA's B300, AMD's MI355X); 5 kW is
// past any board made, and a tool that reports more is wrong.
const MaxBoardPowerW = 5000

// RequestTokenSlack is how many tokens past its max_tokens one request may
// yield and still be believed: a server may count an end-of-sequence or a
// stop token it does not print. Sixteen is more than any server adds.
const RequestTokenSlack = 16

// TokenBudget is the most output tokens n requests of at most maxOutput
// tokens each can yield, RequestTokenSlack included; math.MaxInt where the
// product would not fit.
func TokenBudget(n, maxOutput int) int {
	if n <= 0 || maxOutput < 0 {
		return 0
	}
	per := maxOutput + RequestTokenSlack
	if per < maxOutput || n > math.MaxInt/per {
		return math.MaxInt
	}
	return n * per
}

// Impossible lists the figures of a decode cell that cannot be true, each
// named by its field within the cell: more output tokens than the
// requests that produced them could yield, a rate of more, power past
// what the cell's GPUs can draw. maxOutput is the sweep's max output
// tokens (0: unknown, no token bound); gpus the machine's GPU count (0:
// unknown, the cell's own count of them). A problem's Uses are the other
// fields it read, within the cell but for the run's sweep.* and
// hardware.*.
func (d *Decode) Impossible(maxOutput, gpus int) []Problem {
	var out []Problem
	budgetUses := []string{"completed", "concurrency", "sweep.max_output_tokens"}
	add := func(field string, uses []string, format string, args ...any) {
		out = append(out, Problem{Field: field, Msg: fmt.Sprintf(format, args...), Uses: uses})
	}
	if maxOutput > 0 && d.Completed != nil && *d.Completed >= 0 && d.Concurrency > 0 {
		// The requests that produced inside the window: those that
		// completed in it, and at most one still going per stream.
		requests := *d.Completed + d.Concurrency
		budget := TokenBudget(requests, maxOutput)
		if d.OutputTokens != nil && *d.OutputTokens > budget {
			add("output_tokens", budgetUses, "%d tokens, more than %d requests of max_tokens %d can yield (%d)", *d.OutputTokens, requests, maxOutput, budget)
		}
		if d.TotalTokS != nil && d.WindowSeconds != nil && *d.WindowSeconds > 0 && *d.TotalTokS*(*d.WindowSeconds) > float64(budget)*(1+1e-9) {
			add("total_tok_s", append(budgetUses, "window_seconds"), "%s tok/s over %s s is more than %d requests of max_tokens %d can yield (%d)",
				strconv.FormatFloat(*d.TotalTokS, 'g', 6, 64), strconv.FormatFloat(*d.WindowSeconds, 'g', 6, 64), requests, maxOutput, budget)
		}
	}
	if d.Measured() && d.WindowSeconds != nil && !(*d.WindowSeconds >= minWindowSeconds) {
		add("window_seconds", []string{"total_tok_s"}, "a measured cell's window must be at least %g s, got %s", minWindowSeconds, strconv.FormatFloat(*d.WindowSeconds, 'g', -1, 64))
	}
	if most, ok := d.MaxSeconds(); ok && len(d.PerSecondTokens) > most {
		add("per_second_tokens", []string{"window_seconds", "per_second_tokens[]"}, "%d seconds of counts, but the window is %s s: at most %d (its seconds rounded, and one more)",
			len(d.PerSecondTokens), strconv.FormatFloat(*d.WindowSeconds, 'g', 6, 64), most)
	}
	if d.Completed != nil && d.OutputTokens != nil && *d.Completed > *d.OutputTokens {
		add("completed", []string{"output_tokens"}, "%d requests completed in the window, but only %d tokens arrived in it: each brings at least one", *d.Completed, *d.OutputTokens)
	}
	if p := d.Power; p != nil {
		out = append(out, p.impossible(gpus, d.WindowSeconds)...)
	}
	return out
}

// impossible lists the power figures past what gpus GPUs can draw (at
// least the GPUs the figures name), over a window of seconds where known.
func (p *Power) impossible(gpus int, seconds *float64) []Problem {
	var out []Problem
	// A limit for all the cell's GPUs read the machine's count of them;
	// one GPU's limit read nothing else.
	allUses := []string{"hardware.gpu_count"}
	over := func(field string, watts, limit float64, uses []string) {
		if watts > limit {
			out = append(out, Problem{Field: field, Msg: fmt.Sprintf("%s W is more than %s can draw (%g W a GPU at most)",
				strconv.FormatFloat(watts, 'g', 6, 64), gpuCount(limit), float64(MaxBoardPowerW)), Uses: uses})
		}
	}
	all := float64(max(gpus, len(p.GPUs), 1)) * MaxBoardPowerW
	over("power.mean_power_w", p.MeanPowerW, all, allUses)
	for j, g := range p.GPUs {
		at := "power.gpus[" + strconv.Itoa(j) + "]"
		if g.MeanPowerW != nil {
			over(at+".mean_power_w", *g.MeanPowerW, MaxBoardPowerW, nil)
		}
		if g.PeakPowerW != nil {
			over(at+".peak_power_w", *g.PeakPowerW, MaxBoardPowerW, nil)
		}
	}
	for j, t := range p.Trace {
		over("power.trace["+strconv.Itoa(j)+"].power_w", t.PowerW, all, allUses)
	}
	if seconds != nil && *seconds > 0 && p.EnergyJoules > all**seconds*(1+1e-9) {
		out = append(out, Problem{Field: "power.energy_joules", Msg: fmt.Sprintf("%s J in %s s is more than %s can draw",
			strconv.FormatFloat(p.EnergyJoules, 'g', 6, 64), strconv.FormatFloat(*seconds, 'g', 6, 64), gpuCount(all)),
			Uses: append(allUses, "window_seconds")})
	}
	return out
}

// gpuCount names how many GPUs a power limit stands for: "1 GPU", "8 GPUs".
func gpuCount(limit float64) string {
	if n := int(limit / MaxBoardPowerW); n != 1 {
		return strconv.Itoa(n) + " GPUs"
	}
	return "1 GPU"
}

// boardPower checks the hardware's power figures against what its GPUs
// can draw.
func (v *validator) boardPower(r *Run) {
	h := &r.Hardware
	for _, f := range []struct {
		name  string
		watts float64
	}{{"hardware.power_limit_w", h.PowerLimitW}, {"hardware.default_power_limit_w", h.DefaultPowerLimitW}} {
		if f.watts > MaxBoardPowerW {
			v.add(f.name, fmt.Sprintf("%s W is more than a GPU can draw (%d W at most)", strconv.FormatFloat(f.watts, 'g', 6, 64), MaxBoardPowerW))
		}
	}
	if h.IdlePowerW != nil {
		gpus := max(h.GPUCount, 1)
		for _, d := range r.Decode {
			if d.Power != nil {
				gpus = max(gpus, len(d.Power.GPUs))
			}
		}
		if limit := float64(gpus) * MaxBoardPowerW; *h.IdlePowerW > limit {
			v.add("hardware.idle_power_w", fmt.Sprintf("%s W is more than %s can draw (%d W a GPU at most; is hardware.gpu_count right?)",
				strconv.FormatFloat(*h.IdlePowerW, 'g', 6, 64), gpuCount(limit), MaxBoardPowerW), "hardware.gpu_count")
		}
	}
}
