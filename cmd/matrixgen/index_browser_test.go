package main

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/matrixgen/matrixgen/internal/browser"
	"github.com/matrixgen/matrixgen/internal/testrun"
	"github.com/matrixgen/matrixgen/runfile"
)

// pagedRun is what TestPagedIndexInABrowser knows of a run it made: the
// truth the pages are held to.
type pagedRun struct{ id, gpu, model, engine string }

// pagedRuns are the 250 runs of TestPagedIndexInABrowser, newest first (a
// run an hour, run-249 the newest): three GPUs (one on 150 runs, two
// pages of a filtered view), six models (one on 125, one named in
// markup), three engines.
func pagedRuns() []pagedRun {
	gpus := []string{"NVIDIA H100 80GB HBM3", "NVIDIA H100 80GB HBM3", "NVIDIA H100 80GB HBM3", "NVIDIA A100-SXM4-80GB", "NVIDIA GeForce RTX 4090"}
	models := []string{"Qwen/Qwen3-30B-A3B", "mistralai/Mistral-Small-24B", `<b>bold</b> & "quoted" <img src=x onerror="window.pwned=1">`,
		"google/gemma-3-27b-it", "deepseek-ai/DeepSeek-V3"}
	engines := []string{"vllm", "sglang", "llama.cpp"}
	var runs []pagedRun
	for i := 249; i >= 0; i-- {
		r := pagedRun{id: fmt.Sprintf("run-%03d", i), gpu: gpus[i%len(gpus)], model: models[i/2%len(models)], engine: engines[i%len(engines)]}
		if i%2 == 0 {
			r.model = "meta-llama/Llama-3.1-8B-Instruct"
		}
		runs = append(runs, r)
	}
	return runs
}

// pagedSite builds the site of pagedRuns with the command.
func pagedSite(t *testing.T) string {
	t.Helper()
	runs := filepath.Join(t.TempDir(), "runs")
	if err := os.MkdirAll(runs, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, p := range pagedRuns() {
		seed, _ := strconv.Atoi(strings.TrimPrefix(p.id, "run-"))
		r := testrun.Full(uint64(seed))
		r.Hardware.GPU, r.Model.Name, r.Engine.Name = p.gpu, p.model, p.engine
		data, err := runfile.Encode(r)
		if err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(runs, p.id+".json"), data)
	}
	out := filepath.Join(t.TempDir(), "public")
	if code, _, stderr := matrixgenCmd(t, "build", "-runs", runs, "-o", out); code != 0 {
		t.Fatalf("build: %s", stderr)
	}
	return out
}

// indexState is what the index shows: where it is, the runs its table
// lists, what its count and its pager say.
type indexState struct {
	Path, Search, Hash string
	IDs                []string
	Count, Range       string
	Current            string
	PagerShown         bool
	Markup             int // elements made of a run's text: <b> or <img> anywhere
	Pwned              bool
}

const indexStateJS = `(() => {
	const pager = document.getElementById("pager"), count = document.getElementById("filter-count");
	return {Path: location.pathname, Search: location.search, Hash: location.hash,
		IDs: [...document.querySelectorAll("#runs tbody tr")].map(r => r.dataset.id),
		Count: count ? count.textContent : "", Range: pager ? (pager.querySelector(".range") || {}).textContent || "" : "",
		Current: pager ? (pager.querySelector("[aria-current]") || {}).textContent || "" : "",
		PagerShown: !!pager && !pager.hidden && pager.offsetParent !== null,
		Markup: document.querySelectorAll("b, img").length, Pwned: !!window.pwned};
})()`

// TestPagedIndexInABrowser builds a site of 250 runs with the command and
// opens its index in headless Chromium, from disk (file://) and served:
// the newest page (50 runs, what is left after two full pages) is
// index.html; the pager moves to older pages and Back returns; ?p=3 opens
// the third, the oldest; filters by GPU and by model list exactly the
// right runs across every page of the view; a value no run has is said;
// the oldest-first sort and the contains field; the compare Find offers
// the right runs and the Compare button, like the page's listed pairs,
// opens a compare page that draws; hostile addresses do no harm; a run's
// model written in markup stays text. At phone and desktop widths, light
// and dark, nothing overflows; the screenshots are the test's artifacts.
func TestPagedIndexInABrowser(t *testing.T) {
	path := browser.PathForTest(t)
	dir := pagedSite(t)
	server := httptest.NewServer(http.FileServer(http.Dir(dir)))
	defer server.Close()
	b := browser.StartForTest(t, path)

	runs := pagedRuns()
	ids := func(keep func(pagedRun) bool) []string {
		var out []string
		for _, r := range runs {
			if keep(r) {
				out = append(out, r.id)
			}
		}
		return out
	}
	every := ids(func(pagedRun) bool { return true })
	h100 := ids(func(r pagedRun) bool { return r.gpu == "NVIDIA H100 80GB HBM3" })
	llama := ids(func(r pagedRun) bool { return r.model == "meta-llama/Llama-3.1-8B-Instruct" })
	both := ids(func(r pagedRun) bool {
		return r.gpu == "NVIDIA H100 80GB HBM3" && r.model == "meta-llama/Llama-3.1-8B-Instruct"
	})
	odd := ids(func(r pagedRun) bool { return strings.HasPrefix(r.model, "<b>") })
	qwen := ids(func(r pagedRun) bool {
		return strings.Contains(strings.ToLower(r.id+r.model+r.gpu+r.engine), "qwen")
	})
	oldest := slices.Clone(every)
	slices.Reverse(oldest)
	if len(h100) <= 100 || len(llama) <= 100 || len(both) == 0 || len(odd) == 0 || len(qwen) == 0 {
		t.Fatalf("the runs do not make the views the test needs: %d, %d, %d, %d, %d", len(h100), len(llama), len(both), len(odd), len(qwen))
	}

	// newest says a path is the newest page's: served, index.html is its
	// folder's address.
	newest := func(path string) bool { return strings.HasSuffix(path, "/index.html") || strings.HasSuffix(path, "/") }
	for _, root := range []string{"file://" + dir, server.URL} {
		where := func(what string) string { return what + " at " + root }
		// await waits until the page, opened or gone to, shows what ok
		// wants: at most 20 s, far past the moment it takes. Asked while
		// a page is replaced, the browser may answer nothing: asked again.
		await := func(what string, ok func(indexState) bool) indexState {
			t.Helper()
			var s indexState
			for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
				s = indexState{}
				if b.Eval(indexStateJS, &s) == nil && !strings.HasPrefix(s.Count, "loading") && s.Count != "" && ok(s) {
					return s
				}
			}
			t.Fatalf("%s: the page never showed what was wanted; it shows %+v", where(what), s)
			return s
		}
		// navigate opens the address, once what the page before did is
		// checked: no console error, no request outside the site.
		clean := func(before string) {
			t.Helper()
			for _, e := range b.Errors() {
				t.Errorf("%s, before %s: %s", where("a page"), before, e)
			}
			for _, u := range b.Requests() {
				if !strings.HasPrefix(u, root+"/") && !strings.HasPrefix(u, "data:") {
					t.Errorf("%s, before %s, asked for %s, outside the site", where("a page"), before, u)
				}
			}
		}
		navigate := func(address string) {
			t.Helper()
			clean(address)
			if err := b.Navigate(context.Background(), root+"/"+address); err != nil {
				t.Fatalf("%s: %v", where(address), err)
			}
		}
		open := func(address string) indexState {
			t.Helper()
			navigate(address)
			return await(address, func(indexState) bool { return true })
		}
		run := func(js string) {
			t.Helper()
			var ok bool
			if err := b.Eval(`(() => { `+js+`; return true; })()`, &ok); err != nil {
				t.Fatal(err)
			}
		}
		// later runs js once this evaluation has returned: a click that
		// leaves the page.
		later := func(js string) { t.Helper(); run(`setTimeout(() => { ` + js + ` }, 0)`) }
		choose := func(filters string) {
			t.Helper()
			run(`const f = document.getElementById("filters");
				for (const [k, v] of Object.entries(` + filters + `)) f.elements[k].value = v;
				f.dispatchEvent(new Event("change"))`)
		}
		check := func(what string, s indexState, want []string, count, rangeText, current string) {
			t.Helper()
			if !slices.Equal(s.IDs, want) {
				t.Errorf("%s lists %d runs %.80q…, want %d: %.80q…", where(what), len(s.IDs), s.IDs, len(want), want)
			}
			if s.Count != count {
				t.Errorf("%s says %q, want %q", where(what), s.Count, count)
			}
			if rangeText == "" && s.PagerShown || rangeText != "" && (!s.PagerShown || s.Range != rangeText || s.Current != current) {
				t.Errorf("%s: pager shown %v, %q, at %q; want %q at %q", where(what), s.PagerShown, s.Range, s.Current, rangeText, current)
			}
			if s.Markup != 0 || s.Pwned {
				t.Errorf("%s: %d elements made of a run's text, script ran: %v", where(what), s.Markup, s.Pwned)
			}
		}
		// collect lists every run of a view, page after page by its pager,
		// and says how many pages it went through.
		collect := func(what string, s indexState) ([]string, int) {
			t.Helper()
			list, pages := s.IDs, 1
			for {
				var next bool
				if err := b.Eval(`!!document.querySelector("#pager a[rel=next]")`, &next); err != nil {
					t.Fatal(err)
				}
				if !next {
					return list, pages
				}
				before := s.Current
				run(`document.querySelector("#pager a[rel=next]").click()`)
				s = await(what+", the next page", func(s indexState) bool { return s.Current != before })
				list = append(list, s.IDs...)
				pages++
			}
		}
		all := "250 runs"
		of := func(n int) string { return strconv.Itoa(n) + " of 250 runs" }

		// The newest page, what is left after two full pages.
		s := open("index.html")
		check("index.html", s, every[:50], all, "Runs 1–50 of 250", "1")
		// Older, as a reader clicks it: the file of the second page; Back
		// returns.
		later(`document.querySelector("#pager a[rel=next]").click()`)
		s = await("the second page", func(s indexState) bool { return strings.HasSuffix(s.Path, "/index-2.html") })
		check("the second page", s, every[50:150], all, "Runs 51–150 of 250", "2")
		later(`history.back()`)
		s = await("Back from the second page", func(s indexState) bool { return newest(s.Path) })
		check("Back from the second page", s, every[:50], all, "Runs 1–50 of 250", "1")
		// ?p=3 is the third page, the oldest: its own file.
		open("index.html?p=3")
		s = await("?p=3", func(s indexState) bool { return strings.HasSuffix(s.Path, "/index-1.html") })
		check("?p=3", s, every[150:], all, "Runs 151–250 of 250", "3")
		if s.Search != "" {
			t.Errorf("%s: the address keeps %q", where("?p=3"), s.Search)
		}

		// Filters reach every run, a view's pages by its own pager; Back
		// returns to the view's page before.
		open("index.html")
		choose(`{gpu: "NVIDIA H100 80GB HBM3"}`)
		s = await("the H100s", func(s indexState) bool { return s.Count == of(len(h100)) })
		check("the H100s", s, h100[:100], of(len(h100)), "Runs 1–100 of 150", "1")
		if s.Search != "?gpu=NVIDIA+H100+80GB+HBM3" {
			t.Errorf("%s: the address reads %q", where("the H100s"), s.Search)
		}
		got, pages := collect("the H100s", s)
		if !slices.Equal(got, h100) || pages != 2 {
			t.Errorf("%s: over %d pages %d runs, want 2 pages of %d: %q", where("the H100s"), pages, len(got), len(h100), got)
		}
		run(`history.back()`)
		s = await("Back in the H100s", func(s indexState) bool { return s.Current == "1" })
		check("Back in the H100s", s, h100[:100], of(len(h100)), "Runs 1–100 of 150", "1")

		choose(`{gpu: "", model: "meta-llama/Llama-3.1-8B-Instruct"}`)
		s = await("Llama", func(s indexState) bool { return s.Count == of(len(llama)) })
		if got, _ := collect("Llama", s); !slices.Equal(got, llama) {
			t.Errorf("%s lists %d runs %q, want %d", where("Llama"), len(got), got, len(llama))
		}
		choose(`{gpu: "NVIDIA H100 80GB HBM3", model: "meta-llama/Llama-3.1-8B-Instruct"}`)
		s = await("Llama on H100s", func(s indexState) bool { return s.Count == of(len(both)) })
		check("Llama on H100s", s, both, of(len(both)), "", "")
		// A run's model in markup, chosen: the rows the script makes keep
		// it text.
		choose(`{gpu: "", model: ` + strconv.Quote(runsModel(runs, odd[0])) + `}`)
		s = await("the model in markup", func(s indexState) bool { return s.Count == of(len(odd)) })
		check("the model in markup", s, odd, of(len(odd)), "", "")
		var text string
		if err := b.Eval(`document.querySelector("#runs tbody tr td.model a").textContent`, &text); err != nil || text != runsModel(runs, odd[0]) {
			t.Errorf("%s: the model reads %q (%v)", where("the model in markup"), text, err)
		}

		// A value no run has, from an address: said, nothing listed.
		s = open("index.html?gpu=Voodoo+5+6000")
		check("a GPU no run has", s, nil, "0 of 250 runs: no run has gpu “Voodoo 5 6000”", "", "")
		var empty bool
		if err := b.Eval(`document.getElementById("runs").hidden && document.getElementById("index-chart").hidden`, &empty); err != nil || !empty {
			t.Errorf("%s: a view of no run shows its empty table or chart (%v)", where("a GPU no run has"), err)
		}

		// Oldest first, and its last page from an address.
		s = open("index.html")
		choose(`{sort: "oldest"}`)
		s = await("oldest first", func(s indexState) bool { return s.Count == of(250) })
		check("oldest first", s, oldest[:100], of(250), "Runs 1–100 of 250", "1")
		s = open("index.html?sort=oldest&p=3")
		check("oldest first, page 3", s, oldest[200:], of(250), "Runs 201–250 of 250", "3")

		// Contains, as typed: the runs whose id, model, GPU, engine or
		// quantization hold it, and the values that do offered.
		open("index.html")
		run(`const q = document.querySelector("#filters input[name=q]"); q.value = "QWEN"; q.dispatchEvent(new Event("input"))`)
		s = await("contains QWEN", func(s indexState) bool { return s.Search == "?q=QWEN" && s.Count == of(len(qwen)) })
		check("contains QWEN", s, qwen, of(len(qwen)), "", "")
		var offered []string
		for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline) && len(offered) == 0; time.Sleep(50 * time.Millisecond) {
			b.Eval(`[...document.querySelectorAll("#filter-values option")].map(o => o.value + " · " + o.label)`, &offered)
		}
		if want := []string{"Qwen/Qwen3-30B-A3B · Model · " + strconv.Itoa(len(qwen)) + " runs"}; !slices.Equal(offered, want) {
			t.Errorf("%s offers %q, want %q", where("contains QWEN"), offered, want)
		}

		// The compare Find: any run by id or model, from every chunk.
		// The pickers keep their choice, A the run before the newest, above what Find
		// offers.
		open("index.html")
		run(`const f = document.querySelector("form.pick input[name=find]"); f.value = "run-07"; f.dispatchEvent(new Event("input"))`)
		var candidates []string
		want := append([]string{every[1]}, ids(func(r pagedRun) bool { return strings.HasPrefix(r.id, "run-07") })...)
		for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline) && !slices.Equal(candidates, want); time.Sleep(50 * time.Millisecond) {
			b.Eval(`[...document.querySelectorAll("form.pick select[name=a] option")].map(o => o.value)`, &candidates)
		}
		if !slices.Equal(candidates, want) {
			t.Errorf("%s: Find run-07 offers %q, want %q", where("the compare Find"), candidates, want)
		}
		run(`const f = document.querySelector("form.pick"); f.elements.a.value = "run-079"; f.elements.a.dispatchEvent(new Event("change"));
			f.elements.b.value = "run-070"; f.elements.b.dispatchEvent(new Event("change"))`)
		later(`document.querySelector("form.pick button").click()`)
		cells := -1
		for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline) && cells < 0; time.Sleep(100 * time.Millisecond) {
			if b.Eval(`location.pathname.endsWith("/compare.html") ? `+comparisonDrawn+` : -1`, &cells) != nil {
				cells = -1
			}
		}
		var landed string
		b.Eval(`location.pathname + location.search`, &landed)
		if cells != 64 || !strings.HasSuffix(landed, "/compare.html?a=run-079&b=run-070") {
			t.Errorf("%s: Compare led to %q with %d ratio cells", where("the compare Find"), landed, cells)
		}
		// The pairs the newest page lists, each a compare page that draws.
		open("index.html")
		var pairs []string
		if err := b.Eval(`[...document.querySelectorAll("ul.compare-list a")].map(a => a.getAttribute("href"))`, &pairs); err != nil || len(pairs) == 0 {
			t.Fatalf("%s: the newest page lists no compare pages (%v)", where("index.html"), err)
		}
		for _, href := range []string{pairs[0], pairs[len(pairs)-1]} {
			navigate(href)
			if err := b.Eval(comparisonDrawn, &cells); err != nil || cells != 64 {
				t.Errorf("%s draws %d ratio cells (%v)", where(href), cells, err)
			}
		}

		// Hostile addresses: nothing runs, nothing breaks, each lands on a
		// page of runs.
		for _, c := range []struct {
			address, path string
			want          []string
		}{
			{`index.html#<img src=x onerror="window.pwned=1">`, "/index.html", every[:50]},
			{`index.html?p=-1`, "/index.html", every[:50]},
			{`index.html?p=99999`, "/index-1.html", every[150:]},
			{`index.html?p=abc`, "/index.html", every[:50]},
			{`index-2.html?p=%3Cscript%3E`, "/index-2.html", every[50:150]},
			{`index.html?gpu=%3Cimg%20src%3Dx%20onerror%3D%22window.pwned%3D1%22%3E&p=2#%3Cb%3E`, "/index.html", nil},
			{`index.html?__proto__=1&constructor=2&sort=__proto__`, "/index.html", every[:50]},
		} {
			navigate(c.address)
			s := await(c.address, func(s indexState) bool {
				return strings.HasSuffix(s.Path, c.path) || c.path == "/index.html" && newest(s.Path)
			})
			if !slices.Equal(s.IDs, c.want) || s.Markup != 0 || s.Pwned {
				t.Errorf("%s: lists %d runs (want %d), %d elements of markup, script ran: %v", where(c.address), len(s.IDs), len(c.want), s.Markup, s.Pwned)
			}
		}
		clean("the end")
		// The next root begins with a page of its own.
		if err := b.Navigate(context.Background(), "about:blank"); err != nil {
			t.Fatal(err)
		}
	}

	// Every screen: nothing past its edge; each page at its top and at its
	// pager (a page of a hundred runs is long on a phone).
	artifacts := t.ArtifactDir()
	err := b.EachScreen(func(screen, scheme string, _ bool) {
		for _, v := range []struct{ name, address string }{
			{"newest", "index.html"}, {"second", "index.html?p=2"}, {"h100", "index.html?gpu=NVIDIA+H100+80GB+HBM3&p=2"},
			{"none", "index.html?gpu=Voodoo+5+6000"}, {"qwen", "index.html?q=qwen"},
		} {
			where := v.name + " " + screen + " " + scheme
			if err := b.Navigate(context.Background(), server.URL+"/"+v.address); err != nil {
				t.Fatal(err)
			}
			for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
				var s indexState
				if b.Eval(indexStateJS, &s) == nil && s.Count != "" && !strings.HasPrefix(s.Count, "loading") {
					break
				}
			}
			var over []string
			if err := b.Eval(overflowing, &over); err != nil {
				t.Fatal(err)
			}
			for _, o := range over {
				t.Errorf("%s: %s", where, o)
			}
			for _, at := range []struct{ name, scroll string }{{"top", "window.scrollTo(0, 0)"}, {"pager", `(document.getElementById("pager") || document.body).scrollIntoView({block: "center"})`}} {
				var settled bool
				b.Eval(`new Promise(r => { `+at.scroll+`; requestAnimationFrame(() => requestAnimationFrame(() => r(true))); })`, &settled)
				if err := b.ScreenshotViewport(filepath.Join(artifacts, "paged-"+v.name+"-"+at.name+"-"+screen+"-"+scheme+".png")); err != nil {
					t.Error(err)
				}
			}
		}
	})
	if err != nil {
		t.Fatal(err)
	}
}

// runsModel is the model of the run id.
func runsModel(runs []pagedRun, id string) string {
	for _, r := range runs {
		if r.id == id {
			return r.model
		}
	}
	return ""
}
