package render

import (
	"cmp"
	"encoding/json"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/go-echarts/go-echarts/v2/charts"
	"github.com/go-echarts/go-echarts/v2/opts"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/matrixgen/matrixgen"
)

// prefillChart builds the ECharts option of the prefill chart for a run
// whose measurements are Sorted: prompt tok/s as labelled bars by context,
// and beneath them, in a panel of its own so it crosses no label, TTFT on a
// logarithmic axis. The option is plain data, written as JSON: no run
// file string is ever executed.
func prefillChart(r *matrixgen.Run) (map[string]any, string) {
	contexts, rates, ttfts, described := prefillData(r)
	return withPrefillData(emptyPrefillOption(), contexts, rates, ttfts), "Prefill: " + strings.Join(described, "; ")
}

// prefillData is a run's prefill chart's contexts, bars and TTFT points,
// and the chart described in words.
func prefillData(r *matrixgen.Run) (contexts []string, rates []opts.BarData, ttfts []opts.LineData, described []string) {
	for _, p := range r.Prefill {
		ctx := matrixgen.ContextLabel(p.ContextTokens)
		contexts = append(contexts, ctx)
		rates = append(rates, opts.BarData{Value: chartValue(p.PromptTokS), Label: barLabel(p)})
		ttfts = append(ttfts, opts.LineData{Value: chartValue(seconds(p.TTFTMs))})
		described = append(described, ctx+": "+optional(p.PromptTokS, tokS)+" tok/s, "+optional(p.TTFTMs, millis)+" TTFT")
	}
	return contexts, rates, ttfts, described
}

// prefillOption is the prefill chart as go-echarts builds it: two panels,
// the bars above (grid 0, axes 0) and the TTFT line below (grid 1, axes
// 1), sharing the contexts and one tooltip, with its phone layout.
func prefillOption(contexts []string, rates []opts.BarData, ttfts []opts.LineData) map[string]any {
	bar := charts.NewBar()
	// One axis pointer over both panels.
	bar.SetGlobalOptions(append(axisChartOpts(opts.Initialization{ChartID: "prefill-chart"},
		opts.XAxis{AxisLabel: &opts.AxisLabel{Show: opts.Bool(false)}}, // the TTFT panel labels the contexts
		opts.YAxis{Name: "prompt tok/s", Type: "value"},
		opts.Grid{ContainLabel: opts.Bool(true), Left: "2%", Right: "2%", Top: "40", Bottom: "46%"},
		opts.Grid{ContainLabel: opts.Bool(true), Left: "2%", Right: "2%", Top: "62%", Bottom: "50"}),
		topLegend,
		charts.WithAxisPointerOpts(&opts.AxisPointer{Link: []opts.AxisPointerLink{{XAxisIndex: []int{0, 1}}}}))...)
	bar.SetXAxis(contexts).AddSeries("prompt tok/s", rates,
		charts.WithItemStyleOpts(opts.ItemStyle{Color: "#21918c"}))
	// The bottom panel's contexts, named and labelled for both panels.
	bar.ExtendXAxis(opts.XAxis{GridIndex: 1, Type: "category", Data: contexts, Name: "context", NameLocation: "middle", NameGap: 36,
		AxisLabel: &opts.AxisLabel{Interval: "0", HideOverlap: opts.Bool(false)}})
	// TTFT in seconds: the axis reads 0.1 … 1,000, not 100 … 1,000,000.
	bar.ExtendYAxis(opts.YAxis{GridIndex: 1, Name: "TTFT (s)", Type: "log"})
	line := charts.NewLine()
	line.AddSeries("TTFT (s)", ttfts,
		charts.WithLineChartOpts(opts.LineChart{XAxisIndex: 1, YAxisIndex: 1}),
		charts.WithItemStyleOpts(opts.ItemStyle{Color: "#d9622b"}))
	bar.Overlap(line)
	bar.Accept(prefillMedia)
	bar.Validate()
	return bar.JSON()
}

// emptyPrefillOption is the prefill chart's option without a run's data,
// built once: go-echarts' reflection was most of the chart's cost.
var emptyPrefillOption = sync.OnceValue(func() map[string]any {
	return prefillOption(nil, nil, nil)
})

// withPrefillData is a copy of the prefill chart's option with a run's
// data in its axes and series.
func withPrefillData(option map[string]any, contexts []string, rates []opts.BarData, ttfts []opts.LineData) map[string]any {
	filled := maps.Clone(option)
	xAxes := slices.Clone(option["xAxis"].([]opts.XAxis))
	xAxes[0].Data, xAxes[1].Data = contexts, contexts
	series := slices.Clone(option["series"].(charts.MultiSeries))
	series[0].Data, series[1].Data = rates, ttfts
	filled["xAxis"], filled["series"] = xAxes, series
	return filled
}

// prefillMedia is the prefill chart's phone layout, each bar's label
// upright over it, and its wide one.
var prefillMedia = onPhones(map[string]any{
	"series": []any{map[string]any{"label": map[string]any{"rotate": 90, "align": "left", "verticalAlign": "middle", "position": "top", "distance": 4}}, map[string]any{}},
	"xAxis":  []any{map[string]any{}, map[string]any{"axisLabel": map[string]any{"rotate": 45}}},
	// Room above the tallest bar for its upright label.
	"yAxis": []any{map[string]any{"boundaryGap": []any{0, "40%"}}, map[string]any{}},
}, map[string]any{
	"series": []any{map[string]any{"label": map[string]any{"rotate": 0, "align": "center", "verticalAlign": "bottom", "position": "top", "distance": 5}}, map[string]any{}},
	"xAxis":  []any{map[string]any{}, map[string]any{"axisLabel": map[string]any{"rotate": 0}}},
	"yAxis":  []any{map[string]any{"boundaryGap": []any{0, "12%"}}, map[string]any{}},
})

// seconds turns milliseconds into seconds, keeping a missing figure missing.
func seconds(ms *float64) *float64 {
	if ms == nil {
		return nil
	}
	return new(*ms / 1000)
}

// phoneWidth is the widest chart that takes its phone layout.
const phoneWidth = 600

// onPhones adds ECharts media queries to an option: the settings on a
// chart no wider than a phone, and on a wider one (ECharts does not undo a
// query's settings when it stops matching). go-echarts has no media
// option, and its types leave out a zero (rotate: 0), so they are maps.
func onPhones(phone, wider map[string]any) charts.ConfigurationVisitor {
	return mediaVisitor{media: []any{
		map[string]any{"query": map[string]any{"minWidth": phoneWidth + 1}, "option": wider},
		map[string]any{"query": map[string]any{"maxWidth": phoneWidth}, "option": phone},
	}}
}

// mediaVisitor adds "media" to a go-echarts option.
type mediaVisitor struct {
	charts.BaseConfigurationVisitor
	media []any
}

func (v mediaVisitor) Visit(option map[string]any) { option["media"] = v.media }

// axisChartOpts are what every chart on axes shares: a fixed id (a random
// one would make builds differ), an axis tooltip, no animation.
func axisChartOpts(init opts.Initialization, x opts.XAxis, y opts.YAxis, grids ...opts.Grid) []charts.GlobalOpts {
	return []charts.GlobalOpts{
		charts.WithInitializationOpts(init),
		charts.WithTooltipOpts(opts.Tooltip{Show: opts.Bool(true), Trigger: "axis"}),
		charts.WithGridOpts(grids...),
		charts.WithXAxisOpts(x),
		charts.WithYAxisOpts(y),
		charts.WithAnimation(false),
	}
}

// topLegend names a chart's series above it.
var topLegend = charts.WithLegendOpts(opts.Legend{Show: opts.Bool(true), Top: "0"})

// barLabel prints a prefill bar's figures on it, tok/s and TTFT, so a
// screenshot carries them.
func barLabel(p matrixgen.Prefill) *opts.Label {
	if p.PromptTokS == nil {
		return nil
	}
	text := tokS(*p.PromptTokS)
	if _, beyond, _ := p.OutsidePrompt(); beyond {
		text += notServerMark // the notes under the table say why
	}
	if p.TTFTMs != nil {
		text += "\n" + ttftText(*p.TTFTMs)
	}
	return &opts.Label{Show: opts.Bool(true), Position: "top", FontSize: 10, LineHeight: 13, Formatter: text}
}

// ttftText is a time to first token as people read it: milliseconds below
// ten seconds ("491 ms"), seconds from there ("12.3 s", "154 s").
func ttftText(ms float64) string {
	switch s := ms / 1000; {
	case s < 10:
		return millis(ms)
	case s < 100:
		return decimal1(s) + " s"
	default:
		return count(int(math.Round(s))) + " s"
	}
}

// chartValue is a figure for ECharts, or "-", its mark for a missing point.
func chartValue(v *float64) any {
	if v == nil || math.IsNaN(*v) || math.IsInf(*v, 0) {
		return "-"
	}
	return *v
}

// chartJSON is an option marshalled as encoding/json writes it. An option
// is our own types and finite numbers only, so it always marshals.
func chartJSON(option any) jsontext.Value {
	js, err := json.Marshal(option)
	if err != nil {
		panic("render: chart option does not marshal: " + err.Error())
	}
	return js
}

// indexChart answers which setup is fastest: of the page's runs, the
// indexChartRuns with the highest peak total tok/s, fastest on top, their
// best single-stream and peak total tok/s as labelled bars on a log axis.
// matrixgen.js's fastest draws a filtered view's alike.
func indexChart(rows []indexRow) (map[string]any, string) {
	shown := fastestRuns(rows)
	var best, peak []opts.BarData
	var ids, described []string
	for _, r := range shown {
		ids = append(ids, r.ID)
		best = append(best, indexBar(r.BestValue, r.BestSingle))
		peak = append(peak, indexBar(r.PeakValue, r.Peak))
		described = append(described, r.ID+": "+cmp.Or(r.BestSingle, dash)+" single-stream, "+cmp.Or(r.Peak, dash)+" peak tok/s")
	}
	bar := charts.NewBar()
	// Reversed below: runs down the side, first on top; tok/s across.
	bar.SetGlobalOptions(append(axisChartOpts(opts.Initialization{ChartID: "index-chart"},
		opts.XAxis{Name: "tok/s", Type: "log", NameLocation: "middle", NameGap: 24},
		opts.YAxis{Type: "category", Inverse: opts.Bool(true), AxisLabel: &opts.AxisLabel{Interval: "0", FontSize: 12}},
		opts.Grid{ContainLabel: opts.Bool(true), Left: "2%", Right: "10%", Top: "40", Bottom: "30"}),
		topLegend)...)
	bar.SetXAxis(ids).
		AddSeries("best single-stream tok/s", best, charts.WithItemStyleOpts(opts.ItemStyle{Color: "#21918c"})).
		AddSeries("peak total tok/s", peak, charts.WithItemStyleOpts(opts.ItemStyle{Color: "#3b528b"}))
	bar.XYReversal()
	bar.Accept(onPhones(map[string]any{"yAxis": []any{map[string]any{"axisLabel": map[string]any{"width": 110, "overflow": "truncate"}}}},
		map[string]any{"yAxis": []any{map[string]any{"axisLabel": map[string]any{"width": 260, "overflow": "truncate"}}}}))
	bar.Validate()
	return bar.JSON(), indexChartLabel(len(shown), len(rows), "on this page") + strings.Join(described, "; ")
}

// indexChartRuns is how many runs the index chart shows at most: a chart
// of a hundred bars was taller than the table it sat above.
const indexChartRuns = 10

// fastestRuns are the indexChartRuns of rows with the highest peak total
// tok/s, fastest first (runs without the figure last, in their order).
func fastestRuns(rows []indexRow) []indexRow {
	peak := func(r indexRow) float64 {
		v, err := strconv.ParseFloat(r.PeakValue, 64)
		if err != nil || !(v > 0) {
			return -1
		}
		return v
	}
	out := slices.Clone(rows)
	slices.SortStableFunc(out, func(x, y indexRow) int { return cmp.Compare(peak(y), peak(x)) })
	return out[:min(len(out), indexChartRuns)]
}

// indexChartLabel begins the index chart's label: what it shows, of how
// many runs; matrixgen.js's chartLabel says it alike of a view.
func indexChartLabel(shown, of int, where string) string {
	if of == 1 {
		return "Best single-stream and peak total tok/s of the run " + where + ": "
	}
	if shown == of {
		return "Best single-stream and peak total tok/s of the " + count(of) + " runs " + where + ", fastest first: "
	}
	return "Best single-stream and peak total tok/s of the " + count(shown) + " fastest of the " + count(of) + " runs " + where + ": "
}

// indexBar is one figure of the index chart, labelled as the table prints
// it; a run without the figure has no bar.
func indexBar(raw, text string) opts.BarData {
	v, err := strconv.ParseFloat(raw, 64)
	if err != nil || v <= 0 {
		return opts.BarData{Value: "-"}
	}
	return opts.BarData{Value: v, Label: &opts.Label{Show: opts.Bool(true), Position: "right", FontSize: 11, Formatter: text}}
}

// cellCharts are the options of the cell panel's two charts, built once
// with no data: the page's script puts the chosen cell's series in and
// draws, so no chart is defined twice.
type cellCharts struct {
	PerSecond jsontext.Value `json:"per_second"`
	Power     jsontext.Value `json:"power"`
}

// cellChartOptions are the same for every page: built and marshalled once
// a process.
var cellChartOptions = sync.OnceValue(func() cellCharts {
	return cellCharts{PerSecond: chartJSON(perSecondChart()), Power: chartJSON(powerChart())}
})

// cellChartID is a chart of the cell panel, on the panel's background.
func cellChartID(id string) opts.Initialization {
	return opts.Initialization{ChartID: id, BackgroundColor: "transparent"}
}

// perSecondChart draws a cell's output tokens in each second of its
// window; the script sets the seconds (xAxis data) and the counts.
func perSecondChart() map[string]any {
	line := charts.NewLine()
	line.SetGlobalOptions(axisChartOpts(cellChartID("cell-detail-chart"),
		opts.XAxis{Type: "category", Name: "second of the window", NameLocation: "middle", NameGap: 26},
		opts.YAxis{Type: "value", Name: "output tokens"},
		opts.Grid{Left: "60", Right: "20", Top: "30", Bottom: "40"})...)
	line.SetXAxis([]int{}).AddSeries("output tokens per second", []opts.LineData{},
		charts.WithItemStyleOpts(opts.ItemStyle{Color: "#21918c"}))
	line.Validate()
	return line.JSON()
}

// powerChart draws the GPUs' board power and mean SM clock through a
// cell's window, [second, value] points the script sets.
func powerChart() map[string]any {
	line := charts.NewLine()
	line.SetGlobalOptions(append(axisChartOpts(cellChartID("cell-detail-power"),
		opts.XAxis{Type: "value", Name: "second of the window", NameLocation: "middle", NameGap: 26},
		opts.YAxis{Type: "value", Name: "watts"},
		opts.Grid{Left: "60", Right: "60", Top: "40", Bottom: "40"}),
		topLegend)...)
	line.ExtendYAxis(opts.YAxis{Type: "value", Name: "MHz", SplitLine: &opts.SplitLine{Show: opts.Bool(false)}})
	line.AddSeries("board power, all GPUs (W)", []opts.LineData{},
		charts.WithItemStyleOpts(opts.ItemStyle{Color: "#d95f02"}))
	line.AddSeries("SM clock, mean (MHz)", []opts.LineData{},
		charts.WithLineChartOpts(opts.LineChart{YAxisIndex: 1}),
		charts.WithItemStyleOpts(opts.ItemStyle{Color: "#7570b3"}))
	line.Validate()
	return line.JSON()
}
