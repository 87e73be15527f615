package render

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"html/template"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/go-echarts/go-echarts/v2/charts"
	"github.com/go-echarts/go-echarts/v2/opts"
	"github.com/matrixgen/matrixgen"
	"github.com/matrixgen/matrixgen/internal/term"
)

// Pair names two runs to compare: A is the baseline, B is read against it.
type Pair struct{ A, B string }

// compareID names a pair's compare page: "a--b" for two ids without "--"
// (ids may hold '-', so "m--m" vs "n" and "m" vs "m--n" would both be
// "m--m--n"), and otherwise, or when that name is long, the start of each
// id and a hash of both: "a…--b…--<32 hex digits>". The names cannot meet:
// in the first kind "--" is followed by a letter or digit once (an id
// starts with one, and neither holds "--"), in the second twice; and two
// of the second kind differ in their hash of both whole ids.
func compareID(p Pair) string {
	id := p.A + "--" + p.B
	if len(id) <= maxCompareID && !strings.Contains(p.A, "--") && !strings.Contains(p.B, "--") {
		return id
	}
	sum := sha256.Sum256([]byte(p.A + "\x00" + p.B))
	return p.A[:min(len(p.A), 40)] + "--" + p.B[:min(len(p.B), 40)] + "--" + hex.EncodeToString(sum[:16])
}

// maxCompareID keeps a compare page's folder name well inside the 255
// bytes file systems allow.
const maxCompareID = 120

// comparePairs are the configured pairs (kept in order) and, for runs that
// share a model and a GPU, each run against the one before it: what changed
// since last time. Comparing every such pair would grow with the square of
// a lab's runs. Pairs naming a run the site does not have are reported.
func comparePairs(configured []Pair, rows []indexRow) ([]Pair, error) {
	byID := map[string]indexRow{}
	for _, r := range rows {
		byID[r.ID] = r
	}
	var out []Pair
	seen := map[Pair]bool{}
	add := func(p Pair) {
		if !seen[p] && !seen[Pair{p.B, p.A}] && p.A != p.B {
			seen[p] = true
			out = append(out, p)
		}
	}
	for _, p := range configured {
		for _, id := range []string{p.A, p.B} {
			if _, ok := byID[id]; !ok {
				return nil, fmt.Errorf("[[site.compare]] names run %s, which is not in the runs folder", term.Name(id))
			}
		}
		add(p)
	}
	sorted := slices.Clone(rows)
	slices.SortStableFunc(sorted, func(x, y indexRow) int {
		if c := x.started.Compare(y.started); c != 0 {
			return c
		}
		return cmp.Compare(x.ID, y.ID)
	})
	previous := map[[2]string]string{} // model and GPU → the latest run so far
	for _, r := range sorted {
		if r.GPU == dash {
			continue
		}
		key := [2]string{r.Model, r.GPU}
		if before, ok := previous[key]; ok {
			add(Pair{before, r.ID})
		}
		previous[key] = r.ID
	}
	return out, nil
}

type comparePage struct {
	pageBase
	Heading       string
	A, B          compareSide
	Differences   []difference
	Chart         template.JS
	ChartLabel    string
	Ratio         matrix
	RatioLegend   []legendBin
	Legend        legend
	LaunchDiffers bool
	// Stacked puts the two matrices one above the other: side by side,
	// more than four columns each would not both fit.
	Stacked bool
}

type compareSide struct {
	Letter          string // A or B
	ID, Title, Href string
	Simulated       bool
	Matrix          matrix
	// LaunchArgs is the run's launch command split between its arguments,
	// shown in a row of its own: beside the other run's it would make one
	// column a page wide.
	LaunchArgs launchArgs
}

type difference struct {
	Label, A, B string
	Differs     bool
}

// newComparePage lays out runs a and b side by side: their settings with
// differences marked, both prefill curves on one chart, both matrices on one
// colour scale, and the ratio B / A of every cell both measured.
func (b *builder) newComparePage(p Pair, a, bRun *matrixgen.Run) *comparePage {
	ra, rb := a.Sorted(), bRun.Sorted()
	title := fmt.Sprintf("%s vs %s", p.A, p.B)
	page := &comparePage{
		pageBase: b.base("../../", title+" · "+b.site.Title,
			"Speed test matrices compared: "+runTitle(ra)+" and "+runTitle(rb)+".", "compare/"+compareID(p)+"/"),
		Heading: title,
		A:       compareSide{Letter: "A", ID: p.A, Title: runTitle(ra), Href: "../../runs/" + p.A + "/index.html", Simulated: ra.Simulated},
		B:       compareSide{Letter: "B", ID: p.B, Title: runTitle(rb), Href: "../../runs/" + p.B + "/index.html", Simulated: rb.Simulated},
	}
	page.Differences = differences(ra, rb)
	page.A.LaunchArgs = strings.Fields(ra.LaunchCommand)
	page.B.LaunchArgs = strings.Fields(rb.LaunchCommand)
	page.LaunchDiffers = ra.LaunchCommand != rb.LaunchCommand
	lo, hi, ok := throughputRange(&matrixgen.Run{Decode: append(slices.Clone(ra.Decode), rb.Decode...)})
	var lgA, lgB legend
	page.A.Matrix, lgA = scaledMatrix(ra, lo, hi, ok, page.A.Href)
	page.B.Matrix, lgB = scaledMatrix(rb, lo, hi, ok, page.B.Href)
	page.Legend = lgA
	for _, s := range lgB.Statuses {
		if !slices.Contains(page.Legend.Statuses, s) {
			page.Legend.Statuses = append(page.Legend.Statuses, s)
		}
	}
	page.Ratio, page.RatioLegend = ratioMatrix(ra, rb)
	page.Stacked = max(len(page.A.Matrix.Columns), len(page.B.Matrix.Columns)) > 4
	if len(ra.Prefill)+len(rb.Prefill) > 0 {
		page.Chart, page.ChartLabel = comparePrefillChart(p, ra, rb)
		page.Charts = true
	}
	return page
}

// Sides are A and B, in that order.
func (p *comparePage) Sides() []compareSide { return []compareSide{p.A, p.B} }

func differences(a, b *matrixgen.Run) []difference {
	pairs := []struct {
		label string
		get   func(*matrixgen.Run) string
	}{
		{"Measured against", func(r *matrixgen.Run) string {
			if r.Simulated {
				return simulatedServer + " (simulated)"
			}
			return ""
		}},
		{"GPU", func(r *matrixgen.Run) string { return asGiven(r.Hardware, "gpu", r.Hardware.GPU) }},
		{"VRAM", func(r *matrixgen.Run) string { return asGiven(r.Hardware, "vram_gb", vram(r.Hardware.VRAMGB)) }},
		{"CPU", func(r *matrixgen.Run) string { return asGiven(r.Hardware, "cpu", r.Hardware.CPU) }},
		{"Model", func(r *matrixgen.Run) string { return r.Model.Name }},
		{"Engine", func(r *matrixgen.Run) string { return r.Engine.Name }},
		{"Version", func(r *matrixgen.Run) string { return r.Engine.Version }},
		{"Quantization", func(r *matrixgen.Run) string { return r.Engine.Quantization }},
		{"Backend", func(r *matrixgen.Run) string { return r.Engine.Backend }},
		{"Build", func(r *matrixgen.Run) string { return r.Engine.Build }},
		{"Commit", func(r *matrixgen.Run) string { return r.Engine.Commit }},
		{"Benchmark tool", func(r *matrixgen.Run) string { return joinNonEmpty(" ", r.Tool.Name, r.Tool.Version) }},
		{"Decode test", func(r *matrixgen.Run) string { return decodeTestLabel(r.Sweep.DecodeTest) }},
		{"Time per measurement", func(r *matrixgen.Run) string { return secondsIf(r.Sweep.DurationSeconds) }},
		{"Max output", func(r *matrixgen.Run) string {
			return tokensIf(r.Sweep.MaxOutputTokens)
		}},
		{"Power limit", func(r *matrixgen.Run) string {
			return powerLimit(r.Hardware.PowerLimitW, r.Hardware.DefaultPowerLimitW)
		}},
		{"Idle power", func(r *matrixgen.Run) string { return wattsIf(r.Hardware.IdlePowerW) }},
		{"Best tok/s per watt", bestPerWatt},
	}
	var out []difference
	for _, p := range pairs {
		va, vb := p.get(a), p.get(b)
		if va == "" && vb == "" {
			continue
		}
		out = append(out, difference{Label: p.label, A: cmp.Or(va, dash), B: cmp.Or(vb, dash), Differs: va != vb})
	}
	return out
}

// ratioBins are the ratio matrix's classes, loss to gain.
var ratioBins = []struct {
	below float64
	class string
	label string
}{
	{0.8, "ratio-0", "below 0.80×"},
	{0.95, "ratio-1", "0.80–0.95×"},
	{1.05, "ratio-2", "0.95–1.05×"},
	{1.25, "ratio-3", "1.05–1.25×"},
	{math.Inf(1), "ratio-4", "above 1.25×"},
}

func ratioClass(r float64) string {
	for _, b := range ratioBins {
		if r < b.below {
			return b.class
		}
	}
	return ratioBins[len(ratioBins)-1].class
}

// ratioMatrix is B / A total tok/s for every cell both runs show a figure
// for; other cells stay quietly empty, what each run has there in their
// title (both matrices below show it).
func ratioMatrix(a, b *matrixgen.Run) (matrix, []legendBin) {
	contexts := matrixgen.Union(a.Contexts(), b.Contexts())
	levels := matrixgen.Union(a.ConcurrencyLevels(), b.ConcurrencyLevels())
	m := matrix{Columns: levels}
	for _, c := range contexts {
		row := matrixRow{Label: matrixgen.ContextLabel(c)}
		for _, n := range levels {
			da, okA := a.Cell(c, n)
			db, okB := b.Cell(c, n)
			cell := matrixCell{Title: matrixgen.ContextLabel(c) + " × " + strconv.Itoa(n)}
			switch {
			case okA && okB && showsFigure(da) && showsFigure(db) && *da.TotalTokS > 0:
				r := *db.TotalTokS / *da.TotalTokS
				cell.Figure = strconv.FormatFloat(r, 'f', 2, 64) + "×"
				cell.Class = ratioClass(r)
				cell.TTFT = decimal1(*da.TotalTokS) + " → " + decimal1(*db.TotalTokS)
			default:
				cell.Class = "st-missing"
				cell.Title += ": A " + sideStatus(da, okA) + ", B " + sideStatus(db, okB)
			}
			row.Cells = append(row.Cells, cell)
		}
		m.Rows = append(m.Rows, row)
	}
	var lg []legendBin
	for _, b := range ratioBins {
		lg = append(lg, legendBin{Class: b.class, Range: b.label})
	}
	return m, lg
}

func sideStatus(d matrixgen.Decode, ok bool) string {
	if !ok {
		return "not measured"
	}
	return d.Status.Label()
}

// comparePrefillChart draws both runs' prompt tok/s by context as pairs of
// bars, each labelled with its figure, so a context only one run measured
// still reads (a lone bar) where a line would need two points.
func comparePrefillChart(p Pair, a, b *matrixgen.Run) (template.JS, string) {
	contexts := matrixgen.Union(a.PrefillContexts(), b.PrefillContexts())
	labels := make([]string, len(contexts))
	var described []string
	series := func(side string, r *matrixgen.Run) []opts.BarData {
		out := make([]opts.BarData, len(contexts))
		for i, c := range contexts {
			out[i] = opts.BarData{Value: "-"}
			for _, row := range r.Prefill {
				if row.ContextTokens == c && row.Status == matrixgen.StatusValid && row.PromptTokS != nil {
					out[i] = opts.BarData{Value: chartValue(row.PromptTokS),
						Label: &opts.Label{Show: opts.Bool(true), Formatter: tokS(*row.PromptTokS)}}
					described = append(described, side+" "+matrixgen.ContextLabel(c)+": "+tokS(*row.PromptTokS)+" tok/s")
				}
			}
		}
		return out
	}
	for i, c := range contexts {
		labels[i] = matrixgen.ContextLabel(c)
	}
	bar := charts.NewBar()
	bar.SetGlobalOptions(prefillAxes("compare-prefill-chart")...)
	bar.SetXAxis(labels).
		AddSeries("A: "+p.A, series("A", a), charts.WithItemStyleOpts(opts.ItemStyle{Color: "#21918c"})).
		AddSeries("B: "+p.B, series("B", b), charts.WithItemStyleOpts(opts.ItemStyle{Color: "#d9622b"}))
	bar.Validate()
	option := plainJSON(bar.JSON())
	uprightLabels(option)
	onPhones(option, map[string]any{"xAxis": []any{map[string]any{"axisLabel": map[string]any{"rotate": 45}}}},
		map[string]any{"xAxis": []any{map[string]any{"axisLabel": map[string]any{"rotate": 0}}}})
	return chartJS(option), "Prefill tok/s by context of " + p.A + " and " + p.B + ": " + strings.Join(described, "; ")
}

// uprightLabels stands every series' bar labels upright over their bars:
// two bars a context leave no room to print figures across.
func uprightLabels(option any) {
	o, _ := option.(map[string]any)
	series, _ := o["series"].([]any)
	for _, s := range series {
		if m, ok := s.(map[string]any); ok {
			label := uprightLabel()
			label["show"], label["fontSize"] = true, 10
			m["label"] = label
		}
	}
}
