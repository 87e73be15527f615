package render

import (
	"math"
	"testing"
)

func TestBin(t *testing.T) {
	tests := []struct {
		v, lo, hi float64
		want      int
	}{
		{260, 260, 6904, 0},
		{6904, 260, 6904, 7},
		{100, 260, 6904, 0},   // below the range clamps to the first bin
		{99999, 260, 6904, 7}, // above clamps to the last
		{1340, 260, 6904, 4},  // log scale: 1,340 is past the middle (1,340 ≈ √(260·6904))
		{1339, 260, 6904, 3},
		{500, 500, 500, 7}, // one figure: nothing to compare with
		{0, 0, 100, 7},     // no usable lower end
	}
	for _, tt := range tests {
		if got := logBin(tt.v, tt.lo, tt.hi, 8); got != tt.want {
			t.Errorf("logBin(%v, %v, %v) = %d, want %d", tt.v, tt.lo, tt.hi, got, tt.want)
		}
	}
}

// TestBinEdgesMatchBin checks the legend: a value just inside each edge
// falls in the bin the legend gives it.
func TestBinEdgesMatchBin(t *testing.T) {
	lo, hi := 260.0, 6904.0
	edges := binEdges(lo, hi, binCount)
	if edges[0] != lo || math.Abs(edges[binCount]-hi) > 1e-9 {
		t.Fatalf("edges %v do not span %v–%v", edges, lo, hi)
	}
	for i := range binCount {
		mid := math.Sqrt(edges[i] * edges[i+1])
		if got := logBin(mid, lo, hi, binCount); got != i {
			t.Errorf("value %v inside edge %d lands in bin %d", mid, i, got)
		}
	}
}

// TestPaletteIsPerceptuallyOrdered checks the scale goes from light to dark
// in even steps of OKLab lightness, so bins read as an ordered scale.
func TestPaletteIsPerceptuallyOrdered(t *testing.T) {
	p := palette(binCount)
	var steps []float64
	for i := 1; i < len(p); i++ {
		steps = append(steps, toOKLab(p[i-1])[0]-toOKLab(p[i])[0])
	}
	for i, s := range steps {
		if s <= 0 {
			t.Errorf("bin %d is not darker than bin %d", i+1, i)
		}
		if s > 0.12 {
			t.Errorf("lightness jumps %.3f between bins %d and %d", s, i, i+1)
		}
	}
	if p[0] != scaleStops[0] || p[len(p)-1] != scaleStops[len(scaleStops)-1] {
		t.Errorf("palette ends %v, %v are not the scale's ends", p[0], p[len(p)-1])
	}
}

func TestTextContrast(t *testing.T) {
	for i, bg := range palette(binCount) {
		if c := contrast(bg, textOn(bg)); c < 4.5 {
			t.Errorf("bin %d (%s): text contrast %.2f is below WCAG AA's 4.5", i, bg, c)
		}
	}
}

func TestOKLabRoundTrip(t *testing.T) {
	for _, c := range []rgb{{0, 0, 0}, {255, 255, 255}, {0x21, 0x91, 0x8c}, {200, 30, 90}} {
		if got := fromOKLab(toOKLab(c)); got != c {
			t.Errorf("OKLab round trip of %s gave %s", c, got)
		}
	}
}

// TestScaleOfTinyFigures: a figure of 1e-306 (or a subnormal 5e-324)
// beside 342 overflowed hi/lo, and the legend read +Inf for every bin.
func TestScaleOfTinyFigures(t *testing.T) {
	for _, lo := range []float64{1e-306, 5e-324, 1e-300} {
		edges := binEdges(lo, 342.5, binCount)
		for i, e := range edges {
			if math.IsInf(e, 0) || math.IsNaN(e) || i > 0 && e < edges[i-1] {
				t.Errorf("lo %g: edges %v", lo, edges)
				break
			}
		}
		if math.Abs(edges[binCount]-342.5) > 1e-9 {
			t.Errorf("lo %g: the last edge is %g, not the high end", lo, edges[binCount])
		}
		if b := logBin(342.5, lo, 342.5, binCount); b != binCount-1 {
			t.Errorf("lo %g: the best figure in bin %d", lo, b)
		}
		if b := logBin(lo, lo, 342.5, binCount); b != 0 {
			t.Errorf("lo %g: the least figure in bin %d", lo, b)
		}
	}
}
