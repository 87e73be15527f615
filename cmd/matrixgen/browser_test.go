package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/matrixgen/matrixgen"
	"github.com/matrixgen/matrixgen/internal/browser"
	"github.com/matrixgen/matrixgen/internal/testrun"
)

// TestPagesInABrowser opens the built site in real headless Chromium,
// served from a local server, and checks what a reader gets: no console
// errors, no request leaving the site, charts that draw, the matrix's cells,
// the cell detail, and filters that narrow the index. Screenshots go to
// cmd/matrixgen/artifacts (not committed). .ci/run installs Chromium and
// sets MATRIXGEN_REQUIRE_BROWSER, so there the test cannot be skipped.
func TestPagesInABrowser(t *testing.T) {
	path, err := browser.Find()
	if err != nil {
		if os.Getenv("MATRIXGEN_REQUIRE_BROWSER") != "" {
			t.Fatal(err)
		}
		t.Skipf("SKIPPED, not passed: %v", err)
	}
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
	data, err := matrixgen.EncodeRun(synthetic)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(runs, "synthetic.json"), data)
	// A second run of the sample's model and GPU, so the site has a compare page.
	sample, err := os.ReadFile(filepath.Join(runs, sampleID+".json"))
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(runs, "again.json"), sample)
	out := filepath.Join(t.TempDir(), "public")
	if code, _, stderr := matrixgenCmd(t, "build", "-runs", runs, "-o", out); code != 0 {
		t.Fatalf("build: %s", stderr)
	}
	site := httptest.NewServer(http.FileServer(http.Dir(out)))
	defer site.Close()
	artifacts, _ := filepath.Abs("artifacts")
	os.MkdirAll(artifacts, 0o755)

	// Chromium's helpers may still be writing its profile as the test ends,
	// so the profile is removed on a best-effort basis, not by t.TempDir.
	profile, err := os.MkdirTemp("", "matrixgen-chromium-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(profile)
	b, err := browser.Start(path, profile)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	ctx := context.Background()
	open := func(page, shot string) {
		t.Helper()
		if err := b.Navigate(ctx, site.URL+"/"+page); err != nil {
			t.Fatalf("%s: %v", page, err)
		}
		for _, e := range b.Errors() {
			t.Errorf("%s: %s", page, e)
		}
		for _, u := range b.Requests() {
			if !strings.HasPrefix(u, site.URL+"/") && !strings.HasPrefix(u, "data:") {
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
	eval(`(() => { const s = document.querySelector("#filters select[name=gpu]"); s.value = "GPU model 3";
		s.dispatchEvent(new Event("change", {bubbles: true}));
		return document.querySelectorAll("#runs tbody tr:not([hidden])").length; })()`, &visible)
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

	// The Compare button: B starts on another run than A, and a click opens
	// compare.html on the two, its ratio matrix drawn, no policy violated.
	open("index.html", "index.png")
	var picked []string
	eval(`[document.querySelector("form.pick select[name=a]").value, document.querySelector("form.pick select[name=b]").value]`, &picked)
	if len(picked) != 2 || picked[0] == picked[1] {
		t.Errorf("the pickers start on %q", picked)
	}
	var landed string
	eval(`(() => { setTimeout(() => document.querySelector("form.pick button").click(), 0); return "clicking"; })()`, &landed)
	// Wait for the page the click leads to, and for its ratio matrix.
	cells = 0
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if b.Eval(`location.pathname + location.search`, &landed) != nil || !strings.HasPrefix(landed, "/compare.html?a=") {
			continue
		}
		if b.Eval(`document.querySelectorAll("#pick-ratio tbody td").length`, &cells) == nil && cells > 0 {
			break
		}
	}
	if !strings.HasPrefix(landed, "/compare.html?a=") || cells == 0 {
		t.Errorf("the Compare button led to %q with %d ratio cells", landed, cells)
	}
	for _, e := range b.Errors() {
		t.Errorf("after the Compare button: %s", e)
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
	if heading != "8K context × 1 simultaneous requests" {
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
	eval(`document.querySelectorAll("section.ratio table.matrix tbody td").length`, &cells)
	if cells != 64 {
		t.Errorf("the ratio matrix has %d cells, want 64", cells)
	}
	if n := inked("#compare-prefill-chart"); n < 1000 {
		t.Errorf("the compare prefill chart drew %d pixels", n)
	}
	open("compare.html?a=synthetic&b="+sampleID, "compare-any.png")
	eval(`new Promise(r => setTimeout(r, 300)).then(() => document.getElementById("pick-result").hidden ? -1 :
		document.querySelectorAll("#pick-ratio tbody td").length)`, &cells)
	if cells != 64 {
		t.Errorf("comparing any two runs in the browser shows %d cells, want 64", cells)
	}
	var ratioText string
	eval(`document.querySelector("#pick-ratio tbody td.ratio-0, #pick-ratio tbody td.ratio-1, #pick-ratio tbody td.ratio-2, #pick-ratio tbody td.ratio-3, #pick-ratio tbody td.ratio-4").textContent`, &ratioText)
	if !strings.Contains(ratioText, "×") {
		t.Errorf("a ratio cell reads %q", ratioText)
	}
	open("methodology.html", "methodology.png")
}
