package sim

import (
	"math"
	"testing"
)

// TestSingleStreamTokS: one token a step without speculation; with two
// draft tokens accepted at 0.5, 1 + 0.5 + 0.25 tokens a step.
func TestSingleStreamTokS(t *testing.T) {
	p := DefaultProfile()
	p.Speculative.DraftTokens = 0
	base := p.SingleStreamTokS()
	if want := 1 / p.Decode.stepSeconds(1, 0); base != want {
		t.Errorf("without speculation %g tok/s, want %g", base, want)
	}
	p.Speculative.DraftTokens, p.Speculative.Acceptance = 2, 0.5
	if got := p.SingleStreamTokS(); math.Abs(got-1.75*base) > 1e-9 {
		t.Errorf("two drafts at 0.5: %g tok/s, want %g", got, 1.75*base)
	}
}
