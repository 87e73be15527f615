package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/matrixgen/matrixgen"
	"github.com/matrixgen/matrixgen/internal/plural"
	"github.com/matrixgen/matrixgen/measure"
)

// cellPlan is one decode cell to run.
type cellPlan struct {
	context     int
	concurrency int
	prompt      string // the context, warmed by the scout in shared mode
	// promptTokens is the least prompt length the server may report for
	// the context before the prompt counts as cut.
	promptTokens int
	salt         string // the context's cache salt
	attempt      int
	sweep        Sweep     // the window, output cap, cache mode and timeouts
	live         io.Writer // a terminal's status line, or nil
	label        string
	// baselineActive is the share of time a stream produced tokens in the
	// context's lowest-concurrency cell (0: this is the lowest): the gaps a
	// closed loop makes by itself.
	baselineActive float64
	// counter is the server's own count of generated tokens, if it keeps one.
	counter serverCounter
}

// cellRun is the state of a running cell, shared by its streams.
type cellRun struct {
	tokens    atomic.Int64 // every token that arrived, for the live line
	mu        sync.Mutex
	producing int
	changed   chan struct{}
	streams   []*observation
	errs      []error
}

// add keeps a stream that ended, and its error when it failed.
func (r *cellRun) add(o *observation, failed bool) {
	r.mu.Lock()
	r.streams = append(r.streams, o)
	if failed {
		r.errs = append(r.errs, o.err)
	}
	r.mu.Unlock()
}

func (r *cellRun) bump(delta int) {
	r.mu.Lock()
	r.producing += delta
	r.mu.Unlock()
	select {
	case r.changed <- struct{}{}:
	default:
	}
}

// decodeCell runs C closed-loop streams. The window opens when all C are
// producing tokens (or the warm-up times out) and closes on the clock;
// streams still going are cut, what they delivered inside it counts.
func (c *client) decodeCell(ctx context.Context, p cellPlan, sampler *metricsSampler) (matrixgen.Decode, window, error) {
	d := matrixgen.Decode{ContextTokens: p.context, Concurrency: p.concurrency, Status: matrixgen.StatusValid, Attempts: p.attempt}
	run := &cellRun{changed: make(chan struct{}, 1)}
	streamCtx, cut := context.WithCancelCause(ctx)
	defer cut(errCut)
	var wg sync.WaitGroup
	for i := range p.concurrency {
		wg.Go(func() { c.closedLoop(streamCtx, p, i, run) })
	}
	stop := func(cause error) { cut(cause); wg.Wait() }
	cancelled := func() (matrixgen.Decode, window, error) {
		stop(context.Cause(ctx))
		return d, window{}, ctx.Err()
	}
	var windowStart atomic.Int64 // unix nanoseconds once the window opens
	if p.live != nil {
		stopLive := showLive(p, run, &windowStart)
		defer stopLive()
	}

	// Wait for every stream to produce, or for the warm-up to run out.
	openedByTimeout := false
	deadline := time.NewTimer(p.sweep.WarmupTimeout)
	defer deadline.Stop()
wait:
	for {
		run.mu.Lock()
		ready, failed := run.producing >= p.concurrency, len(run.errs) > 0
		run.mu.Unlock()
		switch {
		case ready:
			break wait
		case failed:
			stop(errCut)
			return c.failed(d, run)
		}
		select {
		case <-ctx.Done():
			return cancelled()
		case <-deadline.C:
			openedByTimeout = true
			break wait
		case <-run.changed:
		}
	}
	w := window{start: time.Now()}
	d.WindowStart = w.start.UTC()
	windowStart.Store(w.start.UnixNano())
	samples := sampler.during(ctx, w.start, p.sweep.Duration)
	before, counted := sampler.counter(ctx, p.counter.metric)
	select {
	case <-ctx.Done():
		return cancelled()
	case <-time.After(time.Until(w.start.Add(p.sweep.Duration))):
	}
	w.end = time.Now()
	after, countedAfter := sampler.counter(ctx, p.counter.metric)
	stop(errCut)
	d.ServerMetrics = samples()
	run.mu.Lock()
	w.streams = run.streams
	errs := run.errs
	run.mu.Unlock()
	if len(errs) > 0 {
		return c.failed(d, run)
	}
	w.figures(&d)
	if counted && countedAfter {
		d.ServerCount = w.counterCount(p.counter, after-before, *d.OutputTokens)
	} else {
		d.ServerCount = w.requestCount()
	}
	d.Status, d.Reason = measure.Classify(d, p.concurrency, openedByTimeout, p.baselineActive)
	if short := w.truncated(p.promptTokens); short > 0 {
		d.Status = matrixgen.StatusError
		d.Reason = fmt.Sprintf("the server cut the prompt: it reported %d prompt tokens for a prompt of more than %d", short, p.promptTokens)
	}
	return d, w, nil
}

// failed marks a cell whose streams failed: over capacity when the server
// said the prompt does not fit, error otherwise, in the server's words.
func (c *client) failed(d matrixgen.Decode, run *cellRun) (matrixgen.Decode, window, error) {
	run.mu.Lock()
	err, n, w := run.errs[0], len(run.errs), window{streams: run.streams}
	run.mu.Unlock()
	d.Status, d.Reason = matrixgen.StatusError, err.Error()
	if c.contextTooLong(err) {
		d.Status = matrixgen.StatusOverCapacity
	}
	if n > 1 {
		d.Reason += fmt.Sprintf(" (and %d more failed %s)", n-1, plural.Noun(n-1, "request", "requests"))
	}
	if connectionLost(err) {
		return d, w, &lostServer{err}
	}
	return d, w, nil
}

// lostServer is a cell that failed because the server stopped answering,
// not because it answered badly: the sweep waits for it and retries.
type lostServer struct{ cause error }

func (e *lostServer) Error() string { return "the server stopped answering: " + e.cause.Error() }
func (e *lostServer) Unwrap() error { return e.cause }

// connectionLost reports whether err means the connection or the server
// went away (refused, reset, cut short), as opposed to an answer.
func connectionLost(err error) bool {
	var se *serverError
	if err == nil || errors.As(err, &se) {
		return false
	}
	if errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, io.ErrUnexpectedEOF) {
		return true
	}
	var op *net.OpError
	if errors.As(err, &op) {
		return true
	}
	return slices.ContainsFunc([]string{"connection reset", "connection refused", "unexpected EOF", "server closed",
		"broken pipe"}, func(s string) bool { return strings.Contains(err.Error(), s) })
}

// closedLoop keeps one stream in flight until the cell is cut.
func (c *client) closedLoop(ctx context.Context, p cellPlan, worker int, run *cellRun) {
	retries := 0
	for seq := 0; ctx.Err() == nil; seq++ {
		req := chatRequest{
			prompt: p.prompt + fmt.Sprintf("\n\nReader %d, attempt %d, turn %d: go on with the story from here, in your own words.",
				worker+1, p.attempt, seq+1),
			maxTokens: p.sweep.MaxOutput,
			salt:      p.salt,
			seed:      uint64(p.context)<<20 ^ uint64(p.concurrency)<<12 ^ uint64(worker)<<4 ^ uint64(p.attempt)<<32 ^ uint64(seq)<<40,
		}
		if p.sweep.CacheMode == "distinct" {
			req.salt = fmt.Sprintf("%s-s%d", p.salt, worker)
		}
		producing := false
		o := c.stream(ctx, req, p.sweep.StallTimeout, hooks{
			onFirst:  func() { producing = true; run.bump(1) },
			onTokens: func(n int) { run.tokens.Add(int64(n)) },
		})
		if producing {
			run.bump(-1)
		}
		if wait, ok := retryDelay(o.err, &retries); ok && ctx.Err() == nil {
			select { // the server asked for patience: give it, then send again
			case <-time.After(wait):
			case <-ctx.Done():
			}
			seq--
			continue
		}
		retries = 0
		failed := o.err != nil && ctx.Err() == nil
		run.add(o, failed)
		if failed {
			run.bump(0)
			return
		}
	}
}

// maxRetries bounds how often one request is sent again after a 429 or 503.
const maxRetries = 5

// retryDelay says whether a failed request should be sent again, and after
// how long: a 429 or 503 asks to wait (Retry-After, or a growing backoff,
// at most a minute), up to maxRetries times.
func retryDelay(err error, retries *int) (time.Duration, bool) {
	var se *serverError
	if !errors.As(err, &se) || se.Status != 429 && se.Status != 503 || *retries >= maxRetries {
		return 0, false
	}
	*retries++
	wait := se.RetryAfter
	if wait == 0 {
		wait = time.Duration(1<<(*retries-1)) * 500 * time.Millisecond
	}
	return min(wait, time.Minute), true
}

// showLive rewrites a terminal's status line every second while the cell
// runs; it returns a function that clears the line.
func showLive(p cellPlan, run *cellRun, windowStart *atomic.Int64) func() {
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		last := run.tokens.Load()
		for {
			select {
			case <-stop:
				fmt.Fprint(p.live, "\r\033[K")
				return
			case <-tick.C:
			}
			now := run.tokens.Load()
			rate := now - last
			last = now
			run.mu.Lock()
			producing := run.producing
			run.mu.Unlock()
			status := fmt.Sprintf("warming up, %d of %s producing", producing, plural.Count(p.concurrency, "stream", "streams"))
			if ns := windowStart.Load(); ns > 0 {
				elapsed := time.Since(time.Unix(0, ns)).Truncate(time.Second)
				status = fmt.Sprintf("window %v of %v", elapsed, p.sweep.Duration)
			}
			fmt.Fprintf(p.live, "\r\033[K%s: %s, %d tok/s", p.label, status, rate)
		}
	}()
	return func() { close(stop); <-done }
}

// truncated returns the prompt length a stream's usage reported below the
// context sent (Ollama cuts prompts silently); 0 when there is none.
func (w window) truncated(context int) int {
	for _, o := range w.streams {
		if o.promptTokens > 0 && o.promptTokens < context {
			return o.promptTokens
		}
	}
	return 0
}

// looped returns the loop evidence of the first stream of the window whose
// output repeats itself.
func (w window) looped() *matrixgen.LoopEvidence {
	for _, o := range w.streams {
		if ev := detectLoop(o.tail, o.outputBytes); ev != nil {
			return ev
		}
	}
	return nil
}
