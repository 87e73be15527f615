package sim

import (
	"math"
	"reflect"
	"strings"
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

// TestNoiseFactor: no noise is the exact speed; jitter is the same for the
// same seed and slice, differs across seeds, and spreads by its share;
// drift swings by its share over its period.
func TestNoiseFactor(t *testing.T) {
	if f := (NoiseProfile{}).Factor(12.3); f != 1 {
		t.Errorf("no noise: factor %g, want 1", f)
	}
	n := NoiseProfile{Seed: 7, JitterShare: 0.03}
	if n.Factor(4.2) != n.Factor(4.9) || n.Factor(4.2) == n.Factor(5.1) {
		t.Error("jitter should hold through a slice and change at the next")
	}
	if other := (NoiseProfile{Seed: 8, JitterShare: 0.03}); other.Factor(4.2) == n.Factor(4.2) {
		t.Error("another seed gave the same jitter")
	}
	sum, sq := 0.0, 0.0
	const slices = 4000
	for k := range slices {
		d := n.Factor(float64(k)) - 1
		sum, sq = sum+d, sq+d*d
	}
	mean := sum / slices
	if sd := math.Sqrt(sq/slices - mean*mean); math.Abs(mean) > 0.003 || sd < 0.027 || sd > 0.033 {
		t.Errorf("jitter of 3 %%: mean %.4f, sd %.4f over %d slices", mean, sd, slices)
	}
	d := NoiseProfile{DriftShare: 0.02, DriftPeriodSeconds: 400}
	if f := d.Factor(100); math.Abs(f-1.02) > 1e-12 {
		t.Errorf("drift at a quarter period: %g, want 1.02", f)
	}
	if err := (func() Profile { p := DefaultProfile(); p.Noise.DriftShare = 0.02; return p }()).Validate(); err == nil {
		t.Error("a drift without a period passed")
	}
}

// TestProfileFieldsHaveTOMLNames: a profile file is decoded straight into
// Profile, so a field without a toml tag would be read under its Go name
// (FinishAbandoned, not finish_abandoned): each one needs its snake_case name.
func TestProfileFieldsHaveTOMLNames(t *testing.T) {
	var walk func(reflect.Type)
	walk = func(typ reflect.Type) {
		for f := range typ.Fields() {
			tag := f.Tag.Get("toml")
			if tag == "" || tag != strings.ToLower(tag) {
				t.Errorf("%s.%s: toml tag %q, want a snake_case name", typ.Name(), f.Name, tag)
			}
			if f.Type.Kind() == reflect.Struct {
				walk(f.Type)
			}
		}
	}
	walk(reflect.TypeFor[Profile]())
}
