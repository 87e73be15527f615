package runner

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/matrixgen/matrixgen"
	"github.com/matrixgen/matrixgen/measure"
)

// A GPU server pays one-time costs on the first request of a new length
// (kernels compiled and tuned per shape, buffers grown) and after a burst
// of new streams: on an H200 a llama-server's first 8K request took 5.2 s,
// of which its prompt processing took 169 ms. A prefill figure taken from
// that request measures those costs, not the prefill. So each context's
// prefill is measured after an untimed warm-up of the same length, on
// several fresh prompts, and the row publishes their median; the warm-up's
// TTFT is kept as the cold start. Every prompt begins with words of its
// own (a fresh head before the same body), so none is in any prompt cache,
// and each is held against the server's own clock where it keeps one.

// DefaultPrefillRepeats is how many fresh prompts a prefill row measures.
const DefaultPrefillRepeats = 3

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

// measurePrefill measures context n's prefill row: the warm-up, then the
// repeats, the last of them on the context's own prompt, which stays in the
// prefix cache for the decode cells that share it.
func (sw *sweeper) measurePrefill(ctx context.Context, n int, h heads, prompt builtPrompt, salt string, row *matrixgen.Prefill) error {
	start := time.Now()
	waited, err := sw.waitIdle(ctx)
	if err != nil {
		return err
	}
	body := strings.TrimPrefix(prompt.text, h.measured)
	repeats := sw.prefillRepeats()
	sw.logf("%s warming %s up, then measuring its prefill on %s", sw.progress(), matrixgen.ContextLabel(n), plural(repeats, "fresh prompt"))
	shots := make([]prefillShot, 0, repeats)
	warm := sw.prefillShot(ctx, n, h.fresh(0)+body, salt, false)
	if ctx.Err() != nil {
		return ctx.Err()
	}
	// The row is filled aside: a sweep stopped halfway leaves it not run.
	r := matrixgen.Prefill{ContextTokens: n, IdleWaitSeconds: waited}
	failed := sw.prefillFailure(warm.obs, prompt, &r)
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
	if !warm.obs.firstText.IsZero() {
		r.ColdTTFTMs = new(ms(warm.obs.firstText.Sub(warm.obs.sent)))
	}
	summarizePrefill(&r, shots, prompt)
	if !failed {
		r.Status = matrixgen.StatusValid
	}
	if prompt.tokens != n {
		r.Note = fmt.Sprintf("the prompt is %d tokens, not %d: the server's tokenizer could not land on %s exactly", prompt.tokens, n, matrixgen.ContextLabel(n))
	}
	*row = r
	sw.done++
	sw.etaModel.prefillRows++
	sw.etaModel.prefillTime += time.Since(start)
	sw.logf("%s prefill %s: %s", sw.progress(), matrixgen.ContextLabel(n), describePrefill(*row))
	return sw.save()
}

// prefillRepeats is the configured number of repeats.
func (sw *sweeper) prefillRepeats() int {
	return cmp.Or(sw.s.Sweep.PrefillRepeats, DefaultPrefillRepeats) // checked by Run
}

// warmContext sends the context's own prompt once, untimed, for decode
// cells whose prefill row is measured already or not planned.
func (sw *sweeper) warmContext(ctx context.Context, n int, prompt builtPrompt, salt string) error {
	if _, err := sw.waitIdle(ctx); err != nil {
		return err
	}
	sw.c.stream(ctx, chatRequest{prompt: prompt.text, maxTokens: 1, salt: salt, seed: uint64(n)}, sw.s.Sweep.StallTimeout, hooks{})
	return ctx.Err()
}

// prefillShot sends one prefill request, asking for one token, and reads
// the server's own clock for it (when clock is set): from the stream where
// the engine times the prompt there, else from its prompt-time histogram
// around the request.
func (sw *sweeper) prefillShot(ctx context.Context, n int, text, salt string, clock bool) prefillShot {
	hist := sw.c.eng.metrics().promptTime
	var before histogramTotals
	if clock && hist.name != "" && sw.sampler.enabled {
		before = sw.promptHistogram(ctx, hist)
	}
	obs := sw.c.stream(ctx, chatRequest{prompt: text, maxTokens: 1, salt: salt, seed: uint64(n)}, sw.s.Sweep.StallTimeout, hooks{})
	shot := prefillShot{obs: obs, serverMs: obs.serverPromptMs, serverTokens: obs.serverPromptTokens, clock: obs.serverClock}
	if len(before) > 0 && obs.err == nil && shot.serverMs == 0 {
		if seconds, ok := sw.oneMoreObservation(ctx, hist, before); ok && seconds > 0 {
			shot.serverMs, shot.serverTokens, shot.clock = seconds*1000, obs.promptTokens, hist.String()
		}
	}
	return shot
}

// promptHistogram reads the engine's prompt-time histogram; empty when the
// server keeps none or /metrics does not answer.
func (sw *sweeper) promptHistogram(ctx context.Context, h promHistogram) histogramTotals {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	samples, err := sw.c.metrics(ctx, sw.s.Server.MetricsURL)
	if err != nil {
		return nil
	}
	return readHistogram(samples, h)
}

// Histogram observations can trail the end of the stream they belong to
// (vLLM records a request's figures after handing its output on): the
// runner asks again, briefly, before it gives up on the server's clock.
const (
	clockTries = 10
	clockPause = 100 * time.Millisecond
)

// oneMoreObservation waits for the histogram to take in the request just
// finished, and returns the value it took in.
func (sw *sweeper) oneMoreObservation(ctx context.Context, h promHistogram, before histogramTotals) (float64, bool) {
	for try := 0; try < clockTries; try++ {
		if try > 0 {
			select {
			case <-ctx.Done():
				return 0, false
			case <-time.After(clockPause):
			}
		}
		after := sw.promptHistogram(ctx, h)
		if v, ok := oneObservation(before, after); ok {
			return v, true
		}
		if moved(before, after) {
			return 0, false // more than one request moved it: whose was it?
		}
	}
	return 0, false
}

// moved reports whether any series of the histogram counted anything.
func moved(before, after histogramTotals) bool {
	for key, a := range after {
		if a.count != before[key].count {
			return true
		}
	}
	return false
}

// prefillFailure records why a prefill request failed in row, and reports
// whether it did: the server refused a prompt too long (over capacity),
// failed, produced nothing, answered in no time (no rate can be had of
// that), or cut the prompt short.
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
	default:
		return false
	}
	return true
}

// summarizePrefill sets the row's figures from its measured requests: the
// medians of the client's and of the server's.
func summarizePrefill(row *matrixgen.Prefill, shots []prefillShot, prompt builtPrompt) {
	if len(shots) == 0 {
		return
	}
	var rates, ttfts, serverMs, serverRates []float64
	for _, s := range shots {
		o := s.obs
		ttft := ms(o.firstText.Sub(o.sent))
		tokens := cmp.Or(o.promptTokens, prompt.tokens)
		req := matrixgen.PrefillRequest{PromptTokens: tokens, TTFTMs: ttft, PromptTokS: float64(tokens) / (ttft / 1000)}
		if s.serverMs > 0 && !math.IsInf(float64(cmp.Or(s.serverTokens, tokens))/(s.serverMs/1000), 0) {
			req.ServerPromptMs = new(s.serverMs)
			req.ServerPromptTokS = new(float64(cmp.Or(s.serverTokens, tokens)) / (s.serverMs / 1000))
			serverMs, serverRates = append(serverMs, s.serverMs), append(serverRates, *req.ServerPromptTokS)
			row.ServerClock = s.clock
		}
		rates, ttfts = append(rates, req.PromptTokS), append(ttfts, ttft)
		row.Requests = append(row.Requests, req)
		row.PromptTokens = tokens // the last: the context's own prompt
	}
	row.PromptTokS, row.TTFTMs = new(measure.Median(rates)), new(measure.Median(ttfts))
	row.Completed = new(len(shots))
	if len(serverMs) > 0 {
		row.ServerPromptMs, row.ServerPromptTokS = new(measure.Median(serverMs)), new(measure.Median(serverRates))
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
	if p.ColdTTFTMs != nil {
		s += fmt.Sprintf("; cold start %.0f ms", *p.ColdTTFTMs)
	}
	if outside, beyond, ok := p.OutsidePrompt(); ok && beyond {
		s += fmt.Sprintf(" — not the server's prefill speed: %.0f ms of the TTFT were outside its prompt processing", outside)
	}
	return s
}

// plural is "1 request" or "3 requests".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprint(n) + " " + noun + "s"
}
