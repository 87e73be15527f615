package render

import (
	"hash/maphash"
	"math"
	"strconv"

	"github.com/matrixgen/matrixgen"
	"github.com/matrixgen/matrixgen/stats"
)

// wideSpread is the half width, as a share of the figure, beyond which an
// interval is marked wide: about the change a reader would act on.
const wideSpread = 0.05

// spread is a figure's interval as a page shows it: a decode cell's as
// its run file stores it or computed from its samples, a prefill row's
// from its requests.
type spread struct {
	in    stats.Interval
	share float64 // half width over the figure
	level float64 // its confidence: 0.95, or less for a prefill row of few requests
	ok    bool
}

// decodeSpread is a decode cell's spread. A page shows it five times and
// the bootstrap costs 0.1 ms a cell, so a computed one is remembered by
// what it is computed from.
func decodeSpread(d matrixgen.Decode) spread {
	if d.TotalTokS == nil {
		return spread{}
	}
	if in := d.Interval; in != nil {
		i := stats.Interval{Low: in.Low, High: in.High}
		return spread{i, i.HalfWidthShare(*d.TotalTokS), in.Level, true}
	}
	return spreads.load(spreadKeyOf(d), func() (sp spread) {
		if in, level, ok := stats.DecodeInterval(d); ok {
			sp = spread{in, in.HalfWidthShare(*d.TotalTokS), level, true}
		}
		return sp
	})
}

// spreads remembers decode cells' spreads by spreadKey.
var spreads memo[spreadKey, spread]

// spreadKey is everything a cell's spread is computed from: its place
// (the bootstrap's seed), its figure, and a hash of its samples.
type spreadKey struct {
	context, concurrency int
	figure               float64
	n                    int
	hash                 uint64
}

var spreadSeed = maphash.MakeSeed()

func spreadKeyOf(d matrixgen.Decode) spreadKey {
	var h maphash.Hash
	h.SetSeed(spreadSeed)
	for _, n := range d.PerSecondTokens {
		maphash.WriteComparable(&h, n)
	}
	for _, r := range d.Repeats {
		maphash.WriteComparable(&h, r.Status)
		if r.TotalTokS != nil {
			maphash.WriteComparable(&h, *r.TotalTokS)
		}
	}
	return spreadKey{d.ContextTokens, d.Concurrency, *d.TotalTokS, len(d.PerSecondTokens) + len(d.Repeats)<<20, h.Sum64()}
}

func prefillSpread(p matrixgen.Prefill) spread {
	in, level, ok := stats.PrefillInterval(p)
	if !ok {
		return spread{}
	}
	return spread{in, in.HalfWidthShare(*p.PromptTokS), level, true}
}

// wide reports whether the interval is wider than ±wideSpread.
func (s spread) wide() bool { return s.ok && s.share > wideSpread }

// short is the half width as the tables show it beside a figure: " ±1.8 %",
// " ±0.8 % (75 %)", with " wide" past ±5 %; "" without an interval.
func (s spread) short() string {
	if !s.ok {
		return ""
	}
	text := " " + s.halfWidth()
	if s.wide() {
		text += wideMark
	}
	return text
}

// halfWidth is the half width and its level note: "±0.8 % (75 %)".
func (s spread) halfWidth() string {
	return "±" + share(s.share) + " %" + s.levelNote()
}

// levelNote is " (75 %)" for an interval whose level is not stats.Level,
// "" for one that is: a reader takes an interval for 95 % unless told.
func (s spread) levelNote() string {
	if !s.ok || s.level == stats.Level {
		return ""
	}
	return " (" + levelText(s.level) + ")"
}

// levelText is a confidence as the pages write it: "95 %", "87.5 %". It
// never rounds to a whole percent the level is not (0.94999 is "94.9 %").
func levelText(level float64) string {
	pct := math.Round(1000*level) / 10
	if pct == math.Trunc(pct) && math.Abs(pct-100*level) > 1e-9 { // past float noise
		pct = math.Floor(1000*level) / 10
	}
	return strconv.FormatFloat(pct, 'f', -1, 64) + " %"
}

// long is the interval as details and titles say it: "95 % interval
// 405.0–419.8 (±1.8 %)".
func (s spread) long() string {
	if !s.ok {
		return ""
	}
	return levelText(s.level) + " interval " + decimal1(s.in.Low) + "–" + decimal1(s.in.High) + " (±" + share(s.share) + " %)"
}

// wideMark follows a figure whose interval is wider than ±5 %.
const wideMark = " wide"

// csv is the interval's low and high ends and its level as CSV writes them.
func (s spread) csv() [3]string {
	if !s.ok {
		return [3]string{}
	}
	return [3]string{num(&s.in.Low), num(&s.in.High), num(&s.level)}
}
