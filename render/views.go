package render

import (
	"math"
	"strings"

	"github.com/matrixgen/matrixgen"
)

// A run page's matrix shows total tok/s; its other views, one JSON block
// the site script swaps in, colour the same cells by another figure.

// matrixView is one way of colouring the matrix.
type matrixView struct {
	Name  string `json:"name"`  // in the address: ?view=ttft
	Label string `json:"label"` // in the picker and the legend's title
	// Legend is the view's colour steps, best last as for throughput.
	Legend []legendBin `json:"legend"`
	// Cells are each measured cell's figure and colour class in this view,
	// in cellOrder: the block maps a cell's id to them.
	Cells byID[[2]string] `json:"cells"`
}

// Choice is the view's name in the picker: its label without the scale's.
func (v matrixView) Choice() string {
	name, _, _ := strings.Cut(v.Label, " (")
	return name
}

// viewSpec says how to read and show one view's figure.
type viewSpec struct {
	name, label string
	value       func(*matrixgen.Decode) *float64
	format      func(float64) string
	lowerBetter bool // TTFT and joules: the smallest figure is the best
	// note, where set, follows a cell's figure: the spread's level where
	// it is not 95 %.
	note func(*matrixgen.Decode) string
}

// scaleNote says in each legend how the colours are scaled (anchoredLow).
const scaleNote = "colour: logarithmic steps from the best figure, over at least 16×, so close figures look alike"

var viewSpecs = []viewSpec{
	{"total", "Total tok/s (" + scaleNote + ")", func(d *matrixgen.Decode) *float64 { return d.TotalTokS }, decimal1, false, nil},
	{"per-request", "Per request tok/s (" + scaleNote + ")", func(d *matrixgen.Decode) *float64 { return d.PerRequestTokS }, decimal1, false, nil},
	{"ttft", "Time to first token, median (" + scaleNote + "; shorter is better)", func(d *matrixgen.Decode) *float64 {
		if d.TTFTMs == nil {
			return nil
		}
		return &d.TTFTMs.P50
	}, millis, true, nil},
	{"per-watt", "Tok/s per watt of GPU board power (" + scaleNote + ")", func(d *matrixgen.Decode) *float64 {
		if d.Power == nil {
			return nil
		}
		return d.Power.TokSPerW
	}, perWattText, false, nil},
	{"joules", "Joules per 1K output tokens (" + scaleNote + "; fewer is better)", func(d *matrixgen.Decode) *float64 {
		if d.Power == nil {
			return nil
		}
		return d.Power.JoulesPer1KTokens
	}, func(v float64) string { return decimal1(v) + " J" }, true, nil},
	{"spread", "Spread: the interval around total tok/s, ± % (half its width; 95 % unless a cell names its level, as 75 % over 3 repeats; " +
		"colour: logarithmic steps; narrower is better)", func(d *matrixgen.Decode) *float64 {
		if sp := decodeSpread(*d); sp.ok && !math.IsInf(sp.share, 0) { // an infinite spread has no colour
			return new(100 * sp.share)
		}
		return nil
	}, func(v float64) string { return "±" + percentFigure(v) + " %" }, true, func(d *matrixgen.Decode) string { return decodeSpread(*d).levelNote() }},
}

// legendBins are a legend's colour steps from lo to hi, best last (where
// lower is better, the best colour goes to the smallest figure); one for a
// single figure.
func legendBins(lo, hi float64, format func(float64) string, lowerBetter bool) []legendBin {
	if hi <= lo {
		return []legendBin{{Class: binClass(binCount - 1), Range: format(hi)}}
	}
	edges := binEdges(lo, hi, binCount)
	bins := make([]legendBin, binCount)
	for i := range bins {
		from, to := edges[i], edges[i+1]
		if lowerBetter {
			from, to = edges[binCount-1-i], edges[binCount-i]
		}
		bins[i] = legendBin{Class: binClass(i), Range: format(from) + "–" + format(to)}
	}
	return bins
}

// matrixViews lays out every view the run has figures for; nil when it
// has only total tok/s, and the page then offers no choice.
func matrixViews(cells []orderedCell) []matrixView {
	var views []matrixView
	for _, spec := range viewSpecs {
		lo, hi, ok := math.Inf(1), 0.0, false
		for _, c := range cells {
			if v := spec.value(c.d); showsFigure(*c.d) && v != nil && *v > 0 {
				lo, hi, ok = min(lo, *v), max(hi, *v), true
			}
		}
		if !ok {
			continue
		}
		if spec.lowerBetter {
			hi = anchoredHigh(lo, hi)
		} else {
			lo = anchoredLow(lo, hi)
		}
		v := matrixView{Name: spec.name, Label: spec.label, Cells: make(byID[[2]string], 0, len(cells)),
			Legend: legendBins(lo, hi, spec.format, spec.lowerBetter)}
		single := hi <= lo
		for _, c := range cells {
			x, shown := spec.value(c.d), [2]string{dash, ""}
			switch {
			case x == nil:
			case loopedFigure(*c.d) && *x > 0: // shown, uncoloured, as on the page
				shown[0] = spec.format(*x)
			case showsFigure(*c.d) && !(*x <= 0):
				bin := logBin(*x, lo, hi, binCount)
				if spec.lowerBetter && !single {
					bin = binCount - 1 - bin
				}
				shown = [2]string{spec.format(*x), binClass(bin)}
				if spec.note != nil {
					shown[0] += spec.note(c.d)
				}
			}
			v.Cells = append(v.Cells, idValue[[2]string]{c.id, shown})
		}
		views = append(views, v)
	}
	if len(views) < 2 {
		return nil
	}
	return views
}
