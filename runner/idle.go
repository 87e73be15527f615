package runner

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/matrixgen/matrixgen/internal/plural"
)

// Before each measurement the server must be idle. A cell ends by cutting
// its streams; vLLM, SGLang and llama.cpp stop a request whose client left,
// but Ollama (0.6.5) runs one cut in its prompt to the prompt's end (a
// request sent right after got 10 tok/s instead of 56). So the runner
// waits, up to idle_timeout, for the server's own signal, and records how
// long it waited. Ollama has no signal but a short request's speed, held
// against its speed when the run began, which also falls as long prompts
// fill the cache: a cut request counts busy only for what its prompt has
// left (the cell's longest TTFT), and on Ollama not at all once it
// produced, or an idle Ollama was waited on for the whole idle timeout.

// idleProbe is the short request whose speed tells whether a server with
// no other signal is idle. Its prompt shares nothing with measured ones.
var idleProbe = chatRequest{prompt: "Count slowly from one to one hundred, one number a line.", maxTokens: 24, seed: 7}

const (
	idleProbeTimeout = time.Minute // the idle probe's wait for each token
	// busyShare is the share of its idle rate a probe must reach for the
	// server to count as idle.
	busyShare = 0.8
)

// chooseIdleSignal picks the best signal the server offers, and for a
// server with none measures its idle decode rate, now, before any cell.
func (sw *sweeper) chooseIdleSignal(ctx context.Context) {
	switch own := sw.c.eng.ownIdle(); {
	case sw.probe.Metrics:
		if _, ok, err := sw.metricsIdle(ctx); err == nil && ok {
			sw.idle = &ownIdle{name: "its /metrics running and waiting counts", idle: func(ctx context.Context, _ *client) (bool, error) {
				idle, _, err := sw.metricsIdle(ctx)
				return idle, err
			}}
			return
		}
	case own != nil:
		if _, err := own.idle(ctx, sw.c); err == nil {
			sw.idle = own
			return
		}
	}
	sw.warnf("measuring the server's idle decode rate: %d requests of %d tokens, each up to %v", idleReferenceProbes, idleProbe.maxTokens, idleProbeTimeout)
	if rate := sw.idleReference(ctx); rate > 0 {
		sw.idle = &ownIdle{name: "a short request's decode rate against the idle rate", idle: sw.rateIdle}
		sw.idleRate = rate
	}
}

// idleReferenceProbes is how many idle probes the idle rate is the median
// of: one request's rate varied by half from one to the next on Ollama.
const idleReferenceProbes = 3

// idleReference is the median rate of the idle probes on the idle server;
// 0 when none succeeded.
func (sw *sweeper) idleReference(ctx context.Context) float64 {
	var rates []float64
	for range idleReferenceProbes {
		if rate, err := sw.probeRate(ctx); err == nil && rate > 0 {
			rates = append(rates, rate)
		}
	}
	if len(rates) == 0 {
		return 0
	}
	slices.Sort(rates)
	return rates[len(rates)/2]
}

// waitIdle waits until the server is idle, up to the idle timeout, and
// returns how long it waited; nil when there was nothing to wait for.
func (sw *sweeper) waitIdle(ctx context.Context) (*float64, error) {
	if sw.idle == nil || (sw.idleRate > 0 && sw.cut == 0) {
		return nil, nil
	}
	start := time.Now()
	limit := sw.s.Sweep.IdleTimeout
	said := false
	sw.lastRate = 0
	for {
		asked, cancel := context.WithTimeout(ctx, 30*time.Second)
		idle, err := sw.idle.idle(asked, sw.c)
		cancel()
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if connectionLost(err) {
			// Not busy: gone. The cell's requests find it so, and the sweep
			// waits for it as for a server that stopped answering.
			sw.warnf("note: the server did not answer its idle check (%v)", err)
			return new(time.Since(start).Seconds()), nil
		}
		if waited := time.Since(start); err == nil && idle || waited >= limit {
			if err != nil || !idle {
				sw.warnf("note: the server still looked busy after %v (by %s); measuring anyway", limit.Round(time.Second), sw.idleBy())
			}
			sw.cut = 0
			return new(waited.Seconds()), nil
		}
		if !said {
			sw.warnf("waiting for the server to idle (by %s), up to %v", sw.idleBy(), limit)
			said = true
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// rateIdle asks the idle probe: the server is idle at busyShare of the
// idle rate, or, once the cut streams would have finished (settled), when
// the rate stopped rising since it was last asked (a fuller cache slows it).
func (sw *sweeper) rateIdle(ctx context.Context, _ *client) (bool, error) {
	settled, prev := time.Since(sw.cellEnded) >= sw.busyFor, sw.lastRate
	rate, err := sw.probeRate(ctx)
	sw.lastRate = rate
	return err == nil && (rate >= busyShare*sw.idleRate || (settled && prev > 0 && rate <= 1.1*prev)), err
}

// metricsIdle reads /metrics: idle when no request runs or waits; ok when
// the server reports those counts at all.
func (sw *sweeper) metricsIdle(ctx context.Context) (idle, ok bool, err error) {
	samples, err := sw.c.metrics(ctx, sw.s.Server.MetricsURL)
	if err != nil {
		return false, false, err
	}
	names := sw.c.eng.metrics()
	running := metric(samples, names.running...)
	waiting := metric(samples, names.waiting...)
	if running == nil && waiting == nil {
		return false, false, nil
	}
	return (running == nil || *running == 0) && (waiting == nil || *waiting == 0), true, nil
}

// idleBy names the sign the sweep waits on for the server to idle.
func (sw *sweeper) idleBy() string {
	if sw.idle == nil {
		return "nothing"
	}
	return sw.idle.name
}

// probeRate sends the idle probe and returns its decode rate: the server's
// own where it reports one, else the client's.
func (sw *sweeper) probeRate(ctx context.Context) (float64, error) {
	o := sw.c.stream(ctx, idleProbe, idleProbeTimeout, hooks{})
	if o.err != nil {
		return 0, o.err
	}
	if o.serverTokS > 0 {
		return o.serverTokS, nil
	}
	if len(o.events) < 2 {
		return 0, fmt.Errorf("the idle probe produced %s", plural.Count(len(o.events), "chunk", "chunks"))
	}
	first, last := o.events[0], o.events[len(o.events)-1]
	if !last.at.After(first.at) {
		return 0, errors.New("the idle probe's tokens arrived at once")
	}
	return float64(o.tokens()-first.tokens) / last.at.Sub(first.at).Seconds(), nil
}

// noteCut remembers what a finished cell left running: how many requests
// it cut and how long the server may go on with them. One cut in its
// prompt has the cell's longest TTFT left, less what it had; then Ollama
// drops it (at its next token), another server may run it to max_output
// at the cell's fastest pace. Each is bounded by the idle timeout.
func (sw *sweeper) noteCut(w window, maxOutput int) {
	sw.cut, sw.busyFor, sw.cellEnded = 0, 0, time.Now()
	dropsAtNextToken := sw.c.eng.dropsCutAtNextToken()
	// The longest time to first token of the cell's requests, and their
	// fastest decode rate, tokens a second from the first token to the last.
	prompt, pace := time.Duration(0), 0.0
	for _, o := range w.streams {
		if !o.firstText.IsZero() && !o.sent.IsZero() {
			prompt = max(prompt, o.firstText.Sub(o.sent))
		}
		if n := o.tokens(); n > 1 && !o.firstText.IsZero() && o.end.After(o.firstText) {
			pace = max(pace, float64(n)/o.end.Sub(o.firstText).Seconds())
		}
	}
	for _, o := range w.streams {
		if !errors.Is(o.err, errCut) {
			continue
		}
		sw.cut++
		n := o.tokens()
		left := time.Duration(0)
		if n == 0 || o.firstText.IsZero() {
			left = sw.s.Sweep.IdleTimeout // no prompt's time known
			if prompt > 0 {
				left = prompt - o.end.Sub(o.sent)
				if left <= 0 { // longer than any seen: as long again
					left = prompt
				}
			}
		}
		if !dropsAtNextToken {
			if pace <= 0 {
				left = sw.s.Sweep.IdleTimeout
			} else {
				left += time.Duration(float64(max(maxOutput-n, 0)) / pace * float64(time.Second))
			}
		}
		sw.busyFor = max(sw.busyFor, min(left, sw.s.Sweep.IdleTimeout))
	}
}
