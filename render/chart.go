package render

import (
	"cmp"
	"encoding/json"
	"html/template"
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
// whose measurements are Sorted: prompt tok/s as bars by context, each
// labelled with its figures, and beneath them, on the same contexts, TTFT
// as a line on a logarithmic axis of its own (it spans half a second to
// minutes). In one panel the line crossed the bars' labels wherever TTFT
// climbed past a bar's top; in two it cannot.
// The option is plain data: the page's script hands it to ECharts, so no
// run file string is ever executed.
func prefillChart(r *matrixgen.Run) (template.JS, string) {
	contexts, rates, ttfts, described := prefillData(r)
	var b []byte
	parts := prefillChartParts()
	for i, data := range parts.order {
		b = append(b, parts.text[i]...)
		switch data {
		case 0:
			b = appendMarshalled(b, contexts)
		case 1:
			b = appendMarshalled(b, rates)
		case 2:
			b = appendMarshalled(b, ttfts)
		}
	}
	b = append(b, parts.text[len(parts.order)]...)
	return withMedia(template.JS(b), prefillMedia()), "Prefill: " + strings.Join(described, "; ")
}

// prefillData is what a run puts in its prefill chart: the contexts, a bar
// of prompt tok/s each and a TTFT point each, and the chart described in
// words.
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
// 1), sharing the contexts and one tooltip.
func prefillOption(contexts []string, rates []opts.BarData, ttfts []opts.LineData) template.JS {
	bar := charts.NewBar()
	bar.SetGlobalOptions(prefillPanels("prefill-chart")...)
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
	bar.Validate()
	return chartJS(bar.JSON())
}

// chartParts is an option cut where a run's data go: text[0], data
// order[0], text[1], … text[len(order)].
type chartParts struct {
	text  []string
	order []int
}

// prefillChartParts is the prefill chart's option, built by go-echarts
// once with a mark where each of a run's three data arrays goes (contexts,
// bars, TTFT points) and cut there. Everything else in the option is the
// same for every run, and go-echarts fills its defaults by reflection:
// building it a page was most of the chart's cost. A test holds the cut
// option, filled, to the one go-echarts builds.
var prefillChartParts = sync.OnceValue(func() chartParts {
	const mark = "matrixgen-data-"
	option := string(prefillOption([]string{mark + "0"},
		[]opts.BarData{{Value: mark + "1"}}, []opts.LineData{{Value: mark + "2"}}))
	arrays := []string{`["` + mark + `0"]`, `[{"value":"` + mark + `1"}]`, `[{"value":"` + mark + `2"}]`}
	// Each array where it stands: the contexts twice (both panels' axes),
	// the bars and the TTFT points once.
	want := []int{2, 1, 1}
	type place struct{ at, data int }
	var places []place
	for i, a := range arrays {
		for from := 0; ; {
			j := strings.Index(option[from:], a)
			if j < 0 {
				break
			}
			places = append(places, place{from + j, i})
			from += j + len(a)
		}
		if n := strings.Count(option, a); n != want[i] {
			panic("render: the prefill chart's data " + a + " is in its option " + strconv.Itoa(n) + " times, not " + strconv.Itoa(want[i]))
		}
	}
	slices.SortFunc(places, func(a, b place) int { return cmp.Compare(a.at, b.at) })
	var parts chartParts
	from := 0
	for _, p := range places {
		parts.order = append(parts.order, p.data)
		parts.text = append(parts.text, option[from:p.at])
		from = p.at + len(arrays[p.data])
	}
	parts.text = append(parts.text, option[from:])
	return parts
})

// appendMarshalled appends v as encoding/json writes it, with <, > and &
// escaped for a script block.
func appendMarshalled(b []byte, v any) []byte {
	js, err := json.Marshal(v)
	if err != nil {
		panic("render: chart data do not marshal: " + err.Error())
	}
	return append(b, js...)
}

// prefillMedia is the prefill chart's phone layout and its wide one, the
// same for every run: marshalled once.
var prefillMedia = sync.OnceValue(func() template.JS {
	media := map[string]any{}
	onPhones(media, map[string]any{
		"series": []any{map[string]any{"label": uprightLabel()}, map[string]any{}},
		"xAxis":  []any{map[string]any{}, map[string]any{"axisLabel": map[string]any{"rotate": 45}}},
		// Room above the tallest bar for its upright label.
		"yAxis": []any{map[string]any{"boundaryGap": []any{0, "40%"}}, map[string]any{}},
	}, map[string]any{
		"series": []any{map[string]any{"label": map[string]any{"rotate": 0, "align": "center", "verticalAlign": "bottom", "position": "top", "distance": 5}}, map[string]any{}},
		"xAxis":  []any{map[string]any{}, map[string]any{"axisLabel": map[string]any{"rotate": 0}}},
		"yAxis":  []any{map[string]any{"boundaryGap": []any{0, "12%"}}, map[string]any{}},
	})
	return chartJS(media["media"])
})

// withMedia adds media queries to a marshalled option: the option is a
// JSON object, so the key goes in before its closing brace.
func withMedia(option, media template.JS) template.JS {
	o := strings.TrimRight(string(option), " \n")
	if !strings.HasSuffix(o, "}") || o == "{}" {
		panic("render: a chart option is not a JSON object with keys")
	}
	return template.JS(o[:len(o)-1] + `,"media":` + string(media) + "}")
}

// seconds turns milliseconds into seconds, keeping a missing figure missing.
func seconds(ms *float64) *float64 {
	if ms == nil {
		return nil
	}
	return new(*ms / 1000)
}

// uprightLabel stands a bar's label upright over it, for bars too narrow
// to print their figures across. (go-echarts' label options have no
// rotation, so it is set on the plain option.)
func uprightLabel() map[string]any {
	return map[string]any{"rotate": 90, "align": "left", "verticalAlign": "middle", "position": "top", "distance": 4}
}

// phoneWidth is the chart width up to which a chart takes its phone
// layout.
const phoneWidth = 600

// onPhones adds to a plain option what changes on a chart no wider than a
// phone, and what those settings are on a wider one: ECharts' media
// queries, evaluated as the chart is drawn and resized, so the page's
// script stays the same. Both sides are stated because ECharts does not
// undo a query's settings when it stops matching (a print or a wider
// window would keep the phone's).
func onPhones(option any, phone, wider map[string]any) {
	o, ok := option.(map[string]any)
	if !ok {
		return
	}
	o["media"] = []any{
		map[string]any{"query": map[string]any{"minWidth": phoneWidth + 1}, "option": wider},
		map[string]any{"query": map[string]any{"maxWidth": phoneWidth}, "option": phone},
	}
}

// prefillAxes are the options every prefill chart shares: a fixed id (a
// random one would make builds differ), an axis tooltip, a legend, context
// across and prompt tok/s up, no animation.
func prefillAxes(id string) []charts.GlobalOpts {
	return []charts.GlobalOpts{
		charts.WithInitializationOpts(opts.Initialization{ChartID: id}),
		// Axis labels inside the chart's box, so a phone's width cuts none.
		charts.WithGridOpts(opts.Grid{ContainLabel: opts.Bool(true), Left: "2%", Right: "2%"}),
		charts.WithTooltipOpts(opts.Tooltip{Show: opts.Bool(true), Trigger: "axis"}),
		charts.WithLegendOpts(opts.Legend{Show: opts.Bool(true), Top: "0"}),
		// Every context labelled, slanted where they would not fit.
		charts.WithXAxisOpts(opts.XAxis{Name: "context", NameLocation: "middle", NameGap: 36,
			AxisLabel: &opts.AxisLabel{Interval: "0", HideOverlap: opts.Bool(false)}}),
		charts.WithYAxisOpts(opts.YAxis{Name: "prompt tok/s", Type: "value"}),
		charts.WithAnimation(false),
	}
}

// prefillPanels lays prefillAxes out in the run page's two panels: the
// bars' above (its contexts unlabelled: the TTFT panel beneath labels
// them), the TTFT panel's place below, one axis pointer over both.
func prefillPanels(id string) []charts.GlobalOpts {
	return append(prefillAxes(id),
		func(bc *charts.BaseConfiguration) {
			bc.GridList = []opts.Grid{
				{ContainLabel: opts.Bool(true), Left: "2%", Right: "2%", Top: "40", Bottom: "46%"},
				{ContainLabel: opts.Bool(true), Left: "2%", Right: "2%", Top: "62%", Bottom: "50"},
			}
		},
		charts.WithAxisPointerOpts(&opts.AxisPointer{Link: []opts.AxisPointerLink{{XAxisIndex: []int{0, 1}}}}),
		charts.WithXAxisOpts(opts.XAxis{AxisLabel: &opts.AxisLabel{Show: opts.Bool(false)}}))
}

// barLabel prints a prefill bar's figures on it, as the pages people
// publish do, so a screenshot or a print carries them: tok/s, and TTFT.
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
		return Count(int(math.Round(s))) + " s"
	}
}

// chartValue is a figure for ECharts, or "-", its mark for a missing point.
func chartValue(v *float64) any {
	if v == nil || math.IsNaN(*v) || math.IsInf(*v, 0) {
		return "-"
	}
	return *v
}

// chartJS is an option as a JSON block. A chart option is our own types
// and finite numbers only (chartValue turns the rest into "-"), so it
// always marshals.
func chartJS(option any) template.JS {
	js, err := jsonBlock(option)
	if err != nil {
		panic("render: chart option does not marshal: " + err.Error())
	}
	return js
}

// plainJSON round-trips a go-echarts option through JSON so a page gets
// plain maps and slices: what the template escapes is what ECharts reads.
func plainJSON(v any) any {
	raw, err := json.Marshal(v)
	if err != nil {
		panic("render: chart option does not marshal: " + err.Error()) // only our own types are in it
	}
	var plain any
	_ = json.Unmarshal(raw, &plain)
	return plain
}

// indexChart answers a lab's first question, which setup is fastest: each
// run's best single-stream and peak total tok/s as labelled bars, a row a
// run, on a logarithmic axis (single-stream figures are a tenth of peak
// ones or less). The page's script keeps only the rows its filters leave.
func indexChart(rows []indexRow) (template.JS, string) {
	ids := make([]string, len(rows))
	var best, peak []opts.BarData
	var described []string
	for i, r := range rows {
		ids[i] = r.ID
		best = append(best, indexBar(r.BestValue, r.BestSingle))
		peak = append(peak, indexBar(r.PeakValue, r.Peak))
		described = append(described, r.ID+": "+cmp.Or(r.BestSingle, dash)+" single-stream, "+cmp.Or(r.Peak, dash)+" peak tok/s")
	}
	bar := charts.NewBar()
	bar.SetGlobalOptions(
		charts.WithInitializationOpts(opts.Initialization{ChartID: "index-chart"}),
		charts.WithGridOpts(opts.Grid{ContainLabel: opts.Bool(true), Left: "2%", Right: "8%", Top: "40", Bottom: "30"}),
		charts.WithTooltipOpts(opts.Tooltip{Show: opts.Bool(true), Trigger: "axis"}),
		charts.WithLegendOpts(opts.Legend{Show: opts.Bool(true), Top: "0"}),
		// Reversed below: runs down the side, first on top; tok/s across.
		charts.WithXAxisOpts(opts.XAxis{Name: "tok/s", Type: "log", NameLocation: "middle", NameGap: 24}),
		charts.WithYAxisOpts(opts.YAxis{Type: "category", Inverse: opts.Bool(true),
			AxisLabel: &opts.AxisLabel{Interval: "0"}}),
		charts.WithAnimation(false),
	)
	bar.SetXAxis(ids).
		AddSeries("best single-stream tok/s", best, charts.WithItemStyleOpts(opts.ItemStyle{Color: "#21918c"})).
		AddSeries("peak total tok/s", peak, charts.WithItemStyleOpts(opts.ItemStyle{Color: "#3b528b"}))
	bar.XYReversal()
	bar.Validate()
	option := plainJSON(bar.JSON())
	onPhones(option, map[string]any{"yAxis": []any{map[string]any{"axisLabel": map[string]any{"width": 110, "overflow": "truncate"}}}},
		map[string]any{"yAxis": []any{map[string]any{"axisLabel": map[string]any{"overflow": "none"}}}})
	return chartJS(option), "Fastest setups: " + strings.Join(described, "; ")
}

// indexBar is one figure of the index chart, labelled as the table prints
// it; a run without the figure has no bar.
func indexBar(raw, text string) opts.BarData {
	v, err := strconv.ParseFloat(raw, 64)
	if err != nil || v <= 0 {
		return opts.BarData{Value: "-"}
	}
	return opts.BarData{Value: v, Label: &opts.Label{Show: opts.Bool(true), Position: "right", FontSize: 10, Formatter: text}}
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
	return cellCharts{PerSecond: jsontext.Value(chartJS(perSecondChart())), Power: jsontext.Value(chartJS(powerChart()))}
})

// detailChartOpts are what the panel's charts share.
func detailChartOpts(id string, grid opts.Grid, x opts.XAxis, y opts.YAxis) []charts.GlobalOpts {
	return []charts.GlobalOpts{
		charts.WithInitializationOpts(opts.Initialization{ChartID: id, BackgroundColor: "transparent"}),
		charts.WithTooltipOpts(opts.Tooltip{Show: opts.Bool(true), Trigger: "axis"}),
		charts.WithGridOpts(grid),
		charts.WithXAxisOpts(x),
		charts.WithYAxisOpts(y),
		charts.WithAnimation(false),
	}
}

// perSecondChart draws a cell's output tokens in each second of its
// window; the script sets the seconds (xAxis data) and the counts.
func perSecondChart() any {
	line := charts.NewLine()
	line.SetGlobalOptions(detailChartOpts("cell-detail-chart",
		opts.Grid{Left: "60", Right: "20", Top: "30", Bottom: "40"},
		opts.XAxis{Type: "category", Name: "second of the window", NameLocation: "middle", NameGap: 26},
		opts.YAxis{Type: "value", Name: "output tokens"})...)
	line.SetXAxis([]int{}).AddSeries("output tokens per second", []opts.LineData{},
		charts.WithItemStyleOpts(opts.ItemStyle{Color: "#21918c"}))
	line.Validate()
	return plainJSON(line.JSON())
}

// powerChart draws the GPUs' board power and mean SM clock through a
// cell's window, [second, value] points the script sets.
func powerChart() any {
	line := charts.NewLine()
	line.SetGlobalOptions(append(detailChartOpts("cell-detail-power",
		opts.Grid{Left: "60", Right: "60", Top: "40", Bottom: "40"},
		opts.XAxis{Type: "value", Name: "second of the window", NameLocation: "middle", NameGap: 26},
		opts.YAxis{Type: "value", Name: "watts"}),
		charts.WithLegendOpts(opts.Legend{Show: opts.Bool(true), Top: "0"}))...)
	line.ExtendYAxis(opts.YAxis{Type: "value", Name: "MHz", SplitLine: &opts.SplitLine{Show: opts.Bool(false)}})
	line.AddSeries("board power, all GPUs (W)", []opts.LineData{},
		charts.WithItemStyleOpts(opts.ItemStyle{Color: "#d95f02"}))
	line.AddSeries("SM clock, mean (MHz)", []opts.LineData{},
		charts.WithLineChartOpts(opts.LineChart{YAxisIndex: 1}),
		charts.WithItemStyleOpts(opts.ItemStyle{Color: "#7570b3"}))
	line.Validate()
	return plainJSON(line.JSON())
}
