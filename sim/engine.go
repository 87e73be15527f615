package sim

import (
	"math"
	"math/bits"
	"math/rand/v2"
	"slices"
	"sync"
	"time"
)

// request is one chat completion inside the engine.
type request struct {
	prompt       prompt
	maxTokens    int
	minTokens    int
	ignoreEOS    bool
	rng          *rand.Rand
	loopStart    int // token index the output starts repeating at; -1: never
	cachedTokens int

	// Engine state, guarded by engine.mu.
	generated   int
	prefillLeft int
	private     int // private KV blocks held
	holding     bool
	waited      bool
	preemptions int
	admittedAt  time.Time
	// coldMs is the one-time cost the request paid before the scheduler
	// saw it; prefillEnd when its prompt was processed (its first token).
	coldMs     float64
	prefillEnd time.Time
	done       bool
	reason     string
	// abandoned: the client left while the prompt was being processed;
	// the request is dropped when its prompt is (FinishAbandonedPrompt).
	abandoned bool

	out *mailbox
}

// mailbox carries the engine's progress on a request to the goroutine
// writing its stream. The engine never blocks on it: a slow reader gets the
// tokens of several steps in one chunk, as a busy real server sends them.
type mailbox struct {
	mu sync.Mutex
	snapshot
	signal chan struct{}
}

func (m *mailbox) post(s snapshot) {
	m.mu.Lock()
	m.snapshot = s
	m.mu.Unlock()
	select {
	case m.signal <- struct{}{}:
	default:
	}
}

// snapshot is what the mailbox holds, copied for the writer.
type snapshot struct {
	produced  int
	scheduled time.Time // when the engine's schedule produced the latest tokens
	done      bool
	reason    string
}

func (m *mailbox) read() snapshot {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.snapshot
}

// counters are the engine's cumulative figures, as /metrics reports them.
type counters struct {
	promptTokens, generationTokens float64
	// completedTokens counts the output of requests that ran to their end,
	// added when they end: llama-server's tokens_predicted_total.
	completedTokens             float64
	completed                   float64 // requests that ran to their end
	preemptions                 float64
	prefixQueries, prefixHits   float64
	specDrafts, specDraftTokens float64
	specAccepted                float64
	running, waiting            int
	kvUsed                      float64
	// prefillSeconds is the time each request's prompt took from its
	// admission to its first token: vLLM's request_prefill_time_seconds,
	// SGLang's prefill_forward stage.
	prefillSeconds histogram
}

// histogram is a Prometheus histogram's running figures.
type histogram struct {
	sum, count float64
	buckets    [len(histogramBounds)]float64 // cumulative counts, per bound
}

// histogramBounds are the upper bounds of the histograms' buckets, seconds.
var histogramBounds = [...]float64{0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300}

func (h *histogram) observe(v float64) {
	h.sum += v
	h.count++
	for i, b := range histogramBounds {
		if v <= b {
			h.buckets[i]++
		}
	}
}

// Timing says how well the engine kept to its profile's schedule. A step is
// late when it finished processing after the time its profile gave it; the
// sim "cannot keep up" when steps are late by more than 1% of the time run.
type Timing struct {
	Steps     int
	LateSteps int
	MaxLag    time.Duration
	Scheduled time.Duration // total time the profile gave the steps
	Lost      time.Duration // time the schedule slipped because the machine was too slow
}

// KeepingUp reports whether the schedule slipped by under 1% of its length.
func (t Timing) KeepingUp() bool {
	return t.Scheduled == 0 || float64(t.Lost) <= 0.01*float64(t.Scheduled)
}

// engine is the simulated inference engine: one scheduler loop that admits
// waiting requests as KV and batch size allow, runs steps whose duration the
// profile gives, and posts each step's tokens at the step's scheduled end.
type engine struct {
	p    Profile
	mu   sync.Mutex
	wake chan struct{}
	stop chan struct{}

	waiting []*request
	running []*request
	kv      *kvCache
	c       counters
	timing  Timing
	// born is when the engine started: the noise's clock.
	born time.Time

	// What the one-time costs remember: the highest bit of the longest
	// prompt so far, and the most requests run at once since the last
	// burst was charged.
	longestBit  int
	peakRunning int
}

func newEngine(p Profile) *engine {
	return &engine{
		p: p, wake: make(chan struct{}, 1), stop: make(chan struct{}),
		kv: newKVCache(p.blocks()), born: time.Now(),
	}
}

// submit queues a request after the profile's per-request overhead and any
// one-time cost it pays (PrefillProfile), remembering that it paid it; the
// scheduler admits it at its next step.
func (e *engine) submit(r *request) {
	p := e.p.Prefill
	e.mu.Lock()
	if bit := bits.Len(uint(r.prompt.tokens)); bit > e.longestBit {
		e.longestBit = bit
		r.coldMs += p.NewSizeMs
	}
	if p.BurstStreams > 0 && e.peakRunning >= p.BurstStreams && len(e.running) == 0 && len(e.waiting) == 0 {
		e.peakRunning = 0
		r.coldMs += p.AfterBurstMs
	}
	e.mu.Unlock()
	if d := time.Duration((p.RequestOverheadMs + r.coldMs) * float64(time.Millisecond)); d > 0 {
		time.AfterFunc(d, func() { e.enqueue(r) })
		return
	}
	e.enqueue(r)
}

func (e *engine) enqueue(r *request) {
	e.mu.Lock()
	if r.done { // the client left during the overhead
		e.mu.Unlock()
		return
	}
	r.prefillLeft = r.prompt.tokens
	e.waiting = append(e.waiting, r)
	e.c.waiting = len(e.waiting)
	e.mu.Unlock()
	select {
	case e.wake <- struct{}{}:
	default:
	}
}

// abort drops a request whose client went away, freeing what it held.
func (e *engine) abort(r *request) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if r.done {
		return
	}
	r.done, r.reason = true, "abort"
	e.releaseKV(r)
	e.waiting = remove(e.waiting, r)
	e.running = remove(e.running, r)
	e.c.running, e.c.waiting = len(e.running), len(e.waiting)
}

// abandon drops a request whose client went away as Ollama does: at once
// unless its prompt is being processed, else when the prompt is done.
func (e *engine) abandon(r *request) {
	e.mu.Lock()
	r.abandoned = !r.done && r.prefillLeft > 0 && slices.Contains(e.running, r)
	e.mu.Unlock()
	if !r.abandoned {
		e.abort(r)
	}
}

func remove(rs []*request, r *request) []*request {
	return slices.DeleteFunc(rs, func(q *request) bool { return q == r })
}

// maxCatchUp is how far behind its schedule the engine may fall before it
// gives up catching up and restarts its clock, counting the time as lost.
const maxCatchUp = 250 * time.Millisecond

func (e *engine) run() {
	var next time.Time
	for {
		e.mu.Lock()
		e.schedule()
		if len(e.running) == 0 {
			e.mu.Unlock()
			select {
			case <-e.wake:
			case <-e.stop:
				return
			}
			next = time.Time{}
			continue
		}
		plan := e.plan()
		e.mu.Unlock()
		now := time.Now()
		if next.IsZero() {
			next = now
		} else if behind := now.Sub(next); behind > maxCatchUp {
			e.mu.Lock()
			e.timing.Lost += behind
			e.mu.Unlock()
			next = now
		}
		end := next.Add(plan.duration)
		if wait := end.Sub(time.Now()); wait > 0 {
			select {
			case <-time.After(wait):
			case <-e.stop:
				return
			}
		}
		e.mu.Lock()
		e.apply(plan, end)
		lag := time.Now().Sub(end)
		e.timing.Steps++
		e.timing.Scheduled += plan.duration
		e.timing.MaxLag = max(e.timing.MaxLag, lag)
		if lag > plan.duration/100+time.Millisecond {
			e.timing.LateSteps++
		}
		e.mu.Unlock()
		next = end
	}
}

// schedule admits waiting requests, first come first served, while the batch
// has room and the KV cache has blocks for their prompts; the first that
// does not fit holds the rest back, as vLLM's scheduler does.
func (e *engine) schedule() {
	for len(e.waiting) > 0 && len(e.running) < e.p.KV.MaxRunning {
		r := e.waiting[0]
		if !e.admit(r) {
			break
		}
		e.waiting = e.waiting[1:]
		e.running = append(e.running, r)
	}
	for _, r := range e.waiting {
		r.waited = true
	}
	e.peakRunning = max(e.peakRunning, len(e.running))
	e.c.running, e.c.waiting = len(e.running), len(e.waiting)
	e.c.kvUsed = float64(e.kv.used()) / float64(e.kv.total)
}

// admit gives a request its KV blocks: the shared prompt blocks (cached ones
// reused) and private ones for the rest of its tokens so far plus one.
func (e *engine) admit(r *request) bool {
	cached := e.kv.cachedPrefix(r.prompt.blocks) * e.p.KV.BlockSize
	private := e.blocksFor(r.prompt.tokens+r.generated+1) - len(r.prompt.blocks)
	if e.kv.newBlocksFor(r.prompt.blocks)+private > e.kv.available() ||
		!e.kv.reserve(r.prompt.blocks, private) {
		return false
	}
	r.holding, r.private = true, private
	total := r.prompt.tokens + r.generated
	r.prefillLeft = max(total-cached, 1) // the last token is always computed
	if r.preemptions == 0 {
		r.cachedTokens = cached
		e.c.prefixQueries += float64(r.prompt.tokens)
		e.c.prefixHits += float64(cached)
		r.admittedAt = time.Now()
	}
	return true
}

func (e *engine) blocksFor(tokens int) int {
	return (tokens + e.p.KV.BlockSize - 1) / e.p.KV.BlockSize
}

func (e *engine) releaseKV(r *request) {
	if !r.holding {
		return
	}
	e.kv.release(r.prompt.blocks)
	e.kv.free += r.private
	r.holding, r.private = false, 0
}

// stepPlan is what one step does: which requests decode, how many prompt
// tokens each prefilling request gets through, and how long it takes.
type stepPlan struct {
	decode   []*request
	prefill  []*request
	chunks   []int
	duration time.Duration
}

// plan lays out a step: every decoding request makes tokens; prompts are
// prefilled, oldest first, in the step's remaining token budget.
func (e *engine) plan() stepPlan {
	var p stepPlan
	contextTokens := 0
	for _, r := range e.running {
		if r.prefillLeft == 0 {
			p.decode = append(p.decode, r)
			contextTokens += r.prompt.tokens + r.generated
		}
	}
	seconds := 0.0
	if len(p.decode) > 0 {
		seconds = e.p.Decode.stepSeconds(len(p.decode), contextTokens)
		seconds += e.p.Decode.PerKCachedTokenMs * float64((e.kv.total-e.kv.free)*e.p.KV.BlockSize) / 1e6
	}
	budget := e.p.Decode.MaxBatchedTokens - len(p.decode)
	for _, r := range e.running {
		if r.prefillLeft == 0 || budget <= 0 {
			continue
		}
		n := min(r.prefillLeft, budget)
		budget -= n
		p.prefill = append(p.prefill, r)
		p.chunks = append(p.chunks, n)
		seconds += float64(n) / e.p.Prefill.Rate(r.prompt.tokens)
	}
	seconds *= e.p.Noise.Factor(time.Now().Sub(e.born).Seconds())
	p.duration = time.Duration(seconds * float64(time.Second))
	return p
}

// apply carries out a planned step that ended at end.
func (e *engine) apply(p stepPlan, end time.Time) {
	for i, r := range p.prefill {
		if r.done {
			continue
		}
		r.prefillLeft -= p.chunks[i]
		e.c.promptTokens += float64(p.chunks[i])
		if r.prefillLeft == 0 && r.abandoned {
			r.done, r.reason = true, "abort" // released below
			continue
		}
		if r.prefillLeft == 0 && r.generated == 0 {
			r.prefillEnd = end
			e.c.prefillSeconds.observe(end.Sub(r.admittedAt).Seconds())
			e.produce(r, 1, end) // the step that ends prefill samples the first token
		}
	}
	for _, r := range p.decode {
		if r.done || !r.holding {
			continue
		}
		n := 1 + e.accepted(r)
		if !e.grow(r, n) {
			continue // preempted
		}
		e.produce(r, n, end)
	}
	for _, r := range e.running {
		if r.done {
			e.releaseKV(r)
		}
	}
	e.running = slices.DeleteFunc(e.running, func(r *request) bool { return r.done })
	e.c.running = len(e.running)
	e.c.kvUsed = float64(e.kv.used()) / float64(e.kv.total)
}

// accepted draws how many draft tokens the step accepted for r.
func (e *engine) accepted(r *request) int {
	k := e.p.Speculative.DraftTokens
	if k == 0 {
		return 0
	}
	a := 0
	for a < k && r.rng.Float64() < e.p.Speculative.Acceptance {
		a++
	}
	e.c.specDrafts++
	e.c.specDraftTokens += float64(k)
	e.c.specAccepted += float64(a)
	return a
}

// grow gives r the blocks its next n tokens need. When the cache is full it
// preempts the most recently admitted running request (possibly r itself),
// which goes back to the head of the queue to recompute later.
func (e *engine) grow(r *request, n int) bool {
	need := e.blocksFor(r.prompt.tokens+r.generated+n) - len(r.prompt.blocks) - r.private
	for need > 0 && !e.kv.take(need) {
		victim := e.lastPreemptible()
		if victim == nil {
			return false
		}
		e.preempt(victim)
		if victim == r {
			return false
		}
	}
	r.private += max(need, 0)
	return true
}

// lastPreemptible is the most recently admitted request still holding blocks.
func (e *engine) lastPreemptible() *request {
	for i := len(e.running) - 1; i >= 0; i-- {
		if r := e.running[i]; !r.done && r.holding {
			return r
		}
	}
	return nil
}

func (e *engine) preempt(r *request) {
	e.releaseKV(r)
	e.running = remove(e.running, r)
	r.preemptions++
	r.waited = true
	e.waiting = append([]*request{r}, e.waiting...)
	e.c.preemptions++
}

// produce records n new tokens of r at the step's end, finishing it at its
// maximum or at its natural end.
func (e *engine) produce(r *request, n int, end time.Time) {
	natural := math.MaxInt // where the answer ends by itself
	if e.p.NaturalLength > 0 && !r.ignoreEOS {
		natural = max(e.p.NaturalLength, r.minTokens)
	}
	n = max(min(n, r.maxTokens-r.generated, natural-r.generated), 0)
	r.generated += n
	e.c.generationTokens += float64(n)
	switch {
	case r.generated >= r.maxTokens:
		r.done, r.reason = true, "length"
	case r.generated >= natural:
		r.done, r.reason = true, "stop"
	}
	if r.done {
		e.c.completedTokens += float64(r.generated)
		e.c.completed++
	}
	r.out.post(snapshot{produced: r.generated, scheduled: end, done: r.done, reason: r.reason})
}

// snapshot copies the counters and timing for /metrics and tests.
func (e *engine) snapshot() (counters, Timing) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.c, e.timing
}
