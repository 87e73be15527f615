package render

import (
	"github.com/matrixgen/matrixgen"
	"github.com/matrixgen/matrixgen/stats"
)

// wideSpread is the half width, as a share of the figure, beyond which a
// cell's interval is marked wide: ±5 %, about the change a reader would
// act on.
const wideSpread = 0.05

// spread is a figure's 95 % interval as a page shows it, computed when the
// site is built from the samples the run file keeps (a decode cell's
// tokens in each second, a prefill row's requests), so every run that
// kept samples gains it and none is stored twice.
type spread struct {
	in    stats.Interval
	share float64 // half width over the figure
	level float64 // its confidence: 0.95, or less for a prefill row of few requests
	ok    bool
}

func decodeSpread(d matrixgen.Decode) spread {
	in, level, ok := stats.DecodeInterval(d)
	if !ok {
		return spread{}
	}
	return spread{in, in.HalfWidthShare(*d.TotalTokS), level, true}
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
// with " wide" past ±5 %; "" without an interval.
func (s spread) short() string {
	if !s.ok {
		return ""
	}
	text := " ±" + decimal1(100*s.share) + " %"
	if s.wide() {
		text += wideMark
	}
	return text
}

// long is the interval as the cell's details and titles say it, with its
// confidence: "95.0 % interval 405.0–419.8 (±1.8 %)".
func (s spread) long() string {
	if !s.ok {
		return ""
	}
	return decimal1(100*s.level) + " % interval " + decimal1(s.in.Low) + "–" + decimal1(s.in.High) + " (±" + decimal1(100*s.share) + " %)"
}

// wideMark follows a figure whose interval is wider than ±5 %.
const wideMark = " wide"

// low and high are the interval's ends as CSV writes them; "" without one.
func (s spread) low() string {
	if !s.ok {
		return ""
	}
	return num(&s.in.Low)
}

func (s spread) high() string {
	if !s.ok {
		return ""
	}
	return num(&s.in.High)
}
