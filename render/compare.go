package render

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/go-echarts/go-echarts/v2/charts"
	"github.com/go-echarts/go-echarts/v2/opts"
	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/matrixgen/matrixgen"
	"github.com/matrixgen/matrixgen/internal/term"
	"github.com/matrixgen/matrixgen/stats"
)

// Pair names two runs to compare: A is the baseline, B is read against it.
type Pair struct{ A, B string }

// compareID names a pair's compare page: "a--b" for two short ids without
// "--" ("m--m" vs "n" and "m" vs "m--n" would meet), otherwise the start of
// each id and a hash of both: "a…--b…--<32 hex digits>". The first kind
// holds "--" once, the second twice, so the two kinds cannot meet.
func compareID(p Pair) string {
	id := p.A + "--" + p.B
	if len(id) <= maxCompareID && !strings.Contains(p.A, "--") && !strings.Contains(p.B, "--") {
		return id
	}
	sum := sha256.Sum256([]byte(p.A + "\x00" + p.B))
	return p.A[:min(len(p.A), 40)] + "--" + p.B[:min(len(p.B), 40)] + "--" + hex.EncodeToString(sum[:16])
}

// maxCompareID keeps a folder name well inside 255 bytes.
const maxCompareID = 120

// comparePairs are the configured pairs (kept in order) and, for runs that
// share a model and a GPU, each run against the one before it (every such
// pair would grow with the square of the runs). Pairs naming a run the
// site does not have are an error.
func comparePairs(configured []Pair, rows []indexRow) ([]Pair, error) {
	var out []Pair
	seen := map[Pair]bool{}
	add := func(p Pair) {
		if !seen[p] && !seen[Pair{p.B, p.A}] && p.A != p.B {
			seen[p] = true
			out = append(out, p)
		}
	}
	if len(configured) > 0 {
		ids := make(map[string]bool, len(rows))
		for _, r := range rows {
			ids[r.ID] = true
		}
		for _, p := range configured {
			for _, id := range []string{p.A, p.B} {
				if !ids[id] {
					return nil, fmt.Errorf("[[site.compare]] names run %s, which is not in the runs folder", term.Name(id))
				}
			}
			add(p)
		}
	}
	// The rows' order, oldest first, by index: copies would double them.
	order := make([]int32, len(rows))
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortStableFunc(order, func(i, j int32) int {
		x, y := &rows[i], &rows[j]
		return cmp.Or(x.Started.Compare(y.Started), cmp.Compare(x.ID, y.ID))
	})
	previous := map[[2]string]string{} // model and GPU → the latest run so far
	for _, i := range order {
		r := &rows[i]
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

// A comparison has one implementation, the site script's: it pairs two
// runs' compare data (compareRun, runs/<id>/compare.js, a script because
// browsers refuse fetch from file://) and draws them. A built compare page
// and compare.html, which takes its pair from its address, are one page.

// comparePage is a compare page; compare.html's A and B are empty.
type comparePage struct {
	pageBase
	Heading string
	A, B    string
	Rules   jsontext.Value
	Test    significanceTest // said in words under the ratio matrix
}

func (b *Renderer) newComparePage(p Pair) comparePage {
	page := comparePage{Heading: "Compare", A: p.A, B: p.B}
	if p == (Pair{}) {
		page.pageBase = b.base("", "Compare two runs · "+b.site.Title, "Compare any two speed test matrices of this site.", "compare.html")
	} else {
		page.Heading = p.A + " vs " + p.B
		page.pageBase = b.base("../../", page.Heading+" · "+b.site.Title,
			"Speed test matrices compared: "+p.A+" and "+p.B+".", "compare/"+compareID(p)+"/")
	}
	page.Charts, page.Rules, page.Test = true, compareRulesJS(), compareTest()
	return page
}

// compareRules are what the script draws a comparison by that is no run's
// data.
type compareRules struct {
	RatioBins    []ratioBin       `json:"ratio_bins"`
	Test         significanceTest `json:"test"`
	PrefillChart any              `json:"prefill_chart"`
}

// significanceTest is stats.CompareDecode's rule as matrixgen.js repeats
// it: Student's t over the repeats where both runs have MinRepeats, its |t|
// against CriticalT[df − 1]; otherwise Mann–Whitney U (stats.CompareCell),
// MinSamples or more a side, exact up to ExactMax a side, else its z
// against CriticalZ. The script has neither an incomplete beta nor an erfc,
// so it decides by t and z where stats decides by p.
type significanceTest struct {
	Alpha      float64   `json:"alpha"`
	CriticalZ  float64   `json:"critical_z"`
	MinSamples int       `json:"min_samples"`
	ExactMax   int       `json:"exact_max"`
	MinRepeats int       `json:"min_repeats"`
	CriticalT  []float64 `json:"critical_t"`
}

// Chance is how many cells are tested for one to be marked by chance.
func (t significanceTest) Chance() float64 { return 1 / t.Alpha }

type ratioBin struct {
	Below *float64 `json:"below"` // nil: no bound
	Class string   `json:"class"`
	Label string   `json:"label"`
}

// ratioBins are the classes of B / A, loss to gain, for decode cells and
// prefill rows alike.
var ratioBins = []ratioBin{
	{new(0.8), "ratio-0", "below 0.80×"},
	{new(0.95), "ratio-1", "0.80–0.95×"},
	{new(1.05), "ratio-2", "0.95–1.05×"},
	{new(1.25), "ratio-3", "1.05–1.25×"},
	{nil, "ratio-4", "above 1.25×"},
}

var compareTest = sync.OnceValue(func() significanceTest {
	return significanceTest{Alpha: stats.Alpha, CriticalZ: stats.SignificantZ(), MinSamples: stats.MinSamples,
		ExactMax: stats.MaxExactSize, MinRepeats: stats.MinRepeats, CriticalT: stats.CriticalTs()}
})

var compareRulesJS = sync.OnceValue(func() jsontext.Value {
	return chartJSON(compareRules{RatioBins: ratioBins, Test: compareTest(), PrefillChart: comparePrefillChart()})
})

// comparePrefillChart is the option of the compare pages' prefill chart
// with no data: a bar of A and one of B for each context, lying down so the
// figures at their ends read across at any width.
func comparePrefillChart() map[string]any {
	bar := charts.NewBar()
	bar.SetGlobalOptions(append(axisChartOpts(opts.Initialization{ChartID: "compare-prefill-chart"},
		opts.XAxis{Name: "prompt tok/s", Type: "value", NameLocation: "middle", NameGap: 28},
		opts.YAxis{Type: "category", Inverse: opts.Bool(true)},
		opts.Grid{ContainLabel: opts.Bool(true), Left: "2%", Right: "12%", Top: "36", Bottom: "24"}),
		topLegend)...)
	label := &opts.Label{Show: opts.Bool(true), Position: "right", FontSize: 12}
	bar.AddSeries("A", nil, charts.WithItemStyleOpts(opts.ItemStyle{Color: "#21918c"}), charts.WithLabelOpts(*label)).
		AddSeries("B", nil, charts.WithItemStyleOpts(opts.ItemStyle{Color: "#d9622b"}), charts.WithLabelOpts(*label))
	bar.Validate()
	return bar.JSON()
}

// compareRun is what a comparison reads of one run, every figure as the
// run's page formats it; the script only pairs two and divides.
type compareRun struct {
	ID         string           `json:"id"`
	Title      string           `json:"title"`
	Date       string           `json:"date"`
	Simulated  bool             `json:"simulated"`
	Incomplete bool             `json:"incomplete,omitempty"` // its sweep stopped before it finished
	Settings   []compareFigure  `json:"settings"`
	Launch     []string         `json:"launch"`
	Headline   []compareFigure  `json:"headline"`
	Prefill    []comparePrefill `json:"prefill"`
	Cells      []compareCell    `json:"cells"`
}

// compareFigure is a labelled value; Value, where set, ranks it (the
// higher is marked best).
type compareFigure struct {
	Label string   `json:"label"`
	Text  string   `json:"text"`
	Value *float64 `json:"value,omitempty"`
}

type comparePrefill struct {
	Context int      `json:"context"`
	Label   string   `json:"label"`
	TokS    *float64 `json:"tok_s,omitempty"` // a valid row's figure
	Text    string   `json:"text"`            // the figure, or the status
	Server  string   `json:"server"`          // the server's own prefill tok/s
	Cold    string   `json:"cold"`            // the cold request's TTFT
	// Samples are a valid row's requests' prompt tok/s, for the test.
	Samples []float64 `json:"samples,omitempty"`
}

type compareCell struct {
	Context     int      `json:"context"`
	Label       string   `json:"label"`
	Concurrency int      `json:"concurrency"`
	TotalTokS   *float64 `json:"total_tok_s,omitempty"` // where the matrix shows a figure
	Text        string   `json:"text"`                  // the figure, or the status
	// Status is that of a cell that shows a figure without being valid
	// (its requests queued): never marked a gain or a loss.
	Status string `json:"status,omitempty"`
	// Seconds (stats.DecodeSeconds) and Repeats (stats.RepeatTotals) are a
	// valid cell's samples for the significance test.
	Seconds []int     `json:"seconds,omitempty"`
	Repeats []float64 `json:"repeats,omitempty"`
}

// compareScript is runs/<id>/compare.js: the run's compareRun, added to
// window.matrixgenRuns by id.
func compareScript(id string, r *matrixgen.Run) ([]byte, error) {
	key, keyErr := json.Marshal(id, scriptJSONOptions)
	data, err := json.Marshal(newCompareRun(id, r), scriptJSONOptions)
	if err := errors.Join(keyErr, err); err != nil {
		return nil, err
	}
	head := []byte("window.matrixgenRuns = window.matrixgenRuns || {};\nwindow.matrixgenRuns[")
	return slices.Concat(head, key, []byte("] = "), data, []byte(";\n")), nil
}

func newCompareRun(id string, r *matrixgen.Run) compareRun {
	// The script leaves out what neither run has: "", not a page's dash.
	c := compareRun{ID: id, Title: runTitle(r), Simulated: r.Simulated, Incomplete: r.Incomplete,
		Settings: compareSettings(r), Launch: strings.Fields(r.LaunchCommand)}
	if !r.StartedAt.IsZero() {
		c.Date = date(r.StartedAt)
	}
	best, okBest := r.BestSingleStream()
	peak, okPeak := r.PeakTotal()
	c.Headline = []compareFigure{
		rankedFigure("Best single-stream tok/s", best, okBest, tokS),
		rankedFigure("Peak total tok/s", peak, okPeak, tokS),
	}
	if perWatt := bestPerWattValue(r); perWatt > 0 {
		c.Headline = append(c.Headline, rankedFigure("Best tok/s per watt", perWatt, true, perWattText))
	}
	for _, p := range r.Prefill {
		row := comparePrefill{Context: p.ContextTokens, Label: matrixgen.ContextLabel(p.ContextTokens), Text: p.Status.Label(),
			Server: ifSet(p.ServerPromptTokS, tokS), Cold: ifSet(p.ColdTTFTMs, ttftText)}
		if p.Status == matrixgen.StatusValid && p.PromptTokS != nil {
			row.TokS, row.Text, row.Samples = p.PromptTokS, tokS(*p.PromptTokS), stats.PrefillSamples(p)
		}
		c.Prefill = append(c.Prefill, row)
	}
	for _, d := range r.Decode {
		cell := compareCell{Context: d.ContextTokens, Label: d.ContextLabel(), Concurrency: d.Concurrency,
			Text: d.Status.Label()}
		if showsFigure(d) && *d.TotalTokS > 0 {
			cell.TotalTokS, cell.Text = d.TotalTokS, decimal1(*d.TotalTokS)
			if d.Status == matrixgen.StatusValid {
				cell.Seconds, cell.Repeats = stats.DecodeSeconds(d), stats.RepeatTotals(d)
			} else {
				cell.Status = d.Status.Label()
			}
		}
		c.Cells = append(c.Cells, cell)
	}
	return c
}

func rankedFigure(label string, v float64, ok bool, format func(float64) string) compareFigure {
	if !ok {
		return compareFigure{Label: label, Text: dash}
	}
	return compareFigure{Label: label, Text: format(v), Value: &v}
}

// compareSettings are a run's settings a comparison sets side by side,
// every label in the same order for every run, "" where the run has none.
func compareSettings(r *matrixgen.Run) []compareFigure {
	measuredAgainst := ""
	if r.Simulated {
		measuredAgainst = simulatedServer + " (simulated)"
	}
	h := r.Hardware
	return []compareFigure{
		{Label: "Measured against", Text: measuredAgainst},
		{Label: "GPU", Text: asGiven(h, "gpu", h.GPU)},
		{Label: "VRAM", Text: asGiven(h, "vram_gb", vram(h.VRAMGB))},
		{Label: "CPU", Text: asGiven(h, "cpu", h.CPU)},
		{Label: "Model", Text: r.Model.Name},
		{Label: "Engine", Text: r.Engine.Name},
		{Label: "Version", Text: r.Engine.Version},
		{Label: "Quantization", Text: r.Engine.Quantization},
		{Label: "Backend", Text: r.Engine.Backend},
		{Label: "Build", Text: r.Engine.Build},
		{Label: "Commit", Text: r.Engine.Commit},
		{Label: "Benchmark tool", Text: joinNonEmpty(" ", r.Tool.Name, r.Tool.Version)},
		{Label: "Decode test", Text: decodeTestLabel(r.Sweep.DecodeTest)},
		{Label: "Time per measurement", Text: ifPositive(r.Sweep.DurationSeconds, planSeconds)},
		{Label: "Repeats", Text: repeatsLabel(r.Sweep.Repeats)},
		{Label: "Max output", Text: tokensIf(r.Sweep.MaxOutputTokens)},
		{Label: "Power limit", Text: powerLimit(h.PowerLimitW, h.DefaultPowerLimitW)},
		{Label: "Idle power", Text: wattsIf(h.IdlePowerW)},
		{Label: "Request", Text: requestLabel(r.Request)},
	}
}
