package runner

import (
	"fmt"
	"time"

	"github.com/matrixgen/matrixgen"
)

// A sweep's ETA is its plan plus what it has learned: every decode cell
// left costs its planned window and the overhead measured around each
// window so far, as many times as cells have needed attempts (a looped
// cell runs again), and every context left what setting up one took so
// far per token (building its prompt, its prefill row or cache warm-up).
// Until a context has been set up, or a cell measured, the ETA is a lower
// bound, said as "ETA ≥ …".

// etaModel is what the ETA is computed from.
type etaModel struct {
	window      time.Duration // each decode attempt's planned window
	maxAttempts int           // 1 + the loop retries

	setupTokens int // the contexts set up so far, in tokens
	setupTime   time.Duration
	cells       int // decode cells finished
	attempts    int // decode attempts started, the current one's included
	cellTime    time.Duration
}

// remaining estimates the time the contexts left to set up (in tokens),
// the decode cells left and retries more attempts of a cell under way will
// take; atLeast when part of it is not known yet.
func (m etaModel) remaining(setupTokensLeft, cellsLeft, retries int) (left time.Duration, atLeast bool) {
	setup := time.Duration(0)
	if m.setupTokens > 0 {
		setup = time.Duration(float64(m.setupTime) * float64(setupTokensLeft) / float64(m.setupTokens))
	}
	atLeast = (setupTokensLeft > 0 && m.setupTokens == 0) || (cellsLeft+retries > 0 && m.cells == 0)
	overhead := time.Duration(0)
	if m.attempts > 0 {
		overhead = max(m.cellTime-time.Duration(m.attempts)*m.window, 0) / time.Duration(m.attempts)
	}
	attempts := 1.0
	if m.cells > 0 {
		attempts = min(max(float64(m.attempts)/float64(m.cells), 1), float64(m.maxAttempts))
	}
	perCell := time.Duration(attempts * float64(m.window+overhead))
	return setup + time.Duration(cellsLeft)*perCell + time.Duration(retries)*(m.window+overhead), atLeast
}

// eta is the sweep's estimate of its remaining time (atLeast: a lower
// bound); cells the server has no room for cost nothing.
func (sw *sweeper) eta() (time.Duration, bool) {
	setupLeft, cellsLeft := 0, 0
	for _, n := range sw.contexts {
		if pre := sw.prefillRow(n); !sw.setUp[n] && n != sw.settingUp &&
			(pre != nil && !finished(pre.Status) || len(sw.cellsAt(n)) > 0) {
			setupLeft += n
		}
	}
	for i := range sw.run.Decode {
		d := &sw.run.Decode[i]
		switch {
		case sw.overCapacity(d.ContextTokens, d.Concurrency) != "":
		case sw.repeats() > 1:
			cellsLeft += sw.repeatsLeft(d)
		case !finished(d.Status):
			cellsLeft++
		}
	}
	retries := 0
	if sw.retrying {
		retries = 1 // the cell about to run again, marked looped already
	}
	left, atLeast := sw.etaModel.remaining(setupLeft, cellsLeft, retries)
	if n := sw.settingUp; n > 0 {
		// What the context under way has left: its part of the estimate
		// less the time it took so far.
		whole, _ := sw.etaModel.remaining(n, 0, 0)
		left += max(whole-time.Since(sw.setupStart), 0)
		atLeast = atLeast || sw.etaModel.setupTokens == 0
	}
	return left, atLeast
}

// contextSetUp records what setting up context n took, from the start of
// its prompt's building to the end of its prefill row or cache warm-up.
func (sw *sweeper) contextSetUp(n int, start time.Time) {
	sw.setUp[n], sw.settingUp = true, 0
	sw.etaModel.setupTokens += n
	sw.etaModel.setupTime += time.Since(start)
}

// progress is "[done/total, ETA]" for log lines.
func (sw *sweeper) progress() string {
	total := len(sw.run.Prefill) + len(sw.run.Decode)*sw.repeats()
	left := sw.left(func(s matrixgen.Status) bool { return !finished(s) })
	eta := ""
	if left > 0 || sw.retrying {
		d, atLeast := sw.eta()
		eta = ", ETA " + map[bool]string{true: "≥ "}[atLeast] + d.Round(time.Second).String()
	}
	return fmt.Sprintf("[%d/%d%s]", total-left, total, eta)
}
