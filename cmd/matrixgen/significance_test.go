package main

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/matrixgen/matrixgen"
	"github.com/matrixgen/matrixgen/internal/browser"
	"github.com/matrixgen/matrixgen/internal/testrun"
	"github.com/matrixgen/matrixgen/runfile"
	"github.com/matrixgen/matrixgen/stats"
)

// pageVerdict is what a compare page should call a decode cell of two runs,
// by the Go rule: "" where it shows no ratio (either run has no figure
// there: looped, over capacity, error, not measured, 0 tok/s); "unmarked"
// where either run's requests queued; "untested" where either kept no
// per-second samples and the two have not the repeats to test, or where
// they have too few to test; otherwise stats.CompareDecode (its repeats,
// or its seconds): "gain" or "loss" where significant the ratio's way,
// "against" where significant the other way, "same" (the page's ~) where
// not.
func pageVerdict(a, b matrixgen.Decode) string {
	figure := func(d matrixgen.Decode) bool {
		return d.TotalTokS != nil && *d.TotalTokS > 0 && (d.Status == matrixgen.StatusValid || d.Status == matrixgen.StatusQueued)
	}
	switch {
	case !figure(a) || !figure(b):
		return ""
	case a.Status == matrixgen.StatusQueued || b.Status == matrixgen.StatusQueued:
		return "unmarked"
	}
	ratio := *b.TotalTokS / *a.TotalTokS
	if byRepeats(a, b) {
		return called(stats.CompareDecode(a, b), ratio)
	}
	sa, sb := stats.DecodeSamples(a), stats.DecodeSamples(b)
	if len(sa) == 0 || len(sb) == 0 {
		return "untested"
	}
	return called(stats.CompareDecode(a, b), ratio)
}

// byRepeats reports whether a cell of two runs is tested over its repeats.
func byRepeats(a, b matrixgen.Decode) bool {
	return len(stats.RepeatTotals(a)) >= stats.MinRepeats && len(stats.RepeatTotals(b)) >= stats.MinRepeats
}

// expectedVerdicts are pageVerdict's calls for every cell of the two runs, by
// context and concurrency ("8192x4"), the cells of either run.
func expectedVerdicts(a, b *matrixgen.Run) map[string]string {
	out := map[string]string{}
	for _, r := range []*matrixgen.Run{a, b} {
		for _, d := range r.Decode {
			ca, okA := a.Cell(d.ContextTokens, d.Concurrency)
			cb, okB := b.Cell(d.ContextTokens, d.Concurrency)
			v := ""
			if okA && okB {
				v = pageVerdict(ca, cb)
			}
			out[fmt.Sprintf("%dx%d", d.ContextTokens, d.Concurrency)] = v
		}
		for _, p := range r.Prefill {
			pa, okA := prefillRow(a, p.ContextTokens)
			pb, okB := prefillRow(b, p.ContextTokens)
			v := ""
			if okA && okB {
				v = prefillVerdict(pa, pb)
			}
			out["prefill "+matrixgen.ContextLabel(p.ContextTokens)] = v
		}
	}
	return out
}

func prefillRow(r *matrixgen.Run, context int) (matrixgen.Prefill, bool) {
	for _, p := range r.Prefill {
		if p.ContextTokens == context {
			return p, true
		}
	}
	return matrixgen.Prefill{}, false
}

// prefillVerdict is what a compare page's prefill table should call a
// row's B / A: "" where it shows none; "untested" where either run kept no
// requests; otherwise stats.CompareCell over the requests' prompt tok/s,
// as a decode cell's.
func prefillVerdict(a, b matrixgen.Prefill) string {
	figure := func(p matrixgen.Prefill) bool {
		return p.Status == matrixgen.StatusValid && p.PromptTokS != nil && *p.PromptTokS > 0
	}
	switch {
	case !figure(a) || !figure(b):
		return ""
	case len(a.Requests) == 0 || len(b.Requests) == 0:
		return "untested"
	}
	return called(stats.CompareCell(stats.PrefillSamples(a), stats.PrefillSamples(b)), *b.PromptTokS / *a.PromptTokS)
}

// called is a pair's call: "untested" where its samples are too few to
// test, "gain" or "loss" where the test finds it significant in the
// direction of the ratio of the figures shown, "against" where
// significant the other way, "same" where not.
func called(r stats.Result, ratio float64) string {
	switch {
	case !r.Tested:
		return "untested"
	case !r.Significant || ratio == 1:
		return "same"
	case stats.Direction(ratio) != r.Direction:
		return "against"
	case ratio > 1:
		return "gain"
	}
	return "loss"
}

// pageVerdicts reads the drawn ratio matrix and prefill table back: each
// cell's data-verdict ("" where it has none) and class, by context (its
// tokens, the row head's data-context) and concurrency (the column's
// head); each prefill row's B / A by "prefill" and its context's label,
// its class followed by " starred" where A or B is marked ★.
const pageVerdicts = `(() => {
	const t = document.getElementById("compare-ratio"), out = {};
	const levels = [...t.tHead.rows[0].cells].slice(1).map(c => c.textContent);
	for (const r of t.tBodies[0].rows) {
		const context = r.cells[0].getAttribute("data-context");
		[...r.cells].slice(1).forEach((c, i) => { out[context + "x" + levels[i]] = [c.getAttribute("data-verdict") || "", c.className]; });
	}
	const p = document.getElementById("compare-prefill-table");
	if (p.tBodies.length) for (const r of p.tBodies[0].rows) if (!r.classList.contains("sub"))
		out["prefill " + r.cells[0].textContent] = [r.cells[3].getAttribute("data-verdict") || "", r.cells[3].className + (r.querySelector("td.top") ? " starred" : "")];
	return out;
})()`

// comparePair opens the in-browser compare of a and b and gives what its
// matrix calls each cell, [verdict, class] by context and concurrency.
func comparePair(t *testing.T, b *browser.Browser, root, a, bID string) map[string][2]string {
	t.Helper()
	if err := b.Navigate(context.Background(), root+"/compare.html?a="+a+"&b="+bID); err != nil {
		t.Fatal(err)
	}
	var cells int
	if err := b.Eval(comparisonDrawn, &cells); err != nil || cells < 1 {
		t.Fatalf("%s vs %s: not drawn (%d cells, %v)", a, bID, cells, err)
	}
	var got map[string][2]string
	if err := b.Eval(pageVerdicts, &got); err != nil {
		t.Fatalf("%s vs %s: %v", a, bID, err)
	}
	for _, e := range b.Errors() {
		t.Errorf("%s vs %s: %s", a, bID, e)
	}
	return got
}

// checkVerdicts holds a drawn matrix to the Go rule cell by cell, and
// holds that a cell either run calls queued, looped or over capacity is
// never coloured as a gain or a loss. It counts the verdicts seen.
func checkVerdicts(t *testing.T, pair string, a, b *matrixgen.Run, got map[string][2]string, seen map[string]int) {
	t.Helper()
	want := expectedVerdicts(a, b)
	if len(got) != len(want) {
		t.Errorf("%s: the page has %d cells, the runs %d", pair, len(got), len(want))
	}
	for key, w := range want {
		g, ok := got[key]
		if !ok || g[0] != w {
			t.Errorf("%s, cell %s: the page says %q (class %q), Go says %q", pair, key, g[0], g[1], w)
		}
		var ctx, n int
		if _, err := fmt.Sscanf(key, "%dx%d", &ctx, &n); err != nil {
			seen["prefill "+w]++
			// Coloured and starred only where significant.
			significant := w == "gain" || w == "loss"
			uncoloured := strings.Contains(g[1], "ratio-same") || strings.Contains(g[1], "ratio-untested")
			if w != "" && (strings.HasSuffix(g[1], " starred") != significant || uncoloured == significant ||
				strings.Contains(g[1], "ratio-untested") != (w == "untested")) {
				t.Errorf("%s, %s: %q drawn as %q", pair, key, w, g[1])
			}
			continue
		}
		seen[w]++
		ca, _ := a.Cell(ctx, n)
		cb, _ := b.Cell(ctx, n)
		marked := []matrixgen.Status{matrixgen.StatusQueued, matrixgen.StatusLooped, matrixgen.StatusOverCapacity}
		if (slices.Contains(marked, ca.Status) || slices.Contains(marked, cb.Status)) && g[1] != "ratio-none" && !strings.HasPrefix(g[1], "st-missing") {
			t.Errorf("%s, cell %s (A %s, B %s) is drawn as %q", pair, key, ca.Status, cb.Status, g[1])
		}
	}
}

// withSamples gives a run's prefill rows 0 to 6 requests, and its valid
// cells generated per-second samples that
// reach every branch of the test: sizes from none (untested) and below
// three (not tested: ~) through the exact test's bound of 50 a side and
// past it, values distinct or coarse enough to tie, spread 1–8 %, around
// the cell's figure times a shift of up to ±6 % (the runs' own figures
// differ by up to ±10 %), so that pairs fall on both sides of 5 %. Half
// its valid cells are repeated 1 to 4 times (sweep.repeats 4), each repeat
// its own rate, spread 0.5–4 % about the shift, and one repeat in four
// cells an outlier 12 % off, so that a repeats' mean and median can lie on
// two sides of the other run's figure (against).
func withSamples(r *matrixgen.Run, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 99))
	sizes := []int{0, 1, 2, 3, 4, 6, 10, 20, 30, 49, 50, 51, 60, 90}
	for i := range r.Prefill {
		p := &r.Prefill[i]
		shift := 1 + 0.2*(rng.Float64()-0.5)
		for range rng.IntN(7) { // 0 to 6 requests, as prefill_repeats allows
			p.Requests = append(p.Requests, matrixgen.PrefillRequest{PromptTokens: p.ContextTokens, TTFTMs: *p.TTFTMs,
				PromptTokS: *p.PromptTokS * shift * (1 + 0.02*rng.NormFloat64())})
		}
	}
	r.Sweep.Repeats = 4
	for i := range r.Decode {
		d := &r.Decode[i]
		d.PerSecondTokens = nil
		if d.TotalTokS == nil || d.Status != matrixgen.StatusValid {
			continue
		}
		n, spread, shift := sizes[rng.IntN(len(sizes))], 0.01+0.07*rng.Float64(), 1+0.12*(rng.Float64()-0.5)
		coarse := rng.IntN(3) == 0
		figure := *d.TotalTokS
		seconds := func(rate float64) []int {
			var out []int
			for range n {
				x := rate * (1 + spread*rng.NormFloat64())
				if coarse {
					x = math.Round(x/(figure*0.02)) * (figure * 0.02)
				}
				out = append(out, max(0, int(x)))
			}
			return out
		}
		if rng.IntN(2) == 0 {
			setRate(d, figure, n)
			d.PerSecondTokens = seconds(figure * shift)
			continue
		}
		base, each, outlier := *d, 0.005+0.035*rng.Float64(), rng.IntN(4) == 0
		*d = matrixgen.Decode{}
		for k := range 1 + rng.IntN(4) {
			m := base
			rate := figure * shift * (1 + each*rng.NormFloat64())
			if outlier && k == 0 {
				rate *= 1 + 0.12*float64(1-2*rng.IntN(2))
			}
			setRate(&m, rate, n)
			m.PerSecondTokens = seconds(rate)
			d.AddRepeat(m)
		}
	}
}

// setRate gives a cell the rate total over a window long enough for n
// per-second counts (30 s at least), with its tokens and completed
// requests to match, as validation holds them.
func setRate(d *matrixgen.Decode, total float64, n int) {
	window := float64(max(30, n))
	d.TotalTokS, d.WindowSeconds = new(total), new(window)
	d.OutputTokens, d.Completed = new(int(total*window)), new(int(total*window/4096))
}

// TestSignificanceAgreesWithGo: over every ordered pair of 6 generated
// runs (30 pages, 1,920 decode cells and 270 prefill rows), the compare
// page's script calls each cell a gain, a loss, ~, ~ (against), unmarked
// or untested exactly where the Go rule (stats.CompareDecode: Student's t
// over the repeats, or Mann–Whitney over stats.DecodeSamples; a prefill
// row's requests by stats.CompareCell) does; queued, looped and
// over-capacity cells are never coloured. Every one of the test's ways
// (t over repeats, exact, and the normal approximation with ties) is
// reached, each on both sides of significance.
func TestSignificanceAgreesWithGo(t *testing.T) {
	const count = 6
	runs := map[string]*matrixgen.Run{}
	var ids []string
	b, root, _ := siteInBrowser(t, func(dir string) {
		for seed := range uint64(count) {
			r := testrun.Full(100 + seed)
			withSamples(r, seed)
			id := fmt.Sprintf("gen-%d", seed)
			data, err := runfile.Encode(r)
			if err != nil {
				t.Fatal(err)
			}
			writeFile(t, filepath.Join(dir, id+".json"), data)
			runs[id], ids = r, append(ids, id)
		}
	})
	seen := map[string]int{}
	ways := map[string]int{} // exact or normal, significant or not
	for _, a := range ids {
		for _, bID := range ids {
			if a == bID {
				continue
			}
			got := comparePair(t, b, root, a, bID)
			checkVerdicts(t, a+" vs "+bID, runs[a], runs[bID], got, seen)
			countWays(runs[a], runs[bID], ways)
		}
	}
	t.Logf("verdicts %v; tests by way %v", seen, ways)
	for _, v := range []string{"gain", "loss", "same", "unmarked", "untested", ""} {
		if seen[v] < 10 {
			t.Errorf("only %d cells called %q: the generated runs do not reach it", seen[v], v)
		}
	}
	if seen["against"] < 1 {
		t.Errorf("no cell called against: the generated runs do not reach it")
	}
	if seen["prefill same"] < 10 || seen["prefill gain"]+seen["prefill loss"] < 5 || seen["prefill untested"] < 5 {
		t.Errorf("prefill rows: %d ~, %d gains and %d losses, %d untested: the generated runs do not reach each", seen["prefill same"], seen["prefill gain"], seen["prefill loss"], seen["prefill untested"])
	}
	for _, w := range []string{"exact significant", "exact not", "normal significant", "normal not", "repeats significant", "repeats not", "too few"} {
		if ways[w] < 10 {
			t.Errorf("only %d cells tested the %s way", ways[w], w)
		}
	}
}

// countWays counts how the Go rule decided each tested cell of a pair:
// exact or normal (ties, or past 50 a side), significant or not, or too
// few samples to test.
func countWays(a, b *matrixgen.Run, ways map[string]int) {
	for _, da := range a.Decode {
		db, ok := b.Cell(da.ContextTokens, da.Concurrency)
		if !ok || pageVerdict(da, db) == "" || pageVerdict(da, db) == "unmarked" {
			continue
		}
		sa, sb := stats.DecodeSamples(da), stats.DecodeSamples(db)
		if !byRepeats(da, db) && (len(sa) == 0 || len(sb) == 0) {
			continue // kept no samples: nothing to test by
		}
		r := stats.CompareDecode(da, db)
		if !r.Tested {
			ways["too few"]++
			continue
		}
		way := "normal"
		switch {
		case r.Test == stats.TestRepeats:
			way = "repeats"
		case len(sa) <= stats.MaxExactSize && len(sb) <= stats.MaxExactSize && distinct(sa, sb):
			way = "exact"
		}
		if r.Significant {
			ways[way+" significant"]++
		} else {
			ways[way+" not"]++
		}
	}
}

func distinct(a, b []float64) bool {
	all := slices.Concat(a, b)
	slices.Sort(all)
	return len(slices.Compact(all)) == len(a)+len(b)
}

// readRun reads a run file the test keeps in testdata.
func readRun(t *testing.T, name string) *matrixgen.Run {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	r, err := runfile.Decode(name, data)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestCompareMarksSignificance: two -repeat 3 runs of the sim (testdata/
// repeat: B slowed by a known share in each cell, its profile says how
// much) compared on the page, built and in the browser: each cell called
// as the Go rule calls it (Student's t over the 3 repeats a side), and that
// rule's calls the known truth: the cells 7 % and more slower are losses,
// the one 0.7 % slower is ~. Each
// screen (1400 and 390 px, light and dark) is a screenshot in the test's
// artifacts.
func TestCompareMarksSignificance(t *testing.T) {
	a, b := readRun(t, "repeat/sim-repeat-a.json"), readRun(t, "repeat/sim-repeat-b.json")
	br, root, _ := siteInBrowser(t, func(dir string) {
		for _, name := range []string{"sim-repeat-a.json", "sim-repeat-b.json"} {
			data, err := os.ReadFile(filepath.Join("testdata", "repeat", name))
			if err != nil {
				t.Fatal(err)
			}
			writeFile(t, filepath.Join(dir, name), data)
		}
	})
	truth := map[string]string{"8192x1": "same", "8192x16": "loss", "32768x4": "loss", "32768x16": "loss"}
	for _, da := range a.Decode {
		if db, ok := b.Cell(da.ContextTokens, da.Concurrency); ok && da.Status == matrixgen.StatusValid && db.Status == matrixgen.StatusValid && !byRepeats(da, db) {
			t.Errorf("cell %s × %d of two -repeat 3 runs is not tested over its repeats", matrixgen.ContextLabel(da.ContextTokens), da.Concurrency)
		}
	}
	want := expectedVerdicts(a, b)
	for key, v := range truth {
		if want[key] != v {
			t.Errorf("cell %s: the Go rule says %q, the sim's slowdown %q", key, want[key], v)
		}
	}
	got := comparePair(t, br, root, "sim-repeat-a", "sim-repeat-b")
	checkVerdicts(t, "the sim's repeats", a, b, got, map[string]int{})
	var text string
	if err := br.Eval(`document.querySelector("#compare-ratio td[data-verdict=same] .fig").textContent + " | " + document.getElementById("compare-test").textContent`, &text); err != nil {
		t.Fatal(err)
	}
	if !regexpMatch(`^~ [01]\.\d\d× \| A ratio is coloured .* p < 0\.05 for each cell .*Student's two-sample t of each repeat's tok/s.*Mann–Whitney U`, text) {
		t.Errorf("the ~ cell and the test's words read %q", text)
	}
	// Each cell's title names its test and p, the p Go's t distribution
	// gives (the page's own series, shown to 2 figures).
	var titles map[string]string
	if err := br.Eval(`Object.fromEntries([...document.querySelectorAll("#compare-ratio tbody tr")].flatMap(r => [...r.cells].slice(1).map((c, i) =>
		[r.cells[0].getAttribute("data-context") + "x" + document.querySelector("#compare-ratio thead tr").cells[i + 1].textContent, c.title])))`, &titles); err != nil {
		t.Fatal(err)
	}
	for _, da := range a.Decode {
		db, _ := b.Cell(da.ContextTokens, da.Concurrency)
		p := stats.CompareDecode(da, db).P
		want := "t over 3 v 3 repeats, p = " + strconv.FormatFloat(p, 'g', 2, 64)
		if p < 0.001 {
			want = "t over 3 v 3 repeats, p < 0.001"
		}
		if key := fmt.Sprintf("%dx%d", da.ContextTokens, da.Concurrency); !strings.Contains(titles[key], want) {
			t.Errorf("cell %s's title %q, want it to say %q", key, titles[key], want)
		}
	}
	t.Logf("verdicts: %v; titles %v", got, titles)
	artifacts := t.ArtifactDir()
	eachScreen(t, br, func(screen, scheme string, _ bool) {
		if err := br.Navigate(context.Background(), root+"/compare.html?a=sim-repeat-a&b=sim-repeat-b"); err != nil {
			t.Fatal(err)
		}
		var cells int
		if err := br.Eval(comparisonDrawn, &cells); err != nil || cells != 6 {
			t.Fatalf("%s %s: %d cells drawn (%v)", screen, scheme, cells, err)
		}
		var over []string
		if err := br.Eval(overflowing, &over); err != nil {
			t.Fatal(err)
		}
		for _, o := range over {
			t.Errorf("%s %s: %s", screen, scheme, o)
		}
		if err := br.Screenshot(filepath.Join(artifacts, "repeats "+screen+" "+scheme+".png")); err != nil {
			t.Error(err)
		}
	})
}

func regexpMatch(pattern, s string) bool { return regexp.MustCompile(pattern).MatchString(s) }
