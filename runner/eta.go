package runner

import (
	"fmt"
	"time"
)

// A sweep's ETA is its plan plus what it has learned: every decode cell
// left costs its planned window and the overhead measured around each
// window so far (streams warming up, waiting for the server to idle), as
// many times as cells have needed attempts (a looped cell runs again), and
// every prefill row left what rows took so far per token of context (a
// 128K row takes far longer than an 8K one). Dividing the time so far
// by the measurements done, as the runner once did, said "12 s" for a
// sweep in which every cell looped and ran twice.

// etaModel is what the ETA is computed from.
type etaModel struct {
	window      time.Duration // each decode attempt's planned window
	maxAttempts int           // 1 + the loop retries

	prefillTokens int // the contexts of the prefill rows measured
	prefillTime   time.Duration
	cells         int // decode cells finished
	attempts      int // decode attempts started, the current one's included
	cellTime      time.Duration
}

// remaining estimates the time the prefill rows and decode cells left will
// take, and retries more attempts of a cell under way.
func (m etaModel) remaining(prefillTokensLeft, cellsLeft, retries int) time.Duration {
	prefill := time.Duration(0)
	if m.prefillTokens > 0 {
		prefill = time.Duration(float64(m.prefillTime) * float64(prefillTokensLeft) / float64(m.prefillTokens))
	}
	overhead := time.Duration(0)
	if m.attempts > 0 {
		overhead = max(m.cellTime-time.Duration(m.attempts)*m.window, 0) / time.Duration(m.attempts)
	}
	attempts := 1.0
	if m.cells > 0 {
		attempts = min(max(float64(m.attempts)/float64(m.cells), 1), float64(m.maxAttempts))
	}
	perCell := time.Duration(attempts * float64(m.window+overhead))
	return prefill + time.Duration(cellsLeft)*perCell + time.Duration(retries)*(m.window+overhead)
}

// eta is the sweep's estimate of its remaining time; cells the server has
// no room for cost nothing, as they are decided without a request.
func (sw *sweeper) eta() time.Duration {
	prefillLeft, cellsLeft := 0, 0
	for _, p := range sw.run.Prefill {
		if !finished(p.Status) {
			prefillLeft += p.ContextTokens
		}
	}
	for i := range sw.run.Decode {
		d := &sw.run.Decode[i]
		switch {
		case sw.overCapacity(d.ContextTokens, d.Concurrency) != "":
		case sw.repeats() > 1:
			cellsLeft += sw.repeats() - min(len(d.Repeats), sw.repeats())
		case !finished(d.Status):
			cellsLeft++
		}
	}
	retries := 0
	if sw.retrying {
		retries = 1 // the cell about to run again, marked looped already
	}
	return sw.etaModel.remaining(prefillLeft, cellsLeft, retries)
}

// progress is "[done/total, ETA]" for log lines.
func (sw *sweeper) progress() string {
	total := len(sw.run.Prefill) + len(sw.run.Decode)*sw.repeats()
	left := sw.remaining()
	eta := ""
	if left > 0 || sw.retrying {
		eta = ", ETA " + sw.eta().Round(time.Second).String()
	}
	return fmt.Sprintf("[%d/%d%s]", total-left, total, eta)
}
