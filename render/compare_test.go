package render

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/matrixgen/matrixgen"
	"github.com/matrixgen/matrixgen/internal/testrun"
)

// readCompareRun reads a built run's compare.js back into its data: the
// script must be the one statement that adds it to window.matrixgenRuns.
func readCompareRun(t *testing.T, out, id string) compareRun {
	t.Helper()
	js := read(t, filepath.Join(out, "runs", id, "compare.js"))
	prefix := "window.matrixgenRuns = window.matrixgenRuns || {};\nwindow.matrixgenRuns[" + strconv.Quote(id) + "] = "
	body, ok := strings.CutPrefix(js, prefix)
	body, ok2 := strings.CutSuffix(body, ";\n")
	if !ok || !ok2 {
		t.Fatalf("%s/compare.js is not the one statement adding the run:\n%.200s", id, js)
	}
	var c compareRun
	dec := json.NewDecoder(strings.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		t.Fatalf("%s/compare.js: %v", id, err)
	}
	return c
}

// TestCompareScriptHoldsTheRun: the seed run's compare.js carries every
// settings label in order, its 64 cells with the matrix's figures or
// statuses, its prefill rows and its headline figures.
func TestCompareScriptHoldsTheRun(t *testing.T) {
	out := filepath.Join(t.TempDir(), "public")
	sample := loadSample(t)
	if _, err := writeSite(Entries{sample}, Site{}, out); err != nil {
		t.Fatal(err)
	}
	c := readCompareRun(t, out, sampleID)
	r := sample.Run
	if c.ID != sampleID || c.Title != runTitle(r) || c.Simulated {
		t.Errorf("id %q title %q simulated %v", c.ID, c.Title, c.Simulated)
	}
	var labels []string
	for _, s := range c.Settings {
		labels = append(labels, s.Label)
	}
	if len(labels) != 19 || labels[0] != "Measured against" || labels[1] != "GPU" || labels[14] != "Repeats" || labels[17] != "Idle power" || labels[18] != "Request" {
		t.Errorf("settings labels %q", labels)
	}
	if len(c.Cells) != len(r.Decode) || len(c.Cells) != 64 {
		t.Fatalf("%d cells, want the run's %d", len(c.Cells), len(r.Decode))
	}
	figures, statuses := 0, 0
	for i, cell := range c.Cells {
		d := r.Decode[i]
		if cell.Context != d.ContextTokens || cell.Concurrency != d.Concurrency || cell.Label != d.ContextLabel() {
			t.Errorf("cell %d is %+v, want %s × %d", i, cell, d.ContextLabel(), d.Concurrency)
		}
		switch {
		case showsFigure(d):
			figures++
			if cell.TotalTokS == nil || *cell.TotalTokS != *d.TotalTokS || cell.Text != decimal1(*d.TotalTokS) {
				t.Errorf("cell %s × %d: %+v, want %v", d.ContextLabel(), d.Concurrency, cell, *d.TotalTokS)
			}
		default:
			statuses++
			if cell.TotalTokS != nil || !strings.HasSuffix(cell.Text, d.Status.Label()) {
				t.Errorf("cell %s × %d (%s): %+v", d.ContextLabel(), d.Concurrency, d.Status, cell)
			}
		}
	}
	if figures == 0 || statuses == 0 {
		t.Errorf("%d cells with figures and %d without: the seed has both", figures, statuses)
	}
	if len(c.Prefill) != len(r.Prefill) || c.Prefill[0].TokS == nil || c.Prefill[0].Text != tokS(*r.Prefill[0].PromptTokS) {
		t.Errorf("prefill %+v", c.Prefill)
	}
	if len(c.Headline) != 2 || c.Headline[0].Text != "445.7" || *c.Headline[0].Value != 445.7 || c.Headline[1].Label != "Peak total tok/s" {
		t.Errorf("headline %+v", c.Headline)
	}
}

// TestCompareScriptEscapes: text from a run file cannot end the script or
// break its line: it reads back whole, and no <, > or line separator is
// written as itself.
func TestCompareScriptEscapes(t *testing.T) {
	hostile := "</script><script>alert(1)</script>\u2028\u2029\"\\"
	r := testrun.Full(1)
	r.Model.Name, r.LaunchCommand = hostile, "vllm serve --name "+hostile
	js, err := compareScript("x", r)
	if err != nil {
		t.Fatal(err)
	}
	if strings.ContainsAny(string(js), "<>\u2028\u2029") {
		t.Errorf("compare.js holds raw markup or line separators: %.300s", js)
	}
	out := filepath.Join(t.TempDir(), "public")
	if _, err := writeSite(Entries{{ID: "x", Run: r}}, Site{}, out); err != nil {
		t.Fatal(err)
	}
	c := readCompareRun(t, out, "x")
	if c.Settings[4].Label != "Model" || c.Settings[4].Text != hostile || !strings.Contains(strings.Join(c.Launch, " "), "</script><script>alert(1)</script>") {
		t.Errorf("the model reads back as %q", c.Settings[4].Text)
	}
}

// TestCompareScriptMarksHardware: a sim run's data says simulated and
// names the sim as what it measured against; hardware a person typed is
// marked as given; what was detected is not.
func TestCompareScriptMarksHardware(t *testing.T) {
	out := markedPair(t)
	setting := func(c compareRun, label string) string {
		for _, s := range c.Settings {
			if s.Label == label {
				return s.Text
			}
		}
		t.Fatalf("no setting %s", label)
		return ""
	}
	sim, given, sample := readCompareRun(t, out, "simulated-run"), readCompareRun(t, out, "given-run"), readCompareRun(t, out, sampleID)
	if !sim.Simulated || setting(sim, "Measured against") != "matrixgen sim (simulated)" || strings.Contains(sim.Title, "RTX") {
		t.Errorf("the sim run's data: simulated %v, measured against %q, title %q", sim.Simulated, setting(sim, "Measured against"), sim.Title)
	}
	if setting(given, "GPU") != "RTX PRO 6000 Blackwell Server Edition (as given)" || setting(given, "VRAM") != "96 GB (as given)" {
		t.Errorf("the given run's hardware: %q, %q", setting(given, "GPU"), setting(given, "VRAM"))
	}
	if sample.Simulated || setting(sample, "GPU") != "RTX PRO 6000 Blackwell Server Edition" || setting(sample, "Measured against") != "" {
		t.Errorf("the sample run's data is marked: %+v", sample.Settings[:3])
	}
}

// TestCompareScriptEfficiency: the power limit as a setting, and the best
// tok/s per watt as a headline figure of a run with telemetry only.
func TestCompareScriptEfficiency(t *testing.T) {
	a, b := testrun.Full(1), testrun.Full(1)
	a.Hardware.PowerLimitW, a.Hardware.DefaultPowerLimitW = 300, 600
	a.Decode[0].Power = &matrixgen.Power{MeanPowerW: 250, TokSPerW: new(2.5)}
	a.Decode[0].Status = matrixgen.StatusValid
	ca, cb := newCompareRun("a", a), newCompareRun("b", b)
	if ca.Settings[16].Label != "Power limit" || ca.Settings[16].Text != "300 W (default 600 W)" {
		t.Errorf("power limit %+v", ca.Settings[16])
	}
	if len(ca.Headline) != 3 || ca.Headline[2].Text != "2.50" || *ca.Headline[2].Value != 2.5 || len(cb.Headline) != 2 {
		t.Errorf("headline with telemetry %+v, without %+v", ca.Headline, cb.Headline)
	}
}

// TestComparePagesNameTheirPair: a built compare page names its pair and
// the site's root for its script, compare.html names none (its address
// does), and both carry the same rules: the ratio bins in order.
func TestComparePagesNameTheirPair(t *testing.T) {
	out := markedPair(t)
	built := read(t, filepath.Join(out, "compare", compareID(Pair{sampleID, "simulated-run"}), "index.html"))
	if !strings.Contains(built, `<div id="compare" data-root="../../" data-a="`+sampleID+`" data-b="simulated-run" hidden>`) {
		t.Error("the built compare page does not name its pair")
	}
	pick := read(t, filepath.Join(out, "compare.html"))
	if !strings.Contains(pick, `<div id="compare" data-root="" data-a="" data-b="" hidden>`) {
		t.Error("compare.html names a pair")
	}
	rules := func(page string) string {
		_, after, _ := strings.Cut(page, `<script type="application/json" id="compare-rules">`)
		block, _, _ := strings.Cut(after, "</script>")
		return block
	}
	var got compareRules
	if err := json.Unmarshal([]byte(rules(built)), &got); err != nil {
		t.Fatal(err)
	}
	if rules(built) != rules(pick) || len(got.RatioBins) != 5 || *got.RatioBins[0].Below != 0.8 || got.RatioBins[4].Below != nil || got.PrefillChart == nil {
		t.Errorf("rules %+v", got)
	}
}

// TestCompareScriptCarriesSamples: a valid cell carries its samples for
// the page's test, every valid repeat's seconds in order and each valid
// repeat's tok/s (a failed repeat left out); a queued cell carries its status and no samples, so it is
// never marked; a looped one neither figure nor samples; the seed's cells,
// which kept no seconds, carry none.
func TestCompareScriptCarriesSamples(t *testing.T) {
	r := testrun.Full(4)
	r.Sweep.Repeats = 3
	var valid, queued, looped *matrixgen.Decode
	for i := range r.Decode {
		d := &r.Decode[i]
		switch {
		case d.Status == matrixgen.StatusValid && valid == nil:
			valid = d
		case d.Status == matrixgen.StatusQueued && queued == nil:
			queued = d
		case d.Status == matrixgen.StatusLooped && looped == nil:
			looped = d
		}
	}
	if valid == nil || queued == nil || looped == nil {
		t.Fatal("the synthetic run lacks a valid, a queued or a looped cell")
	}
	one := *valid
	one.Repeats = nil
	failed := one
	failed.Status, failed.PerSecondTokens = matrixgen.StatusError, []int{1, 2, 3}
	second := one
	second.PerSecondTokens, second.TotalTokS = []int{7, 8, 9}, new(*one.TotalTokS*0.9)
	*valid = matrixgen.Decode{}
	for _, m := range []matrixgen.Decode{one, failed, second} {
		valid.AddRepeat(m)
	}
	c := newCompareRun("x", r)
	byCell := map[[2]int]compareCell{}
	for _, cell := range c.Cells {
		byCell[[2]int{cell.Context, cell.Concurrency}] = cell
	}
	got := byCell[[2]int{valid.ContextTokens, valid.Concurrency}]
	want := append(slices.Clone(one.PerSecondTokens), 7, 8, 9)
	if !slices.Equal(got.Seconds, want) || got.Status != "" {
		t.Errorf("valid repeated cell: seconds %v status %q, want %v", got.Seconds, got.Status, want)
	}
	if want := []float64{*one.TotalTokS, *second.TotalTokS}; !slices.Equal(got.Repeats, want) {
		t.Errorf("valid repeated cell: repeats %v, want the valid ones' tok/s %v", got.Repeats, want)
	}
	if got := byCell[[2]int{queued.ContextTokens, queued.Concurrency}]; got.Seconds != nil || got.Status != "Requests queued" || got.TotalTokS == nil {
		t.Errorf("queued cell: %+v", got)
	}
	if got := byCell[[2]int{looped.ContextTokens, looped.Concurrency}]; got.Seconds != nil || got.Status != "" || got.TotalTokS != nil {
		t.Errorf("looped cell: %+v", got)
	}
	for _, cell := range newCompareRun(sampleID, loadSample(t).Run).Cells {
		if cell.Seconds != nil || cell.Repeats != nil {
			t.Fatalf("the seed's cell %s × %d carries seconds or repeats", cell.Label, cell.Concurrency)
		}
	}
}

// TestCompareScriptSaysIncomplete: an interrupted run's compare data says
// so, for the page to flag it (its headline figures cover only what it
// measured); a finished run's says nothing.
func TestCompareScriptSaysIncomplete(t *testing.T) {
	r := testrun.Full(3)
	for _, incomplete := range []bool{false, true} {
		r.Incomplete = incomplete
		data, err := compareScript("r", r)
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(string(data), `"incomplete":true`); got != incomplete {
			t.Errorf("incomplete %v: the data says %v", incomplete, got)
		}
	}
}
