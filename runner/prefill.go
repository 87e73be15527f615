package runner

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/matrixgen/matrixgen"
	"github.com/matrixgen/matrixgen/internal/plural"
	"github.com/matrixgen/matrixgen/internal/prom"
	"github.com/matrixgen/matrixgen/measure"
)

// A GPU server pays one-time costs on the first request of a new length
// (on an H200 a llama-server's first 8K request took 5.2 s, its prompt
// 169 ms). So each context's prefill is measured after an untimed warm-up
// of the same length (its TTFT kept as the cold start), on several fresh
// prompts (a head of their own: none in any prompt cache), each held
// against the server's own clock where it keeps one; the row is their median.

// defaultPrefillRepeats is how many fresh prompts a prefill row measures.
const defaultPrefillRepeats = 3

// MaxPrefillRepeats bounds the repeats: each needs a head of its own, and
// the warm-up one more.
const MaxPrefillRepeats = freshHeads

// prefillShot is what one prefill request showed.
type prefillShot struct {
	obs *observation
	// serverMs and serverTokens are the server's own timing of the prompt
	// (from the stream or its metrics), clock where it came from.
	serverMs     float64
	serverTokens int
	clock        string
}

// measurePrefill measures context n's prefill row (set-up begun at start),
// its last request on the context's own prompt, cached for the decode cells.
func (sw *sweeper) measurePrefill(ctx context.Context, n int, h heads, prompt builtPrompt, salt string, row *matrixgen.Prefill, start time.Time) error {
	waited, err := sw.waitIdle(ctx)
	if err != nil {
		return err
	}
	body := strings.TrimPrefix(prompt.text, h.measured)
	repeats := cmp.Or(sw.s.Sweep.PrefillRepeats, defaultPrefillRepeats) // checked by Run
	sw.warnf("%s warming %s up, then measuring its prefill on %s, each request up to %v without a token", sw.progress(), matrixgen.ContextLabel(n), plural.Count(repeats, "fresh prompt", "fresh prompts"), sw.s.Sweep.StallTimeout)
	shots := make([]prefillShot, 0, repeats)
	warm := sw.prefillShot(ctx, n, h.fresh(0)+body, salt, false)
	if ctx.Err() != nil {
		return ctx.Err()
	}
	// The row is filled aside: a sweep stopped halfway leaves it not run.
	r := matrixgen.Prefill{ContextTokens: n, IdleWaitSeconds: waited}
	// The warm-up is untimed: only a prompt the server cannot take ends the
	// row there; any other failure is the repeats' to confirm.
	failed := sw.prefillFailure(warm.obs, prompt, &r) && r.Status == matrixgen.StatusOverCapacity
	if !failed && r.Status != "" {
		sw.logf("note: %s warm-up: %s; measuring anyway", matrixgen.ContextLabel(n), r.Reason)
		r.Status, r.Reason = "", ""
	}
	for k := 1; !failed && k <= repeats; k++ {
		text := h.fresh(k) + body
		if k == repeats {
			text = prompt.text
		}
		shot := sw.prefillShot(ctx, n, text, salt, true)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if failed = sw.prefillFailure(shot.obs, prompt, &r); !failed {
			shots = append(shots, shot)
		}
	}
	if !failed {
		// A failed row keeps its reason and no figures: a chart or a
		// table must not show a rate beside an error.
		r.Status = matrixgen.StatusValid
		if ttft, ok := warm.ttft(); ok {
			r.ColdTTFTMs = new(ttft)
		}
		summarizePrefill(&r, shots, prompt, sw.logf)
	}
	if prompt.tokens != n {
		r.Note = fmt.Sprintf("the prompt is %d tokens, not %d: the server's tokenizer could not land on %s exactly", prompt.tokens, n, matrixgen.ContextLabel(n))
	}
	*row = r
	sw.done++
	sw.contextSetUp(n, start)
	sw.logf("%s prefill %s: %s", sw.progress(), matrixgen.ContextLabel(n), describePrefill(*row))
	return sw.save()
}

// warmContext sends the context's own prompt once, untimed, for decode
// cells whose prefill row is measured already or not planned.
func (sw *sweeper) warmContext(ctx context.Context, n int, prompt builtPrompt, salt string) error {
	if _, err := sw.waitIdle(ctx); err != nil {
		return err
	}
	sw.prefillShot(ctx, n, prompt.text, salt, false)
	return ctx.Err()
}

// prefillShot sends one prefill request, asking for one token, and reads
// the server's own clock for it (when clock is set): from the stream, else
// from its prompt-time histogram around the request.
func (sw *sweeper) prefillShot(ctx context.Context, n int, text, salt string, clock bool) prefillShot {
	hist := sw.c.eng.metrics().promptTime
	var before prom.Totals
	if clock && hist.Name != "" && sw.sampler.enabled {
		before = sw.promptHistogram(ctx, hist)
	}
	obs := sw.c.stream(ctx, chatRequest{prompt: text, maxTokens: 1, salt: salt, seed: uint64(n)}, sw.s.Sweep.StallTimeout, hooks{})
	shot := prefillShot{obs: obs, serverMs: obs.serverPromptMs, serverTokens: obs.serverPromptTokens, clock: obs.serverClock}
	if len(before) > 0 && obs.err == nil && shot.serverMs == 0 {
		if seconds, ok := sw.oneMoreObservation(ctx, hist, before); ok {
			shot.serverMs, shot.serverTokens, shot.clock = seconds*1000, obs.promptTokens, hist.String()
		}
	}
	return shot
}

// ttft is the request's time to first token, when it has a plausible one
// (not before the request was on the wire).
func (s prefillShot) ttft() (float64, bool) {
	o := s.obs
	if o == nil || o.firstText.IsZero() || !o.firstText.After(o.sent) {
		return 0, false
	}
	return float64(o.firstText.Sub(o.sent)) / float64(time.Millisecond), true
}

// maxPrefillTokS bounds a prefill rate any server could reach (a hundred
// times the fastest published): beyond it a clock is broken or hostile.
const maxPrefillTokS = 1e8

// serverReading is the server's own timing of the request's prompt, when
// a server could give it: positive, within the TTFT, for at most the
// prompt's tokens, at a rate below maxPrefillTokS.
func (s prefillShot) serverReading(ttft float64, tokens int) (ms float64, tokS float64, ok bool) {
	n := cmp.Or(s.serverTokens, tokens)
	if !(s.serverMs > 0) || s.serverMs > ttft || n <= 0 || n > tokens {
		return 0, 0, false
	}
	tokS = float64(n) / (s.serverMs / 1000)
	return s.serverMs, tokS, tokS <= maxPrefillTokS
}

// clockBudget bounds the time spent reading the server's clock around one
// request.
const clockBudget = 2 * time.Second

// promptHistogram reads the engine's prompt-time histogram; empty when the
// server keeps none or /metrics does not answer.
func (sw *sweeper) promptHistogram(ctx context.Context, h prom.Histogram) prom.Totals {
	ctx, cancel := context.WithTimeout(ctx, clockBudget)
	defer cancel()
	samples, err := sw.c.metrics(ctx, sw.s.Server.MetricsURL)
	if err != nil {
		return nil
	}
	return h.Totals(samples)
}

// Histogram observations can trail the end of their stream (vLLM's do):
// the runner asks again, briefly, before it gives up on the server's clock.
const (
	clockTries = 10
	clockPause = 100 * time.Millisecond
)

// oneMoreObservation waits for the histogram to take in the request just
// finished, and returns the value it took in.
func (sw *sweeper) oneMoreObservation(ctx context.Context, h prom.Histogram, before prom.Totals) (float64, bool) {
	ctx, cancel := context.WithTimeout(ctx, clockBudget)
	defer cancel()
	for try := 0; try < clockTries; try++ {
		if try > 0 {
			select {
			case <-ctx.Done():
				return 0, false
			case <-time.After(clockPause):
			}
		}
		after := sw.promptHistogram(ctx, h)
		if v, ok := oneObservation(before, after); ok || moved(before, after) {
			return v, ok // moved, but not by one request: whose was it?
		}
	}
	return 0, false
}

// moved reports whether any series of the histogram counted anything.
func moved(before, after prom.Totals) bool {
	for key, a := range after {
		if a.Count != before[key].Count {
			return true
		}
	}
	return false
}

// prefillFailure records in row why a prefill request failed, and reports
// whether it did.
func (sw *sweeper) prefillFailure(obs *observation, prompt builtPrompt, row *matrixgen.Prefill) bool {
	// A fresh head is the measured one's words in another order, which a
	// tokenizer may count a token or two apart.
	slack := max(prompt.slack(), headWords)
	switch {
	case obs.err != nil && sw.c.contextTooLong(obs.err):
		row.Status, row.Reason = matrixgen.StatusOverCapacity, obs.err.Error()
	case obs.err != nil:
		row.Status, row.Reason = matrixgen.StatusError, obs.err.Error()
	case obs.firstText.IsZero():
		row.Status, row.Reason = matrixgen.StatusError, "the prefill request produced no token"
	case !obs.firstText.After(obs.sent):
		row.Status, row.Reason = matrixgen.StatusError, "the first token came no time after the request was sent: no prefill rate can be had of that"
	case obs.promptTokens > 0 && obs.promptTokens < prompt.tokens-slack:
		row.Status = matrixgen.StatusError
		row.Reason = fmt.Sprintf("the server cut the prompt: it reported %d prompt tokens for %d sent", obs.promptTokens, prompt.tokens)
	case obs.promptTokens > prompt.tokens+slack:
		row.Status = matrixgen.StatusError
		row.Reason = fmt.Sprintf("impossible usage from the server: %d prompt tokens for a prompt of %d", obs.promptTokens, prompt.tokens)
	default:
		return false
	}
	return true
}

// summarizePrefill sets the row's figures from its measured requests: the
// client's medians and, where the server timed every one, the server's,
// so both are over the same requests. An impossible reading is dropped.
func summarizePrefill(row *matrixgen.Prefill, shots []prefillShot, prompt builtPrompt, logf func(string, ...any)) {
	if len(shots) == 0 {
		return
	}
	var rates, ttfts, serverMs, serverRates []float64
	for _, s := range shots {
		ttft, _ := s.ttft() // prefillFailure refused those without
		tokens := cmp.Or(s.obs.promptTokens, prompt.tokens)
		req := matrixgen.PrefillRequest{PromptTokens: tokens, TTFTMs: ttft, PromptTokS: float64(tokens) / (ttft / 1000)}
		if sms, tokS, ok := s.serverReading(ttft, tokens); ok {
			req.ServerPromptMs, req.ServerPromptTokS = new(sms), new(tokS)
			serverMs, serverRates = append(serverMs, sms), append(serverRates, tokS)
			row.ServerClock = s.clock
		} else if s.serverMs != 0 && logf != nil {
			logf("note: %s prefill: the server's own timing (%g ms for %d tokens, by %s) is impossible beside a TTFT of %.1f ms; not used",
				matrixgen.ContextLabel(row.ContextTokens), s.serverMs, s.serverTokens, s.clock, ttft)
		}
		rates, ttfts = append(rates, req.PromptTokS), append(ttfts, ttft)
		row.Requests = append(row.Requests, req)
		row.PromptTokens = tokens // the last: the context's own prompt
	}
	row.PromptTokS, row.TTFTMs = new(measure.Median(rates)), new(measure.Median(ttfts))
	row.Completed = new(len(shots))
	if len(serverMs) == len(shots) {
		row.ServerPromptMs, row.ServerPromptTokS = new(measure.Median(serverMs)), new(measure.Median(serverRates))
	} else {
		row.ServerClock = ""
	}
	if len(shots) == 1 {
		row.Requests = nil // the row's own figures say it all
	}
}

// describePrefill is a row's figures for the log.
func describePrefill(p matrixgen.Prefill) string {
	if p.Status != matrixgen.StatusValid {
		return p.Status.Label() + ": " + p.Reason
	}
	s := fmt.Sprintf("%.0f tok/s, TTFT %.0f ms (%d prompt tokens", *p.PromptTokS, *p.TTFTMs, p.PromptTokens)
	if low, high, ok := p.PromptTokSRange(); ok {
		s += fmt.Sprintf("; median of %d, %.0f–%.0f tok/s", len(p.Requests), low, high)
	}
	s += ")"
	if p.ServerPromptTokS != nil {
		s += fmt.Sprintf("; the server's own %.0f tok/s (%.0f ms)", *p.ServerPromptTokS, *p.ServerPromptMs)
	}
	if outside, beyond, ok := p.OutsidePrompt(); ok && beyond {
		s += fmt.Sprintf(" — not the server's prefill speed: %.0f ms of the TTFT were outside its prompt processing", outside)
	}
	if p.ColdTTFTMs != nil {
		s += fmt.Sprintf("; the first request of this length (cold start) %.0f ms", *p.ColdTTFTMs)
	}
	return s
}

// oneObservation is the value the histogram took in from before to after,
// when each series that moved moved by one observation (tensor-parallel
// ranks observe the same request: averaged). Anything else (another
// request, a restart) leaves the figure unknown.
func oneObservation(before, after prom.Totals) (float64, bool) {
	var values []float64
	for key, a := range after {
		b, seen := before[key]
		switch dc := a.Count - b.Count; {
		case dc == 0:
		case dc == 1 && seen && a.Sum >= b.Sum && !math.IsInf(a.Sum, 0):
			values = append(values, a.Sum-b.Sum)
		default: // a series born since, or one that moved otherwise
			return 0, false
		}
	}
	if len(values) == 0 {
		return 0, false
	}
	// Ranks observe one request alike; series that disagree observed
	// different ones.
	mean := 0.0
	for _, v := range values {
		mean += v / float64(len(values))
	}
	for _, v := range values {
		if math.Abs(v-mean) > 0.05*mean {
			return 0, false
		}
	}
	return mean, mean > 0 && !math.IsInf(mean, 0)
}
