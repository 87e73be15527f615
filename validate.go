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
	// Uses are the other fields the judgement read: where one could not be
	// decoded, the problem follows from the decoder's and is left out. A
	// problem placed at an object it did not read whole names the members
	// it read; "path[]" is an array's length alone.
	Uses []string
}

// MaxProblems caps how many problems one file reports (runfile's decoder
// too); past that the rest are noise.
const MaxProblems = 20

// Validate lists every value in the run that cannot be true: figures that
// are negative or not finite, concurrency 0, cells named twice, a valid cell
// without its throughput. A run that passes is safe to render.
func (r *Run) Validate() []Problem { return r.ValidateExcept(nil) }

// ValidateExcept is Validate without the problems except reports true
// for, which do not count against MaxProblems either (runfile leaves out
// those that follow from a value it could not decode).
func (r *Run) ValidateExcept(except func(Problem) bool) []Problem {
	v := validator{maxOutput: r.Sweep.MaxOutputTokens, gpus: r.Hardware.GPUCount, duration: r.Sweep.DurationSeconds, except: except}
	switch r.Schema {
	case SchemaVersion:
	case 0:
		v.add("schema", fmt.Sprintf("required: the run file format's version (this build reads %d)", SchemaVersion))
	default:
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
	// maxOutput and gpus bound a cell's tokens and power (Impossible);
	// duration a cell's per-second counts where it gives no window.
	maxOutput, gpus int
	duration        float64
	// except leaves problems out (ValidateExcept); nil keeps them all.
	except func(Problem) bool
}

// date refuses a time outside the years 0000 to 9999 in UTC, as pages and
// files show it: RFC 3339 has four-digit years.
func (v *validator) date(field string, t time.Time) {
	if t.IsZero() {
		return
	}
	if y := t.UTC().Year(); y < 0 || y > 9999 {
		v.add(field, fmt.Sprintf("%s is in the year %d in UTC; a time must fall within the years 0000 to 9999", t.Format(time.RFC3339), y))
	}
}

// add records a problem at field; uses are the other fields it read.
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
	switch {
	case n < 0:
		v.add(at+name, fmt.Sprintf("must not be negative, got %d", n))
	case int64(n) > MaxFigure: // int64: an int cannot hold a trillion on 32-bit machines
		v.add(at+name, fmt.Sprintf("%d is past any count a benchmark measures (%g at most)", n, float64(MaxFigure)))
	}
}

// nonNegative checks an optional figure: finite, not negative, and below
// MaxFigure. The field's name is joined only for a problem: a run has
// thousands of figures.
func (v *validator) nonNegative(at, name string, x *float64) {
	switch {
	case fine(x):
	case math.IsNaN(*x) || math.IsInf(*x, 0):
		v.add(at+name, "must be a finite number")
	case *x < 0:
		v.add(at+name, fmt.Sprintf("must not be negative, got %g", *x))
	default:
		v.add(at+name, fmt.Sprintf("%.6g is past any figure a benchmark measures (%g at most)", *x, float64(MaxFigure)))
	}
}

// namedFigure is a figure and its JSON name.
type namedFigure struct {
	name string
	x    *float64
}

// nonNegatives checks each of an object's figures with nonNegative.
func (v *validator) nonNegatives(at string, figures []namedFigure) {
	for _, f := range figures {
		v.nonNegative(at, "."+f.name, f.x)
	}
}

// MaxCells bounds a sweep's cells (contexts × concurrency levels) and
// each of its lists: 64 times the 8 × 8 of a full sweep, past any a
// person runs, and a page of them builds in moments.
const MaxCells = 4096

// maxGPUs bounds hardware.gpu_count, and so the power its GPUs may draw.
const maxGPUs = 4096

// MaxFigure bounds every figure and count of a run file: a trillion
// (milliseconds, tokens per second, watts, seconds, tokens alike).
const MaxFigure = 1e12

// maxTokS bounds a rate of tokens, far past any server's.
const maxTokS = 1e8

// rate checks an optional tokens-per-second figure, within maxTokS.
func (v *validator) rate(at, name string, x *float64) {
	v.nonNegative(at, name, x)
	if fine(x) && x != nil && *x > maxTokS {
		v.add(at+name, fmt.Sprintf("%.6g tok/s is past any server's (%g at most)", *x, float64(maxTokS)))
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

// ascending checks that a list names each size once, smallest first.
func (v *validator) ascending(field string, xs []int) {
	if !slices.IsSorted(xs) || len(slices.Compact(slices.Clone(xs))) != len(xs) {
		v.add(field, "must be ascending without repeats")
	}
}

// given checks hardware.given names fields a person can give, each once.
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
	// A page lays out every cell of the sweep: a few bytes of lists must
	// not make a page of millions of cells.
	for _, l := range []struct {
		name string
		n    int
	}{{"sweep.contexts", len(s.Contexts)}, {"sweep.prefill_contexts", len(s.PrefillContexts)}, {"sweep.concurrency", len(s.Concurrency)}} {
		if l.n > MaxCells {
			v.add(l.name, fmt.Sprintf("%d entries; a sweep has at most %d", l.n, MaxCells))
		}
	}
	if n := len(s.Contexts) * len(s.Concurrency); n > MaxCells && len(s.Contexts) <= MaxCells && len(s.Concurrency) <= MaxCells {
		v.add("sweep", fmt.Sprintf("%d contexts × %d concurrency levels are %d cells; a sweep has at most %d",
			len(s.Contexts), len(s.Concurrency), n, MaxCells), "sweep.contexts[]", "sweep.concurrency[]")
	}
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

// promptRate checks a prefill row's rate is its prompt tokens / TTFT,
// within a tenth (a median of repeats is not quite the median TTFT's rate).
func (v *validator) promptRate(at string, p Prefill) {
	if p.PromptTokS == nil || p.TTFTMs == nil || p.PromptTokens <= 0 || !(*p.TTFTMs > 0) || !fine(p.PromptTokS) || !fine(p.TTFTMs) {
		return
	}
	want := float64(p.PromptTokens) / (*p.TTFTMs / 1000)
	if math.Abs(*p.PromptTokS-want) > 0.1*want {
		v.add(at+".prompt_tok_s", fmt.Sprintf("%.6g tok/s is not its %d prompt tokens in %.6g ms (%.6g tok/s)",
			*p.PromptTokS, p.PromptTokens, *p.TTFTMs, want), at+".prompt_tokens", at+".ttft_ms")
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

// Problems is every problem Validate finds in the cell on its own (not
// against the sweep's plan or other cells), fields named from the cell
// ("output_tokens"): the runner holds each cell it measures to them, so
// that no run file it writes fails Validate.
func (d Decode) Problems(maxOutput, gpus int, duration float64) []Problem {
	v := validator{maxOutput: maxOutput, gpus: gpus, duration: duration}
	v.cell("", d)
	for i := range v.problems {
		v.problems[i].Field = strings.TrimPrefix(v.problems[i].Field, ".")
	}
	return v.problems
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
		if most, ok := maxSeconds(&v.duration); ok && v.duration > 0 && len(d.PerSecondTokens) > most {
			v.add(at+".per_second_tokens", fmt.Sprintf("%d seconds of counts, but the cell gives no window_seconds and sweep.duration_seconds is %.6g: at most %d (its seconds rounded, and one more)",
				len(d.PerSecondTokens), v.duration, most), at+".window_seconds", "sweep.duration_seconds", at+".per_second_tokens[]")
		}
	}
	for j, n := range d.PerSecondTokens {
		if n < 0 || int64(n) > MaxFigure {
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

// interval checks a cell's stored interval: finite ends of no less than 0
// in order, a confidence from MinLevel to below 1, and a figure it is of
// (which need not lie inside: the interval is of the samples' mean).
func (v *validator) interval(at string, d Decode) {
	in := d.Interval
	if in == nil {
		return
	}
	if d.TotalTokS == nil {
		v.add(at, "an interval of no figure: the cell has no total_tok_s")
	}
	for _, end := range []namedFigure{{".low", &in.Low}, {".high", &in.High}} {
		switch x := *end.x; {
		case math.IsNaN(x) || math.Abs(x) > MaxFigure:
			v.add(at+end.name, fmt.Sprintf("must be a finite number within ±%g", float64(MaxFigure)))
		case x < 0:
			v.add(at+end.name, fmt.Sprintf("an interval of a rate cannot reach below 0, got %.6g", x))
		}
	}
	if fine(&in.Low) && fine(&in.High) && in.Low > in.High {
		v.add(at, fmt.Sprintf("low %.6g is above high %.6g", in.Low, in.High), at+".low", at+".high")
	}
	if !(in.Level >= MinLevel && in.Level < 1) {
		v.add(at+".level", fmt.Sprintf("a confidence from %g (the median of 2 repeats) to below 1 (0.95), got %.6g", MinLevel, in.Level))
	}
}

// repeats checks a repeated cell's measurements: each of the same cell,
// without repeats of its own, no more than the sweep made.
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
	// An edited figure would show one no repeat measured.
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
// differs from its median repeat, but for its repeats and interval.
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
	return x == nil || *x >= 0 && *x <= MaxFigure
}

func (v *validator) percentiles(at, name string, p *Percentiles) {
	if p == nil {
		return
	}
	if !fine(&p.P50) || !fine(p.P90) || !fine(p.P99) {
		v.nonNegative(at, name+".p50", &p.P50)
		v.nonNegative(at, name+".p90", p.P90)
		v.nonNegative(at, name+".p99", p.P99)
		return
	}
	// A higher percentile is never below a lower one.
	below, belowName := p.P50, "p50"
	for _, q := range []namedFigure{{"p90", p.P90}, {"p99", p.P99}} {
		if q.x == nil {
			continue
		}
		if *q.x < below*(1-1e-9) {
			v.add(at+name+"."+q.name, fmt.Sprintf("%.6g is below the %s of %.6g: a higher percentile is never lower", *q.x, belowName, below), at+name+"."+belowName)
		}
		below, belowName = *q.x, q.name
	}
}

// idPattern is what a run id may look like: it becomes a folder name and a
// URL segment, so nothing that could climb out of either.
var idPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`)

// ValidID reports whether id can name a run's folder and URL safely, on
// every system a site is built or served on (IDRule).
func ValidID(id string) bool {
	return idPattern.MatchString(id) && !strings.Contains(id, "..") && !strings.HasSuffix(id, ".") && !windowsDevice(id)
}

// IDRule says what ValidID accepts, for every message that refuses an id.
const IDRule = "letters, digits, '.', '_' and '-', at most 128, starting with a letter or digit, " +
	"without '..' or a final '.', and not a name Windows keeps for a device (CON, NUL, COM1, …)"

// windowsDevice reports whether id is a name Windows keeps for a device,
// whatever follows its first dot (aux.json): no folder can have it there.
func windowsDevice(id string) bool {
	base, _, _ := strings.Cut(strings.ToUpper(id), ".")
	switch {
	case base == "CON" || base == "PRN" || base == "AUX" || base == "NUL":
		return true
	case len(base) == 4 && (strings.HasPrefix(base, "COM") || strings.HasPrefix(base, "LPT")):
		return '1' <= base[3] && base[3] <= '9'
	}
	return false
}

// What is physically possible, checked by Validate and by the runner
// before it saves a cell: a figure past these is an error.

// maxSeconds is the most per-second counts a window of seconds can hold:
// its seconds rounded, and one more for another tool's cut (more would make
// a cell look surer than it was). ok is false without a window.
func maxSeconds(seconds *float64) (int, bool) {
	if seconds == nil || !(*seconds >= 0) || *seconds > maxWindowSeconds {
		return 0, false
	}
	return int(math.Round(*seconds)) + 1, true
}

// maxWindowSeconds bounds the windows maxSeconds reads: a year.
const maxWindowSeconds = 366 * 24 * 3600

// minWindowSeconds is the shortest window a measured cell may have.
const minWindowSeconds = 0.001

// MaxBoardPowerW bounds the board power one GPU can draw: the largest
// draw about 1.4 kW, so a tool that reports more is wrong.
const MaxBoardPowerW = 5000

// RequestTokenSlack is how many tokens past its max_tokens one request may
// yield and be believed: a server may count a stop token it does not print.
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

// Impossible lists the figures of a decode cell that cannot be true (more
// tokens than its requests could yield, power past its GPUs'), each named
// by its field within the cell, its Uses too but for sweep.* and
// hardware.*. maxOutput and gpus are the sweep's and machine's (0: unknown).
func (d *Decode) Impossible(maxOutput, gpus int) []Problem {
	var out []Problem
	budgetUses := []string{"completed", "concurrency", "sweep.max_output_tokens"}
	add := func(field string, uses []string, format string, args ...any) {
		out = append(out, Problem{Field: field, Msg: fmt.Sprintf(format, args...), Uses: uses})
	}
	if maxOutput > 0 && d.Completed != nil && *d.Completed >= 0 && d.Concurrency > 0 {
		// Those that completed in the window, and one going per stream.
		requests := math.MaxInt // a count no int holds: no bound to pass
		if *d.Completed <= math.MaxInt-d.Concurrency {
			requests = *d.Completed + d.Concurrency
		}
		budget := TokenBudget(requests, maxOutput)
		if d.OutputTokens != nil && *d.OutputTokens > budget {
			add("output_tokens", budgetUses, "%d tokens, more than %d requests of max_tokens %d can yield (%d)", *d.OutputTokens, requests, maxOutput, budget)
		}
		if d.TotalTokS != nil && d.WindowSeconds != nil && *d.WindowSeconds > 0 && *d.TotalTokS*(*d.WindowSeconds) > float64(budget)*(1+1e-9) {
			add("total_tok_s", append(budgetUses, "window_seconds"), "%.6g tok/s over %.6g s is more than %d requests of max_tokens %d can yield (%d)",
				*d.TotalTokS, *d.WindowSeconds, requests, maxOutput, budget)
		}
	}
	// The throughput is its tokens over its window, within a hundredth and
	// a token (another tool's rounding); a figure typed by hand is not.
	if d.TotalTokS != nil && d.OutputTokens != nil && d.WindowSeconds != nil && *d.WindowSeconds >= minWindowSeconds {
		want := float64(*d.OutputTokens) / *d.WindowSeconds
		if math.Abs(*d.TotalTokS-want) > 0.01*want + 1 / *d.WindowSeconds {
			add("total_tok_s", []string{"output_tokens", "window_seconds"}, "%.6g tok/s is not its %d tokens in %.6g s (%.6g tok/s)",
				*d.TotalTokS, *d.OutputTokens, *d.WindowSeconds, want)
		}
	}
	if d.Measured() && d.WindowSeconds != nil && !(*d.WindowSeconds >= minWindowSeconds) {
		add("window_seconds", []string{"total_tok_s"}, "a measured cell's window must be at least %g s, got %g", minWindowSeconds, *d.WindowSeconds)
	}
	if most, ok := maxSeconds(d.WindowSeconds); ok && len(d.PerSecondTokens) > most {
		add("per_second_tokens", []string{"window_seconds", "per_second_tokens[]"}, "%d seconds of counts, but the window is %.6g s: at most %d (its seconds rounded, and one more)",
			len(d.PerSecondTokens), *d.WindowSeconds, most)
	}
	if d.Completed != nil && d.OutputTokens != nil && *d.Completed > *d.OutputTokens {
		add("completed", []string{"output_tokens"}, "%d requests completed in the window, but only %d tokens arrived in it: each brings at least one", *d.Completed, *d.OutputTokens)
	}
	p := d.Power
	if p == nil {
		return out
	}
	// A limit for all the cell's GPUs (at least those the figures name)
	// read the machine's count of them.
	allUses := []string{"hardware.gpu_count"}
	over := func(field string, watts *float64, limit float64, uses []string) {
		if watts != nil && *watts > limit {
			add(field, uses, "%.6g W is more than %s can draw (%g W a GPU at most)",
				*watts, gpuCount(limit), float64(MaxBoardPowerW))
		}
	}
	all := float64(max(gpus, len(p.GPUs), 1)) * MaxBoardPowerW
	over("power.mean_power_w", &p.MeanPowerW, all, allUses)
	for j, g := range p.GPUs {
		at := "power.gpus[" + strconv.Itoa(j) + "]"
		over(at+".mean_power_w", g.MeanPowerW, MaxBoardPowerW, nil)
		over(at+".peak_power_w", g.PeakPowerW, MaxBoardPowerW, nil)
	}
	for j, t := range p.Trace {
		over("power.trace["+strconv.Itoa(j)+"].power_w", &t.PowerW, all, allUses)
	}
	if w := d.WindowSeconds; w != nil && *w > 0 && p.EnergyJoules > all**w*(1+1e-9) {
		add("power.energy_joules", append(allUses, "window_seconds"), "%.6g J in %.6g s is more than %s can draw",
			p.EnergyJoules, *w, gpuCount(all))
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

// boardPower checks the hardware's power figures against its GPUs'.
func (v *validator) boardPower(r *Run) {
	h := &r.Hardware
	for _, f := range []namedFigure{
		{"hardware.power_limit_w", &h.PowerLimitW}, {"hardware.default_power_limit_w", &h.DefaultPowerLimitW},
	} {
		if *f.x > MaxBoardPowerW {
			v.add(f.name, fmt.Sprintf("%.6g W is more than a GPU can draw (%d W at most)", *f.x, MaxBoardPowerW))
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
			v.add("hardware.idle_power_w", fmt.Sprintf("%.6g W is more than %s can draw (%d W a GPU at most; is hardware.gpu_count right?)",
				*h.IdlePowerW, gpuCount(limit), MaxBoardPowerW), "hardware.gpu_count")
		}
	}
}
