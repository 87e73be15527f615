package render

import (
	"fmt"
	"math"
)

// binCount is how many colours the decode matrix uses. Eight steps are few
// enough to tell apart in a legend and enough to show a 25× range.
const binCount = 8

// rgb is a colour with channels in 0–255.
type rgb struct{ R, G, B uint8 }

func (c rgb) String() string { return fmt.Sprintf("#%02x%02x%02x", c.R, c.G, c.B) }

// scaleStops are points of viridis, a perceptually uniform colour map, from
// low throughput (light) to high (dark). Colours between them are mixed in
// OKLab, where equal steps look equal, so neighbouring bins differ evenly.
var scaleStops = []rgb{
	{0xfd, 0xe7, 0x25}, {0x5e, 0xc9, 0x62}, {0x21, 0x91, 0x8c}, {0x3b, 0x52, 0x8b}, {0x44, 0x01, 0x54},
}

// palette returns n colours evenly spaced along the scale.
func palette(n int) []rgb {
	out := make([]rgb, n)
	for i := range out {
		seg := float64(i) / float64(max(n-1, 1)) * float64(len(scaleStops)-1)
		j := min(int(seg), len(scaleStops)-2)
		a, b := toOKLab(scaleStops[j]), toOKLab(scaleStops[j+1])
		f := seg - float64(j)
		out[i] = fromOKLab([3]float64{a[0] + (b[0]-a[0])*f, a[1] + (b[1]-a[1])*f, a[2] + (b[2]-a[2])*f})
	}
	return out
}

// logBin places v on a logarithmic scale from lo to hi, 0 … n-1. Throughput in a
// matrix spans orders of magnitude (260 to 6,904 tok/s in the sample run), so equal
// ratios, not equal differences, get equal steps.
func logBin(v, lo, hi float64, n int) int {
	switch {
	case lo <= 0 || hi <= lo:
		return n - 1 // a single figure: nothing to compare it with
	case v <= lo:
		return 0
	}
	i := int(logRatio(v, lo) / logRatio(hi, lo) * float64(n))
	return min(max(i, 0), n-1)
}

// logRatio is log(hi/lo), taken apart where the quotient overflows: a
// figure of 1e-306 beside 342 made every bin's edge +Inf.
func logRatio(hi, lo float64) float64 {
	if r := hi / lo; !math.IsInf(r, 0) {
		return math.Log(r)
	}
	return math.Log(hi) - math.Log(lo)
}

// minScaleSpan is the least ratio the colour scale spans, counted from the
// best figure, so that figures a tenth apart never look like the whole
// range: each of the eight steps is a ratio of √2 at most.
const minScaleSpan = 16

// anchoredLow is the low end of the colour scale for figures from lo to hi
// where higher is better: hi / minScaleSpan, or lo when the figures span
// more. A single figure (hi ≤ lo) keeps its one-colour scale.
func anchoredLow(lo, hi float64) float64 {
	if hi <= lo {
		return lo
	}
	return min(lo, hi/minScaleSpan)
}

// anchoredHigh is the high end for figures where lower is better: the best
// (lo) times minScaleSpan, or hi when the figures span more.
func anchoredHigh(lo, hi float64) float64 {
	if hi <= lo {
		return hi
	}
	return max(hi, lo*minScaleSpan)
}

// binEdges returns the n+1 boundaries of logBin's bins, for the legend.
func binEdges(lo, hi float64, n int) []float64 {
	out := make([]float64, n+1)
	for i := range out {
		f := float64(i) / float64(n)
		if r := hi / lo; !math.IsInf(r, 0) {
			out[i] = lo * math.Pow(r, f)
		} else {
			out[i] = math.Exp(math.Log(lo) + logRatio(hi, lo)*f)
		}
	}
	return out
}

// textOn picks black or white text for a background, whichever contrasts
// more by WCAG's measure.
func textOn(bg rgb) rgb {
	black, white := rgb{0x11, 0x11, 0x11}, rgb{0xff, 0xff, 0xff}
	if contrast(bg, black) >= contrast(bg, white) {
		return black
	}
	return white
}

// contrast is the WCAG 2 contrast ratio of two colours, 1 to 21.
func contrast(a, b rgb) float64 {
	la, lb := luminance(a), luminance(b)
	if la < lb {
		la, lb = lb, la
	}
	return (la + 0.05) / (lb + 0.05)
}

func luminance(c rgb) float64 {
	return 0.2126*toLinear(c.R) + 0.7152*toLinear(c.G) + 0.0722*toLinear(c.B)
}

func toLinear(c uint8) float64 {
	v := float64(c) / 255
	if v <= 0.04045 {
		return v / 12.92
	}
	return math.Pow((v+0.055)/1.055, 2.4)
}

func fromLinear(v float64) uint8 {
	v = min(max(v, 0), 1)
	if v <= 0.0031308 {
		v *= 12.92
	} else {
		v = 1.055*math.Pow(v, 1/2.4) - 0.055
	}
	return uint8(math.Round(v * 255))
}

// toOKLab and fromOKLab follow Björn Ottosson's published OKLab matrices.
func toOKLab(c rgb) [3]float64 {
	r, g, b := toLinear(c.R), toLinear(c.G), toLinear(c.B)
	l := math.Cbrt(0.4122214708*r + 0.5363325363*g + 0.0514459929*b)
	m := math.Cbrt(0.2119034982*r + 0.6806995451*g + 0.1073969566*b)
	s := math.Cbrt(0.0883024619*r + 0.2817188376*g + 0.6299787005*b)
	return [3]float64{
		0.2104542553*l + 0.7936177850*m - 0.0040720468*s,
		1.9779984951*l - 2.4285922050*m + 0.4505937099*s,
		0.0259040371*l + 0.7827717662*m - 0.8086757660*s,
	}
}

func fromOKLab(lab [3]float64) rgb {
	l := lab[0] + 0.3963377774*lab[1] + 0.2158037573*lab[2]
	m := lab[0] - 0.1055613458*lab[1] - 0.0638541728*lab[2]
	s := lab[0] - 0.0894841775*lab[1] - 1.2914855480*lab[2]
	l, m, s = l*l*l, m*m*m, s*s*s
	return rgb{
		fromLinear(4.0767416621*l - 3.3077115913*m + 0.2309699292*s),
		fromLinear(-1.2684380046*l + 2.6097574011*m - 0.3413193965*s),
		fromLinear(-0.0041960863*l - 0.7034186147*m + 1.7076147010*s),
	}
}
