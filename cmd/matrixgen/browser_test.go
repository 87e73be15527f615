package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/matrixgen/matrixgen"
	"github.com/matrixgen/matrixgen/internal/browser"
	"github.com/matrixgen/matrixgen/internal/testrun"
	"github.com/matrixgen/matrixgen/runfile"
)

// TestPagesInABrowser opens the built site in real headless Chromium,
// served from a local server, and checks what a reader gets: no console
// errors, no request leaving the site, charts that draw, the matrix's cells,
// the cell detail, and filters that narrow the index. Screenshots go to
// the test's artifact directory (go test -artifacts keeps them).
func TestPagesInABrowser(t *testing.T) {
	b, siteURL, _ := siteInBrowser(t)
	artifacts := t.ArtifactDir()
	ctx := context.Background()
	open := func(page, shot string) {
		t.Helper()
		if err := b.Navigate(ctx, siteURL+"/"+page); err != nil {
			t.Fatalf("%s: %v", page, err)
		}
		for _, e := range b.Errors() {
			t.Errorf("%s: %s", page, e)
		}
		for _, u := range b.Requests() {
			if !strings.HasPrefix(u, siteURL+"/") && !strings.HasPrefix(u, "data:") {
				t.Errorf("%s asked for %s, outside the site", page, u)
			}
		}
		if err := b.Screenshot(filepath.Join(artifacts, shot)); err != nil {
			t.Error(err)
		}
	}
	eval := func(expr string, out any) {
		t.Helper()
		if err := b.Eval(expr, out); err != nil {
			t.Fatal(err)
		}
	}

	// inked counts the drawn pixels of the canvas inside an element.
	inked := func(selector string) int {
		var n int
		eval(`(() => { const c = document.querySelector(`+"`"+selector+` canvas`+"`"+`); if (!c) return -1;
			const d = c.getContext("2d").getImageData(0, 0, c.width, c.height).data; let n = 0;
			for (let i = 3; i < d.length; i += 4) if (d[i] > 0) n++; return n; })()`, &n)
		return n
	}

	var cells int
	open("index.html", "index.png")
	var visible int
	eval(`document.querySelectorAll("#runs tbody tr:not([hidden])").length`, &visible)
	if visible != 3 {
		t.Errorf("the index shows %d runs, want 3", visible)
	}
	// One page of runs: no pager.
	var pagers int
	eval(`document.querySelectorAll("nav.pager").length`, &pagers)
	if pagers != 0 {
		t.Errorf("an index of one page shows %d pagers", pagers)
	}
	// The best of each figure column, marked by the script alone.
	var tops []string
	eval(`[...document.querySelectorAll("#runs td.top")].map(td => td.dataset.top + " " + td.parentElement.dataset.id).sort()`, &tops)
	if strings.Join(tops, ",") != "best again,peak again,perwatt synthetic" {
		t.Errorf("the index marks %q as best, want the best run of each figure column", tops)
	}
	// A filter reads every run's summary from the index's chunk scripts:
	// the rows change once they have loaded (at most 10 s, far past it).
	eval(`new Promise(done => { const s = document.querySelector("#filters select[name=gpu]"); s.value = "GPU model 3";
		s.dispatchEvent(new Event("change", {bubbles: true})); const start = Date.now();
		(function wait() { if (!document.getElementById("filter-count").textContent.startsWith("loading") || Date.now() - start > 10000)
			return done(document.querySelectorAll("#runs tbody tr:not([hidden])").length); setTimeout(wait, 50); })(); })`, &visible)
	var address string
	eval(`location.search`, &address)
	if visible != 1 || !strings.Contains(address, "gpu=GPU+model+3") {
		t.Errorf("filtering by GPU shows %d runs, address %q; want 1 and the filter in the address", visible, address)
	}
	open("index.html?gpu=GPU+model+3", "index-filtered.png")
	eval(`document.querySelectorAll("#runs tbody tr:not([hidden])").length`, &visible)
	if visible != 1 {
		t.Errorf("a shared filtered address shows %d runs, want 1", visible)
	}

	open("runs/"+sampleID+"/index.html", "run.png")
	eval(`document.querySelectorAll("table.matrix tbody td").length`, &cells)
	if cells != 64 {
		t.Errorf("the matrix has %d cells, want 64", cells)
	}
	if n := inked("#prefill-chart"); n < 1000 {
		t.Errorf("the prefill chart drew %d pixels", n)
	}
	var heading string
	eval(`(() => { location.hash = "#cell-8K-1"; window.dispatchEvent(new HashChangeEvent("hashchange"));
		const p = document.getElementById("cell-detail"); return p.hidden ? "" : document.getElementById("cell-detail-heading").textContent; })()`, &heading)
	if heading != "8K context × 1 request" {
		t.Errorf("selecting a cell shows %q", heading)
	}
	// The matrix's views: TTFT colours the cells by their own figure and
	// scale, and the choice lands in the address.
	var view []string
	eval(`(() => { const s = document.querySelector("#matrix-views-picker select"); s.value = "ttft";
		s.dispatchEvent(new Event("change", {bubbles: true}));
		const a = document.querySelector("table.matrix a[href='#cell-8K-1']");
		return [a.querySelector(".fig").textContent, location.search, document.getElementById("legend-title").textContent,
			a.parentElement.className, String(a.querySelector(".ttft").offsetHeight)]; })()`, &view)
	if len(view) != 5 || view[0] != "256 ms" || !strings.Contains(view[1], "view=ttft") || !strings.HasPrefix(view[2], "Time to first token") ||
		!strings.Contains(view[3], "bin-") || view[4] != "0" {
		t.Errorf("the TTFT view shows %q", view)
	}
	open("runs/"+sampleID+"/index.html?view=ttft", "run-ttft-view.png")
	eval(`document.querySelector("table.matrix a[href='#cell-8K-1'] .fig").textContent`, &heading)
	if heading != "256 ms" {
		t.Errorf("a shared address with view=ttft shows %q", heading)
	}
	open("runs/"+sampleID+"/index.html#cell-8K-1", "run.png")
	var selected string
	eval(`(() => { const a = document.querySelector("table.matrix a[aria-current]"); return a ? a.getAttribute("href") : ""; })()`, &selected)
	if selected != "#cell-8K-1" {
		t.Errorf("the selected cell marked in the matrix: %q", selected)
	}

	open("runs/synthetic/index.html#cell-8K-4", "run-cell-detail.png")
	if n := inked("#cell-detail-chart"); n < 500 {
		t.Errorf("the cell's per-second chart drew %d pixels", n)
	}
	if n := inked("#cell-detail-power"); n < 500 {
		t.Errorf("the cell's power chart drew %d pixels", n)
	}
	open("compare/again--"+sampleID+"/index.html", "compare.png")
	eval(comparisonDrawn, &cells)
	eval(`document.querySelectorAll("section.ratio table.matrix tbody td").length`, &cells)
	if cells != 64 {
		t.Errorf("the ratio matrix has %d cells, want 64", cells)
	}
	if n := inked("#compare-prefill-chart"); n < 1000 {
		t.Errorf("the compare prefill chart drew %d pixels", n)
	}
	open("methodology.html", "methodology.png")
}

// siteInBrowser builds the sample site with a synthetic run (GPU telemetry
// in one cell) and a second copy of the sample (so there is a compare
// page), serves it, and opens Chromium. .ci/run installs Chromium and sets
// MATRIXGEN_REQUIRE_BROWSER, so there the test cannot be skipped.
func siteInBrowser(t *testing.T, more ...func(runs string)) (b *browser.Browser, siteURL, dir string) {
	path := browser.PathForTest(t)
	runs := sampleRuns(t)
	synthetic := testrun.Full(3)
	// GPU telemetry through the 8K × 4 window, for the power chart.
	for i := range synthetic.Decode {
		if d := &synthetic.Decode[i]; d.ContextTokens == 8192 && d.Concurrency == 4 {
			p := &matrixgen.Power{EnergyJoules: 9000, MeanPowerW: 300, TokSPerW: new(2.0), JoulesPer1KTokens: new(150.0),
				GPUs: []matrixgen.GPUWindow{{Index: 0, Samples: 60, MeanPowerW: new(300.0), PeakPowerW: new(340.0), PowerThrottled: true}}}
			for k := range 60 {
				p.Trace = append(p.Trace, matrixgen.PowerPoint{AtSeconds: float64(k) / 2, PowerW: 280 + float64(k%7)*8, SMClockMHz: new(2400 - float64(k%5)*30)})
			}
			d.Power = p
		}
	}
	data, err := runfile.Encode(synthetic)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(runs, "synthetic.json"), data)
	// Notes whose headings begin at "#", as a person's notes may.
	writeFile(t, filepath.Join(runs, "synthetic.md"), []byte("# Setup\n\nHow it was run.\n\n## Details\n\nMore.\n"))
	// A second run of the sample's model and GPU, so the site has a compare page.
	sample, err := os.ReadFile(filepath.Join(runs, sampleID+".json"))
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(runs, "again.json"), sample)
	for _, add := range more {
		add(runs)
	}
	out := filepath.Join(t.TempDir(), "public")
	if code, _, stderr := matrixgenCmd(t, "build", "-runs", runs, "-o", out); code != 0 {
		t.Fatalf("build: %s", stderr)
	}
	site := httptest.NewServer(http.FileServer(http.Dir(out)))
	t.Cleanup(site.Close)

	b = browser.StartForTest(t, path)
	return b, site.URL, out
}

// overflowing lists the visible elements that reach past the viewport's
// edges, except inside a declared horizontal scroller (an ancestor with
// overflow-x auto or scroll, as the matrix has), and says whether the page
// itself scrolls sideways.
const overflowing = `(() => {
	const w = document.documentElement.clientWidth, out = [];
	const scrolls = el => { for (let p = el.parentElement; p; p = p.parentElement) {
		const o = getComputedStyle(p).overflowX; if (o === "auto" || o === "scroll") return true; } return false; };
	for (const el of document.body.querySelectorAll("*")) {
		const r = el.getBoundingClientRect();
		if (r.width === 0 || r.height === 0 || getComputedStyle(el).visibility === "hidden") continue;
		if ((r.right > w + 1 || r.left < -1) && !scrolls(el)) {
			out.push(el.tagName.toLowerCase() + (el.id ? "#" + el.id : "") + (el.className && typeof el.className === "string" ? "." + el.className.trim().split(/\s+/).join(".") : "") +
				" " + Math.round(r.left) + ".." + Math.round(r.right) + " of " + w);
		}
	}
	if (document.documentElement.scrollWidth > w + 1) out.push("the page scrolls sideways: " + document.documentElement.scrollWidth + " of " + w);
	return out.slice(0, 8);
})()`

// unlabelledBars counts the prefill chart's bars without a visible label,
// from the chart's own model: a bar whose label is off, or empty.
const unlabelledBars = `(() => {
	const el = document.querySelector("#prefill-chart, #compare-prefill-chart");
	if (!el) return -1;
	const c = echarts.getInstanceByDom(el.querySelector("div") || el) || echarts.getInstanceByDom(el);
	if (!c) return -2;
	let missing = 0, bars = 0;
	c.getModel().eachSeries(s => { if (s.subType !== "bar") return;
		const d = s.getData();
		for (let i = 0; i < d.count(); i++) {
			const v = d.get(d.mapDimension(s.getBaseAxis().dim === "y" ? "x" : "y") || "value", i);
			if (v == null || isNaN(v)) continue;
			bars++;
			const lab = s.getData().getItemModel(i).getModel("label");
			const text = s.getFormattedLabel(i, "normal");
			if (!lab.get("show") || !text) missing++;
		}
	});
	return bars === 0 ? -3 : missing;
})()`

// runPageDetails lists what a reader of a run page saw wrong: a launch
// argument split over two lines (it broke mid-flag on a phone), a time
// wrapped ("UTC" alone on a line), a note's heading as large as the page's
// "Notes", and a prefill bar's label that the TTFT line crosses (each
// segment of the line, sampled, against each label's box as drawn).
const runPageDetails = `(() => {
	const bad = [];
	// The lines a piece of text is laid out on, by its glyphs' boxes.
	const lines = el => { const r = document.createRange(); r.selectNodeContents(el);
		return new Set([...r.getClientRects()].filter(x => x.width > 0).map(x => Math.round(x.top))).size; };
	const args = document.querySelectorAll(".command .arg");
	if (args.length === 0) bad.push("no launch command");
	args.forEach(a => { if (lines(a) > 1) bad.push("a launch argument over two lines: " + a.textContent); });
	document.querySelectorAll(".panel dd").forEach(dd => {
		if (/UTC$/.test(dd.textContent.trim()) && lines(dd) > 1) bad.push("a time wraps: " + dd.textContent);
	});
	const notes = document.querySelector("section.notes");
	if (notes) {
		const title = notes.querySelector("h2"), size = h => parseFloat(getComputedStyle(h).fontSize);
		notes.querySelectorAll("h1, h2, h3, h4, h5, h6").forEach(h => {
			if (h !== title && size(h) >= size(title)) bad.push("a note's " + h.tagName + " is as large as Notes");
		});
	}
	const el = document.getElementById("prefill-chart"), c = el && echarts.getInstanceByDom(el);
	if (!c) return bad.concat("no prefill chart");
	const boxes = [], points = [];
	c.getModel().eachSeries(s => {
		const d = s.getData();
		for (let i = 0; i < d.count(); i++) {
			if (s.subType === "line") {
				const flat = d.getLayout("points") || [];
				if (i === 0) for (let j = 0; j + 1 < flat.length; j += 2) if (isFinite(flat[j]) && isFinite(flat[j + 1])) points.push([flat[j], flat[j + 1]]);
				continue;
			}
			const g = d.getItemGraphicEl(i), t = g && g.getTextContent();
			if (!t || t.ignore || t.invisible) continue;
			const r = t.getBoundingRect().clone(); if (t.transform) r.applyTransform(t.transform);
			boxes.push([r, d.getName(i)]);
		}
	});
	if (boxes.length === 0 || points.length < 2) return bad.concat("no bar labels (" + boxes.length + ") or no TTFT line (" + points.length + " points)");
	for (let k = 1; k < points.length; k++) {
		const [a, b] = [points[k - 1], points[k]];
		for (let f = 0; f <= 1; f += 0.02) {
			const x = a[0] + (b[0] - a[0]) * f, y = a[1] + (b[1] - a[1]) * f;
			for (const [r, name] of boxes) if (r.contain(x, y)) { bad.push("the TTFT line crosses the label of the " + name + " bar"); return bad; }
		}
	}
	return bad;
})()`

// TestPagesFitEveryScreen opens the index, run pages and the methodology
// (compare pages: TestCompareInABrowser) at desktop (1400 × 900) and phone
// (390 × 844) sizes, in light and dark: nothing reaches past the screen's
// edge except inside a declared horizontal scroller, every prefill bar
// carries its label, and on the run pages none of runPageDetails.
// The screenshots are the test's artifacts: go test -artifacts keeps them.
func TestPagesFitEveryScreen(t *testing.T) {
	b, siteURL, _ := siteInBrowser(t, func(runs string) {
		data, err := os.ReadFile(filepath.Join("testdata", "repeat", "sim-repeat-a.json"))
		if err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(runs, "sim-repeat-a.json"), data)
	})
	artifacts := t.ArtifactDir()
	pages := []struct{ name, path string }{
		{"index", "index.html"},
		{"run", "runs/" + sampleID + "/index.html#cell-8K-1"},
		{"synthetic run", "runs/synthetic/index.html"},
		// A -repeat 3 run: intervals of 75 %, said beside each, and a
		// cell's details open.
		{"repeated", "runs/sim-repeat-a/index.html#cell-32K-16"},
		{"methodology", "methodology.html"},
	}
	eachScreen(t, b, func(screen, scheme string, phone bool) {
		for _, p := range pages {
			where := p.name + " " + screen + " " + scheme
			if err := b.Navigate(context.Background(), siteURL+"/"+p.path); err != nil {
				t.Fatalf("%s: %v", where, err)
			}
			// Charts draw after load; let them settle.
			var wait bool
			b.Eval(`new Promise(r => setTimeout(() => r(true), 400))`, &wait)
			var over []string
			if err := b.Eval(overflowing, &over); err != nil {
				t.Fatal(err)
			}
			for _, o := range over {
				t.Errorf("%s: %s", where, o)
			}
			// The tables that carry a site's figures fit a desktop whole,
			// with nothing left to scroll to.
			if !phone && (p.name == "run" || p.name == "index" || p.name == "repeated") {
				var hidden []string
				b.Eval(`[...document.querySelectorAll("table.all, table.runs")].filter(t => t.parentElement.scrollWidth > t.parentElement.clientWidth + 1).map(t => t.className)`, &hidden)
				if len(hidden) > 0 {
					t.Errorf("%s: %q tables need scrolling sideways", where, hidden)
				}
			}
			if p.name == "repeated" {
				var shown []string
				b.Eval(`[document.querySelector("table.all").innerText, document.querySelector(".panels").innerText, document.getElementById("cell-detail-figures").innerText]`, &shown)
				if len(shown) != 3 || !strings.Contains(shown[0], "±3.4 % (75 %)") || !strings.Contains(shown[1], "Repeats\n3, interleaved") ||
					!strings.Contains(shown[2], "3 repeats × 10.0 s") || !strings.Contains(shown[2], "75 % interval") {
					t.Errorf("%s shows %q", where, shown)
				}
			}
			if strings.HasSuffix(p.name, "run") {
				var bad []string
				if err := b.Eval(runPageDetails, &bad); err != nil {
					t.Fatal(err)
				}
				for _, d := range bad {
					t.Errorf("%s: %s", where, d)
				}
				var headings int
				b.Eval(`document.querySelectorAll("section.notes h3, section.notes h4").length`, &headings)
				if p.name == "synthetic run" && headings != 2 {
					t.Errorf("%s: %d note headings, want the note's two", where, headings)
				}
				var missing int
				if err := b.Eval(unlabelledBars, &missing); err != nil {
					t.Fatal(err)
				}
				if missing != 0 {
					t.Errorf("%s: %d prefill bars without a label (negative: no chart)", where, missing)
				}
			}
			if err := b.Screenshot(filepath.Join(artifacts, strings.ReplaceAll(p.name, " ", "-")+"-"+screen+"-"+scheme+".png")); err != nil {
				t.Error(err)
			}
			// A screenshot (like a print) resizes the page and back: the
			// prefill chart must keep the layout of the screen's width. Its
			// contexts are labelled on the TTFT panel's axis, the second.
			if p.name == "run" {
				var rotate float64
				b.Eval(`new Promise(r => setTimeout(() => r(echarts.getInstanceByDom(document.getElementById("prefill-chart")).getOption().xAxis[1].axisLabel.rotate || 0), 300))`, &rotate)
				if want := map[bool]float64{false: 0, true: 45}[phone]; rotate != want {
					t.Errorf("%s: the prefill chart's context labels turned %g°, want %g°", where, rotate, want)
				}
			}
		}
	})
}

// comparisonDrawn waits for a compare page's script to draw its pair (at
// most 10 s, far past the moment it takes) and gives its ratio matrix's
// cell count, or -1 where it drew nothing.
const comparisonDrawn = `new Promise(done => { const start = Date.now(); (function wait() {
	const c = document.getElementById("compare"), e = document.getElementById("compare-error");
	if (c && !c.hidden) return done(c.querySelectorAll("#compare-ratio tbody td").length);
	if (!c || !e.hidden || Date.now() - start > 10000) return done(-1);
	setTimeout(wait, 50); })(); })`

// comparisonText is what a compare page shows of its pair, as text: the
// heading, the runs, the simulated flag, every table cell by cell (with
// its class: colours and best marks) and the launch commands.
const comparisonText = `[...document.querySelectorAll("h1, #compare-side-a, #compare-side-b, #compare-simulated, #compare-launch, #compare-ratio-legend, #compare table")]
	.map(e => e.hidden ? "(hidden)" : e.tagName !== "TABLE" ? e.innerText :
		[...e.rows].map(r => [...r.cells].map(c => c.className + ":" + c.innerText + (c.title ? " (" + c.title + ")" : "")).join(" | ")).join("\n")).join("\n\n")`

// TestCompareInABrowser: the index's compare, opened from disk (file://,
// where browsers refuse fetch) and served, shows a pair exactly as the
// built compare page does, cell by cell; the index's picker never offers
// a run against itself; a simulated run carries its badge; no console
// errors and no request outside the site, at desktop and phone widths, in
// light and dark. The screenshots are the test's artifacts.
func TestCompareInABrowser(t *testing.T) {
	b, siteURL, dir := siteInBrowser(t, func(runs string) {
		sim := testrun.Full(5)
		sim.Simulated = true
		sim.Sweep.MaxOutputTokens *= 5 // the fastest run of all, by far
		for i := range sim.Decode {
			if d := &sim.Decode[i]; d.TotalTokS != nil && d.OutputTokens != nil {
				d.TotalTokS, d.OutputTokens = new(*d.TotalTokS*5), new(*d.OutputTokens*5)
			}
		}
		data, err := runfile.Encode(sim)
		if err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(runs, "simulated.json"), data)
	})
	artifacts := t.ArtifactDir()
	ctx := context.Background()
	eval := func(where, expr string, out any) {
		t.Helper()
		if err := b.Eval(expr, out); err != nil {
			t.Fatalf("%s: %v", where, err)
		}
	}
	// clean checks what a page did since it was opened.
	clean := func(where, root string) {
		t.Helper()
		for _, e := range b.Errors() {
			t.Errorf("%s: %s", where, e)
		}
		for _, u := range b.Requests() {
			if !strings.HasPrefix(u, root+"/") && !strings.HasPrefix(u, "data:") {
				t.Errorf("%s asked for %s, outside the site", where, u)
			}
		}
	}
	builtPage := "compare/again--" + sampleID + "/index.html"
	var want string
	for _, root := range []string{siteURL, "file://" + dir} {
		where := "the built compare page at " + root
		if err := b.Navigate(ctx, root+"/"+builtPage); err != nil {
			t.Fatalf("%s: %v", where, err)
		}
		var cells int
		if eval(where, comparisonDrawn, &cells); cells != 64 {
			t.Fatalf("%s: %d ratio cells, want 64", where, cells)
		}
		var text string
		eval(where, comparisonText, &text)
		clean(where, root)
		if want == "" {
			want = text
		} else if text != want {
			t.Errorf("%s shows\n%s\n\nserved it shows\n%s", where, text, want)
		}
	}
	for _, must := range []string{"A: again · ", "B: " + sampleID + " · ", "ratio-2:1.00×", "st-missing:Looped (8K × 2: A Looped, B Looped)", "Launch commands",
		// The seed's queued cell, never marked; its other cells, which kept no
		// per-second samples, untested and coloured as before.
		"ratio-none:1.00×\n489.5 → 489.5\nboth queued (512K × 2: A Requests queued, B Requests queued; not marked as a gain or a loss)",
		"untested, A and B kept no per-second samples; coloured as measured", ":A · again | :B · " + sampleID,
		// A headline figure is never tested: its B / A uncoloured and
		// untested, the higher of A and B still starred.
		"num ratio-untested:1.00× untested (untested: a headline figure is one number a run, with no samples to test)",
		// The seed keeps no prefill requests: untested, uncoloured, no star.
		"num:4,601.0 | num:4,601.0 | num ratio-untested:1.00× untested (untested: A and B kept no requests)"} {
		if !strings.Contains(want, must) {
			t.Errorf("the built compare page lacks %q:\n%s", must, want)
		}
	}

	for _, root := range []string{siteURL, "file://" + dir} {
		where := "the index's compare at " + root
		if err := b.Navigate(ctx, root+"/index.html"); err != nil {
			t.Fatalf("%s: %v", where, err)
		}
		// The pickers start apart, and each disables the other's run.
		var picker []string
		pick := `(() => { const a = document.querySelector("form.pick select[name=a]"), b = document.querySelector("form.pick select[name=b]");
			return [a.value, b.value, [...b.options].filter(o => o.disabled).map(o => o.value).join(","), [...a.options].filter(o => o.disabled).map(o => o.value).join(",")]; })()`
		eval(where, pick, &picker)
		if picker[0] == picker[1] || picker[2] != picker[0] || picker[3] != picker[1] {
			t.Errorf("%s: the pickers start on %q", where, picker)
		}
		// B starts on the newest run, A on the one before: B / A is new / old.
		var firstTwo []string
		eval(where, `[...document.querySelector("form.pick select[name=b]").options].slice(0, 2).map(o => o.value)`, &firstTwo)
		if len(firstTwo) != 2 || picker[1] != firstTwo[0] || picker[0] != firstTwo[1] {
			t.Errorf("%s: the pickers start on A %q, B %q; the runs newest first are %q", where, picker[0], picker[1], firstTwo)
		}
		// A simulated run, however fast, takes no best mark from hardware.
		var simTops int
		eval(where, `document.querySelectorAll("#runs tr[data-id=simulated] td.top").length`, &simTops)
		if simTops != 0 {
			t.Errorf("%s: the simulated run holds %d best marks", where, simTops)
		}
		eval(where, `(() => { const a = document.querySelector("form.pick select[name=a]"), b = document.querySelector("form.pick select[name=b]");
			b.value = "again"; b.dispatchEvent(new Event("change")); a.value = "again"; a.dispatchEvent(new Event("change"));
			b.value = "`+sampleID+`"; b.dispatchEvent(new Event("change")); })(), []`, &picker)
		eval(where, pick, &picker)
		if picker[0] != "again" || picker[1] != sampleID || picker[2] != "again" {
			t.Errorf("%s: after picking, the pickers read %q", where, picker)
		}
		var landed string
		eval(where, `(() => { setTimeout(() => document.querySelector("form.pick button").click(), 0); return "clicking"; })()`, &landed)
		cells := -1
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
			if b.Eval(`location.pathname.endsWith("/compare.html") ? `+comparisonDrawn+` : -1`, &cells) == nil && cells >= 0 {
				break
			}
		}
		eval(where, `location.pathname + location.search`, &landed)
		if cells != 64 || !strings.HasSuffix(landed, "/compare.html?a=again&b="+sampleID) {
			t.Fatalf("%s: the Compare button led to %q with %d ratio cells", where, landed, cells)
		}
		var text string
		eval(where, comparisonText, &text)
		if text != want {
			t.Errorf("%s shows\n%s\n\nthe built page shows\n%s", where, text, want)
		}
		clean(where, root)

		where = "a simulated run compared at " + root
		if err := b.Navigate(ctx, root+"/compare.html?a=simulated&b="+sampleID); err != nil {
			t.Fatalf("%s: %v", where, err)
		}
		eval(where, comparisonDrawn, &cells)
		var sim []string
		eval(where, `[document.querySelector("#compare-side-a .badge")?.textContent || "", document.querySelector("#compare-side-b .badge")?.textContent || "",
			document.getElementById("compare-simulated").hidden ? "" : document.getElementById("compare-simulated").textContent]`, &sim)
		if cells < 1 || sim[0] != "simulated" || sim[1] != "" || !strings.Contains(sim[2], "run A was measured against matrixgen sim") {
			t.Errorf("%s: %d cells, badges and flag %q", where, cells, sim)
		}
		// Runs of other setups are named so up front, as the compare
		// command warns; runs of one setup are not.
		var unlike string
		eval(where, `document.getElementById("compare-unlike").hidden ? "" : document.getElementById("compare-unlike").textContent`, &unlike)
		if !strings.HasPrefix(unlike, "Different setups: A and B differ in GPU, Model") {
			t.Errorf("%s: the setups' difference reads %q", where, unlike)
		}
		// A cell A measured and B did not says so in the cell, not only
		// on hover (it was blank), and one B lost stands out.
		var said []string
		eval(where, `[...document.querySelectorAll("#compare-ratio td.st-missing")].map(td => td.className + ":" + td.textContent)`, &said)
		if len(said) == 0 || slices.ContainsFunc(said, func(s string) bool { return strings.HasSuffix(s, ":") }) ||
			!slices.Contains(said, "st-missing st-lost:B Looped") {
			t.Errorf("%s: cells without a ratio read %q", where, said)
		}
		clean(where, root)
	}
	if err := b.Navigate(ctx, siteURL+"/"+builtPage); err != nil {
		t.Fatal(err)
	}
	var unlike bool
	eval("the built page of one setup", `document.getElementById("compare-unlike").hidden`, &unlike)
	if !unlike {
		t.Error("two runs of one setup are flagged as different setups")
	}
	// A run the site lacks: said so, with the way back to the index's
	// compare form.
	if err := b.Navigate(ctx, siteURL+"/compare.html?a=nope&b="+sampleID); err != nil {
		t.Fatal(err)
	}
	var drawn int
	eval("a missing run", comparisonDrawn, &drawn) // waits for the error
	var missing []string
	eval("a missing run", `(() => { const e = document.getElementById("compare-error"), a = e.querySelector("a");
		return [e.hidden ? "" : e.textContent, a ? a.getAttribute("href") : ""]; })()`, &missing)
	if !strings.HasPrefix(missing[0], "This site has no run nope. Compare two runs on the index") || missing[1] != "index.html" {
		t.Errorf("a missing run reads %q", missing)
	}

	// Every view at desktop and phone widths, light and dark: nothing past
	// the screen's edge, every prefill bar labelled.
	views := []struct{ name, root, page string }{
		{"compare-served", siteURL, "compare.html?a=simulated&b=" + sampleID},
		{"compare-disk", "file://" + dir, "compare.html?a=simulated&b=" + sampleID},
		{"compare-built", siteURL, builtPage},
	}
	eachScreen(t, b, func(screen, scheme string, _ bool) {
		for _, v := range views {
			where := v.name + " " + screen + " " + scheme
			if err := b.Navigate(ctx, v.root+"/"+v.page); err != nil {
				t.Fatalf("%s: %v", where, err)
			}
			var cells int
			eval(where, comparisonDrawn, &cells)
			var over []string
			eval(where, overflowing, &over)
			for _, o := range over {
				t.Errorf("%s: %s", where, o)
			}
			var missing int
			if eval(where, unlabelledBars, &missing); missing != 0 {
				t.Errorf("%s: %d prefill bars without a label (negative: no chart)", where, missing)
			}
			clean(where, v.root)
			if err := b.Screenshot(filepath.Join(artifacts, where+".png")); err != nil {
				t.Error(err)
			}
		}
	})
}

// eachScreen calls f at desktop (1400 × 900) and phone (390 × 844) sizes,
// in light and in dark.
func eachScreen(t *testing.T, b *browser.Browser, f func(screen, scheme string, phone bool)) {
	t.Helper()
	if err := b.EachScreen(f); err != nil {
		t.Fatal(err)
	}
}
