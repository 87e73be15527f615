package main

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/html"

	"github.com/matrixgen/matrixgen"
	"github.com/matrixgen/matrixgen/runfile"
)

const sampleID = "nemotron-3.5-lightning-nvfp4-rtx-pro-6000-vllm"

// matrixgen runs the command in-process and returns its exit code and output.
func matrixgenCmd(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = run(args, &out, &errOut)
	return code, out.String(), errOut.String()
}

// sampleRuns copies the shipped sample run and its notes into a temp runs/.
func sampleRuns(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "runs")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, ext := range []string{".json", ".md"} {
		data, err := os.ReadFile(filepath.Join("..", "..", "runs", sampleID+ext))
		if err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(dir, sampleID+ext), data)
	}
	return dir
}

func writeFile(t *testing.T, name string, data []byte) {
	t.Helper()
	if err := os.WriteFile(name, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

var (
	assetRef = regexp.MustCompile(`<(script|link|img)\b[^>]*?\b(src|href)="([^"]*)"`)
	builtMsg = regexp.MustCompile(`^built 4 pages from 1 run in (\d+ ms|\d+\.\d s)\n$`)
)

func TestDurationText(t *testing.T) {
	for _, tt := range []struct {
		d    time.Duration
		want string
	}{
		{0, "0 ms"}, {999 * time.Millisecond, "999 ms"}, {time.Second, "1.0 s"}, {10257 * time.Millisecond, "10.3 s"},
		{59940 * time.Millisecond, "59.9 s"}, {59960 * time.Millisecond, "1 min 0 s"}, {time.Minute, "1 min 0 s"}, {187981 * time.Millisecond, "3 min 8 s"}, {2 * time.Hour, "120 min 0 s"},
	} {
		if got := durationText(tt.d); got != tt.want {
			t.Errorf("durationText(%v) = %q, want %q", tt.d, got, tt.want)
		}
	}
}

func TestBuildEndToEnd(t *testing.T) {
	runs := sampleRuns(t)
	out := filepath.Join(t.TempDir(), "public")
	code, stdout, stderr := matrixgenCmd(t, "build", "-runs", runs, "-o", out)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !builtMsg.MatchString(stdout) {
		t.Errorf("stdout = %q, want 'built 4 pages from 1 run in N ms'", stdout)
	}
	page := filepath.Join("runs", sampleID, "index.html")
	for _, f := range []string{
		"index.html", page,
		filepath.Join("runs", sampleID, "run.json"),
		filepath.Join("runs", sampleID, "measurements.csv"),
		"assets/matrixgen.css", "assets/bins.css", "assets/matrixgen.js",
		"assets/vendor/echarts/echarts.min.js", "assets/vendor/echarts/LICENSE",
		"assets/vendor/echarts/NOTICE", "assets/vendor/echarts/VERSION",
	} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Errorf("missing %s", f)
		}
	}
	echarts, _ := os.ReadFile(filepath.Join(out, "assets/vendor/echarts/echarts.min.js"))
	if !bytes.Contains(echarts, []byte(`"5.6.0"`)) {
		t.Error("the vendored ECharts is not version 5.6.0")
	}
	for _, p := range []string{"index.html", page} {
		html, _ := os.ReadFile(filepath.Join(out, p))
		refs := assetRef.FindAllStringSubmatch(string(html), -1)
		if p == page && len(refs) < 4 {
			t.Errorf("%s references %d assets, want the styles and scripts", p, len(refs))
		}
		for _, ref := range refs {
			url := ref[3]
			if strings.Contains(url, "://") || strings.HasPrefix(url, "//") {
				t.Errorf("%s loads %s from outside the site", p, url)
				continue
			}
			// Relative links resolve from the page's folder, on disk as on any URL prefix.
			target := filepath.Join(out, filepath.Dir(p), filepath.FromSlash(url))
			if _, err := os.Stat(target); err != nil {
				t.Errorf("%s: %s does not resolve to a file (%v)", p, url, err)
			}
		}
		if bytes.Contains(html, []byte(`href="/`)) || bytes.Contains(html, []byte(`src="/`)) {
			t.Errorf("%s has a root-absolute link, which breaks under a URL prefix", p)
		}
	}
	index, _ := os.ReadFile(filepath.Join(out, "index.html"))
	for _, want := range []string{"NVIDIA-Nemotron-3.5-Lightning-30B-A3B-NVFP4", "RTX PRO 6000 Blackwell Server Edition", "445.7", "6,904.0", `href="runs/` + sampleID + `/index.html"`} {
		if !bytes.Contains(index, []byte(want)) {
			t.Errorf("index lacks %q", want)
		}
	}
	runJSON, _ := os.ReadFile(filepath.Join(out, "runs", sampleID, "run.json"))
	if _, err := runfile.Decode("run.json", runJSON); err != nil {
		t.Errorf("the run.json download is not a valid run: %v", err)
	}
}

func TestBuildBaseURL(t *testing.T) {
	runs := sampleRuns(t)
	out := filepath.Join(t.TempDir(), "public")
	if code, _, stderr := matrixgenCmd(t, "build", "-runs", runs, "-o", out, "-base-url", "https://example.org/bench/"); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	page, _ := os.ReadFile(filepath.Join(out, "runs", sampleID, "index.html"))
	if !bytes.Contains(page, []byte(`<link rel="canonical" href="https://example.org/bench/runs/`+sampleID+`/">`)) {
		t.Error("the run page has no canonical link under the base URL")
	}
	if !bytes.Contains(page, []byte(`href="../../assets/matrixgen.css"`)) {
		t.Error("with a base URL, pages must still link relatively")
	}
	code, _, stderr := matrixgenCmd(t, "build", "-runs", runs, "-o", out, "-base-url", "ftp://x")
	if code != exitUsage || !strings.Contains(stderr, "-base-url: want an http:// or https:// URL") {
		t.Errorf("a bad base URL gave exit %d, %q", code, stderr)
	}
}

// TestFailedBuildKeepsPreviousSite breaks two run files after a good build:
// the next build names both and leaves the site as it was.
func TestFailedBuildKeepsPreviousSite(t *testing.T) {
	runs := sampleRuns(t)
	out := filepath.Join(t.TempDir(), "public")
	if code, _, stderr := matrixgenCmd(t, "build", "-runs", runs, "-o", out); code != 0 {
		t.Fatalf("first build: exit %d: %s", code, stderr)
	}
	before, _ := os.ReadFile(filepath.Join(out, "index.html"))
	writeFile(t, filepath.Join(runs, "broken.json"), []byte(`{"schema": 1,`))
	writeFile(t, filepath.Join(runs, "unknown-field.json"), []byte(`{"schema": 1, "gpu": "x"}`))
	code, stdout, stderr := matrixgenCmd(t, "build", "-runs", runs, "-o", out)
	if code == 0 {
		t.Fatal("a build with bad files succeeded")
	}
	if stdout != "" {
		t.Errorf("a failed build printed %q", stdout)
	}
	for _, want := range []string{"broken.json:1:", "unexpected end of file", "unknown-field.json:1:15: gpu: unknown field"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	after, err := os.ReadFile(filepath.Join(out, "index.html"))
	if err != nil || !bytes.Equal(before, after) {
		t.Error("the previous site changed after a failed build")
	}
	leftovers, _ := filepath.Glob(filepath.Join(filepath.Dir(out), ".public.building-*"))
	if len(leftovers) > 0 {
		t.Errorf("a failed build left %v behind", leftovers)
	}
}

func TestBuildBadInput(t *testing.T) {
	good, err := os.ReadFile(filepath.Join("..", "..", "runs", sampleID+".json"))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct{ name, doc, want string }{
		{"syntax error", strings.Replace(string(good), `"schema": 1,`, `"schema": 1`, 1), "x.json:3:3: invalid character"},
		{"unknown field", strings.Replace(string(good), `"os": "linux"`, `"os": "linux", "psu": "1600W"`, 1), "x.json:11:20: hardware.psu: unknown field"},
		{"missing required field", strings.Replace(string(good), `"name": "vllm",`, ``, 1), "x.json:13:3: engine.name: required"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			writeFile(t, filepath.Join(dir, "x.json"), []byte(tt.doc))
			out := filepath.Join(t.TempDir(), "public")
			code, _, stderr := matrixgenCmd(t, "build", "-runs", dir, "-o", out)
			if code != 1 || !strings.Contains(stderr, tt.want) {
				t.Errorf("exit %d, stderr:\n%s\nwant it to contain %q", code, stderr, tt.want)
			}
			if _, err := os.Stat(out); err == nil {
				t.Error("a failed first build created the output folder")
			}
		})
	}
}

// setStrings puts s in every string field of v, however deep.
func setStrings(v reflect.Value, s string) {
	switch v.Kind() {
	case reflect.Pointer:
		if !v.IsNil() {
			setStrings(v.Elem(), s)
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				setStrings(v.Field(i), s)
			}
		}
	case reflect.Slice:
		for i := range v.Len() {
			setStrings(v.Index(i), s)
		}
	case reflect.String:
		if v.Type() == reflect.TypeFor[string]() {
			v.SetString(s)
		}
	}
}

// allowedTags are the elements matrixgen's templates and goldmark's
// Markdown make; anything else on a page came from a run file.
var allowedTags = map[string]bool{
	"html": true, "head": true, "body": true, "meta": true, "title": true, "link": true, "script": true,
	"header": true, "nav": true, "main": true, "footer": true, "section": true, "div": true, "p": true, "a": true,
	"h1": true, "h2": true, "h3": true, "h4": true, "h5": true, "h6": true, "dl": true, "dt": true, "dd": true,
	"pre": true, "code": true, "button": true, "noscript": true, "table": true, "thead": true, "tbody": true,
	"tr": true, "th": true, "td": true, "ul": true, "ol": true, "li": true, "span": true, "strong": true,
	"em": true, "blockquote": true, "details": true, "summary": true, "form": true, "label": true, "select": true, "option": true, "hr": true, "br": true, "del": true, "input": true,
	"datalist": true, // the index's filter suggestions, from the template only
	"abbr":     true, // the all-measurements table's compact headers, from the template only
}

// pageProblems parses a page as a browser would and lists every element or
// attribute that a run file could only have got there by injection.
func pageProblems(t *testing.T, page []byte) (problems []string, text string, scripts []string) {
	t.Helper()
	doc, err := html.Parse(bytes.NewReader(page))
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	var walk func(n *html.Node)
	walk = func(n *html.Node) {
		switch n.Type {
		case html.TextNode:
			b.WriteString(n.Data)
		case html.ElementNode:
			if !allowedTags[n.Data] {
				problems = append(problems, "element <"+n.Data+">")
			}
			for _, a := range n.Attr {
				v := strings.ToLower(strings.TrimSpace(a.Val))
				switch {
				case strings.HasPrefix(a.Key, "on"):
					problems = append(problems, "attribute "+a.Key+" on <"+n.Data+">")
				case (a.Key == "href" || a.Key == "src" || a.Key == "action") && (strings.HasPrefix(v, "javascript:") || strings.HasPrefix(v, "data:")):
					problems = append(problems, a.Key+"="+a.Val)
				case a.Key == "style" || a.Key == "srcdoc":
					problems = append(problems, "attribute "+a.Key+" on <"+n.Data+">")
				}
			}
			if n.Data == "script" {
				desc := ""
				for _, a := range n.Attr {
					desc += a.Key + "=" + a.Val + " "
				}
				scripts = append(scripts, strings.TrimSpace(desc))
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(doc)
	return problems, b.String(), scripts
}

// TestHostileStringsAreEscaped puts markup, script, event handlers,
// javascript: URLs and a megabyte of text in every free-text field of a run
// and in its notes, and checks, by parsing the built pages, that none of it
// became an element or attribute: it is all text.
func TestHostileStringsAreEscaped(t *testing.T) {
	const evil = `</script><script>alert(1)</script><img src=x onerror=alert(2)>"onmouseover="alert(3)" <a href="javascript:alert(4)">x</a>`
	e, err := runfile.Load(filepath.Join("..", "..", "runs", sampleID+".json"))
	if err != nil {
		t.Fatal(err)
	}
	setStrings(reflect.ValueOf(e.Run), evil)
	// These are closed sets, rejected when unknown, not free text; every
	// hardware field given, so the hostile values are shown as given.
	e.Run.Sweep.DecodeTest, e.Run.Sweep.PrefillMode = matrixgen.DecodeFixedDuration, matrixgen.PrefillDecodeWarmup
	e.Run.Sweep.CacheMode, e.Run.Hardware.Given = matrixgen.CacheShared, matrixgen.GivenHardwareFields
	for i := range e.Run.Decode {
		e.Run.Decode[i].Reason = evil
	}
	e.Run.LaunchCommand = evil + strings.Repeat("x", 1<<20)
	data, err := runfile.Encode(e.Run)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "hostile.json"), data)
	writeFile(t, filepath.Join(dir, "hostile.md"), []byte(evil+"\n\n[click](javascript:alert(5)) <iframe src=x></iframe>\n\n<style>body{}</style>\n"))
	out := filepath.Join(t.TempDir(), "public")
	if code, _, stderr := matrixgenCmd(t, "build", "-runs", dir, "-o", out); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, p := range []string{"index.html", "runs/hostile/index.html"} {
		page, _ := os.ReadFile(filepath.Join(out, p))
		problems, text, scripts := pageProblems(t, page)
		for _, problem := range problems {
			t.Errorf("%s: injected %s", p, problem)
		}
		if !strings.Contains(text, "<script>alert(1)</script>") {
			t.Errorf("%s does not show the hostile text as text", p)
		}
		want := []string{
			"type=application/json id=index-data",
			"type=application/json id=index-chart-option",
			"src=assets/vendor/echarts/echarts.min.js",
			"src=assets/matrixgen.js",
		}
		if p != "index.html" {
			want = []string{
				"type=application/json id=prefill-chart-option",
				"type=application/json id=matrix-views",
				"type=application/json id=cell-details",
				"src=../../assets/vendor/echarts/echarts.min.js",
				"src=../../assets/matrixgen.js",
			}
		}
		if strings.Join(scripts, "|") != strings.Join(want, "|") {
			t.Errorf("%s scripts %q, want %q", p, scripts, want)
		}
	}
	// The index's chunk holds the hostile strings as JSON strings whose
	// markup characters are escaped: the page's script shows them as text.
	chunk, err := os.ReadFile(filepath.Join(out, "assets", "index", "chunk-0001.js"))
	if err != nil || !strings.HasPrefix(string(chunk), "matrixgenIndexChunk(1, [[") || strings.ContainsAny(string(chunk), "<>") {
		t.Errorf("the index's chunk (%v) holds markup unescaped:\n%s", err, chunk)
	}
}

// TestPagesCarryACSP: every page limits itself to the site's own scripts
// and styles.
func TestPagesCarryACSP(t *testing.T) {
	out := filepath.Join(t.TempDir(), "public")
	if code, _, stderr := matrixgenCmd(t, "build", "-runs", sampleRuns(t), "-o", out); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, p := range []string{"index.html", "runs/" + sampleID + "/index.html"} {
		page, _ := os.ReadFile(filepath.Join(out, p))
		doc, _ := html.Parse(bytes.NewReader(page))
		csp := ""
		var find func(*html.Node)
		find = func(n *html.Node) {
			if n.Type == html.ElementNode && n.Data == "meta" {
				var equiv, content string
				for _, a := range n.Attr {
					switch a.Key {
					case "http-equiv":
						equiv = a.Val
					case "content":
						content = a.Val
					}
				}
				if strings.EqualFold(equiv, "Content-Security-Policy") {
					csp = content
				}
			}
			for c := n.FirstChild; c != nil; c = c.NextSibling {
				find(c)
			}
		}
		find(doc)
		for _, want := range []string{"default-src 'none'", "script-src 'self'", "style-src 'self'"} {
			if !strings.Contains(csp, want) {
				t.Errorf("%s: CSP %q lacks %s", p, csp, want)
			}
		}
		if strings.Contains(csp, "unsafe-inline") || strings.Contains(csp, "unsafe-eval") {
			t.Errorf("%s: CSP %q allows inline code", p, csp)
		}
	}
}

func TestBuildConfigErrors(t *testing.T) {
	runs := sampleRuns(t)
	cfg := filepath.Join(t.TempDir(), "matrixgen.toml")
	writeFile(t, cfg, []byte("[site]\ntitle = \"Lab\"\ntheme = \"dark\"\n"))
	out := filepath.Join(t.TempDir(), "public")
	code, _, stderr := matrixgenCmd(t, "build", "-runs", runs, "-o", out, "-config", cfg)
	if code != 1 || !strings.Contains(stderr, `matrixgen.toml:3: unknown key "site.theme"`) {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
	if code, _, _ := matrixgenCmd(t, "build", "-runs", runs, "-o", out, "-config", cfg+".missing"); code != 1 {
		t.Error("a config file named on the command line but absent was not an error")
	}
	writeFile(t, cfg, []byte("[site]\ntitle = \"Lab & friends\"\n"))
	if code, _, stderr := matrixgenCmd(t, "build", "-runs", runs, "-o", out, "-config", cfg); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	index, _ := os.ReadFile(filepath.Join(out, "index.html"))
	if !bytes.Contains(index, []byte("<title>Lab &amp; friends</title>")) {
		t.Error("the site title from the config is not on the index")
	}
}

func TestBuildEmptyAndMissingRuns(t *testing.T) {
	empty := t.TempDir()
	out := filepath.Join(t.TempDir(), "public")
	code, stdout, stderr := matrixgenCmd(t, "build", "-runs", empty, "-o", out)
	if code != 0 || !strings.HasPrefix(stdout, "built 3 pages from 0 runs") || !strings.Contains(stdout, "no run files (*.json) in "+empty) {
		t.Errorf("empty runs folder: exit %d, %q %q; want the build, and where no run was found", code, stdout, stderr)
	}
	code, _, stderr = matrixgenCmd(t, "build", "-runs", filepath.Join(empty, "nope"), "-o", out)
	if code != 1 || !strings.Contains(stderr, "runs folder") {
		t.Errorf("missing runs folder: exit %d, %q", code, stderr)
	}
	// A run file named in capitals was left out unsaid (a newcomer's
	// UPPER.JSON, which validate accepted by name).
	writeFile(t, filepath.Join(empty, "UPPER.JSON"), []byte("{}"))
	code, stdout, _ = matrixgenCmd(t, "build", "-runs", empty, "-o", out)
	if code != 0 || !strings.Contains(stdout, "not read, as run files end in .json (lower case): UPPER.JSON") {
		t.Errorf("a run file named in capitals: exit %d, %q", code, stdout)
	}
}

// TestBuildWillNotReplaceOtherFolders points -o at folders matrixgen did not
// make, the runs folder among them: nothing in them may be lost.
func TestBuildWillNotReplaceOtherFolders(t *testing.T) {
	runs := sampleRuns(t)
	precious := t.TempDir()
	writeFile(t, filepath.Join(precious, "thesis.tex"), []byte("years of work"))
	for _, out := range []string{precious, runs} {
		code, _, stderr := matrixgenCmd(t, "build", "-runs", runs, "-o", out)
		if code != 1 || !strings.Contains(stderr, "refusing to replace") {
			t.Errorf("-o %s: exit %d, %q", out, code, stderr)
		}
	}
	if data, err := os.ReadFile(filepath.Join(precious, "thesis.tex")); err != nil || string(data) != "years of work" {
		t.Error("a file in the output folder was lost")
	}
	if _, err := os.Stat(filepath.Join(runs, sampleID+".json")); err != nil {
		t.Error("the run file was lost")
	}
}

func TestSchemaAndValidate(t *testing.T) {
	code, stdout, _ := matrixgenCmd(t, "schema")
	if code != 0 || !strings.Contains(stdout, `"$schema": "https://json-schema.org/draft/2020-12/schema"`) {
		t.Errorf("schema: exit %d, %.200s", code, stdout)
	}
	dir := t.TempDir()
	good := filepath.Join("..", "..", "runs", sampleID+".json")
	bad := filepath.Join(dir, "bad.json")
	writeFile(t, bad, []byte(`{"schema": 1, "tool": {"name": "t"}, "engine": {"name": "e"}, "model": {"name": "m"}, "decode": [{"context_tokens": 0, "concurrency": 1, "status": "valid"}]}`))
	code, stdout, stderr := matrixgenCmd(t, "validate", good, bad)
	if code != 1 || !strings.Contains(stdout, "ok  "+good) || !strings.Contains(stderr, "1 of 2 files is not a valid run") ||
		!strings.Contains(stderr, "bad.json:1:99: decode[0].context_tokens") || !strings.Contains(stderr, "decode[0].total_tok_s: required for a valid measurement") {
		t.Errorf("validate: exit %d\n%s\n%s", code, stdout, stderr)
	}
	// Every problem on a line of its own under the summary, indented as
	// build lists them.
	lines := strings.Split(strings.TrimSuffix(stderr, "\n"), "\n")
	for _, l := range lines[1:] {
		if !strings.HasPrefix(l, "  ") || !strings.Contains(l, "bad.json:") {
			t.Errorf("validate lists a problem as %q, want it indented under the summary:\n%s", l, stderr)
		}
	}
	if len(lines) < 3 {
		t.Errorf("validate listed %d problems, want at least 2:\n%s", len(lines)-1, stderr)
	}
	if code, _, stderr := matrixgenCmd(t, "validate", good); code != 0 || stderr != "" {
		t.Errorf("validate of the sample: exit %d, %s", code, stderr)
	}
}

// TestValidateAFolderAndSecrets: a folder is checked as build reads it
// (it was refused as "not a regular file"), a folder without run files is
// a failure, not a pass that checked nothing, and a run whose text holds
// a secret (written by hand, or by an older version) is named with its
// fields (found by a newcomer and an attacker).
func TestValidateAFolderAndSecrets(t *testing.T) {
	runs, empty := t.TempDir(), t.TempDir()
	sample, err := os.ReadFile(filepath.Join("..", "..", "runs", sampleID+".json"))
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(runs, "a.json"), sample)
	leak := strings.Replace(string(sample), `"launch_command": "`, `"launch_command": "HF_TOKEN=hf_abcdefghijklmnopqrstuvwxyz123456 `, 1)
	if leak == string(sample) {
		t.Fatal("the sample has no launch_command")
	}
	writeFile(t, filepath.Join(runs, "b.json"), []byte(leak))
	// A request's extra fields, written by hand: a map the walk of a
	// run's text does not reach (a key under api_key passed unwarned).
	writeFile(t, filepath.Join(runs, "c.json"), []byte(strings.Replace(string(sample), `"schema": 1,`,
		`"schema": 1, "request": {"extra": {"api_key": "sk-proj-Abc123XyZ789LmNoPqRsTuVwXyZ0123456789", "metadata": {"auth": ["Bearer sk-proj-Abc123XyZ789LmNoPqRsTuVwXyZ0123456789"]}, "top_k": 20}},`, 1)))
	code, stdout, stderr := matrixgenCmd(t, "validate", runs)
	if code != 0 || strings.Count(stdout, "ok  ") != 3 || !strings.Contains(stderr, "b.json: launch_command holds what looks like a secret") ||
		!strings.Contains(stderr, "c.json: request.extra.api_key, request.extra.metadata.auth hold what looks like a secret") ||
		strings.Contains(stderr, "a.json") || strings.Contains(stderr, "hf_abc") || strings.Contains(stderr, "Abc123") || strings.Contains(stderr, "top_k") {
		t.Errorf("a folder: exit %d\n%s%s", code, stdout, stderr)
	}
	if code, _, stderr := matrixgenCmd(t, "validate", empty); code != 1 || !strings.Contains(stderr, "nothing checked") {
		t.Errorf("an empty folder: exit %d, %s", code, stderr)
	}
	// An interrupted run is valid, and said to be incomplete.
	writeFile(t, filepath.Join(empty, "stopped.json"), []byte(strings.Replace(string(sample), `"schema": 1,`, `"schema": 1, "incomplete": true,`, 1)))
	if code, stdout, stderr := matrixgenCmd(t, "validate", empty); code != 0 || !strings.Contains(stdout, "stopped.json (incomplete: its sweep stopped") {
		t.Errorf("an incomplete run: exit %d, %s%s", code, stdout, stderr)
	}
	// Two runs valid apart whose ids differ only in case: a build refuses
	// them together, and validate passed them (found by an attacker).
	writeFile(t, filepath.Join(empty, "Stopped.json"), sample)
	code, stdout, stderr = matrixgenCmd(t, "validate", empty)
	if code != 1 || strings.Count(stdout, "ok  ") != 2 || !strings.Contains(stderr, "a build refuses these runs together") ||
		!strings.Contains(stderr, "Stopped.json and ") || !strings.Contains(stderr, "differ only in case") {
		t.Errorf("ids differing in case: exit %d\n%s%s", code, stdout, stderr)
	}
}

// TestSitePages: the methodology page, runs.csv with every measurement of
// every run, and a sitemap when the site knows its URL.
func TestSitePages(t *testing.T) {
	runs := sampleRuns(t)
	out := filepath.Join(t.TempDir(), "public")
	if code, _, stderr := matrixgenCmd(t, "build", "-runs", runs, "-o", out, "-base-url", "https://example.org/bench"); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	method, err := os.ReadFile(filepath.Join(out, "methodology.html"))
	if err != nil || !bytes.Contains(method, []byte("Time between tokens")) || !bytes.Contains(method, []byte("Over capacity")) {
		t.Errorf("methodology page: %v", err)
	}
	csvData, err := os.ReadFile(filepath.Join(out, "runs.csv"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(csvData)), "\n")
	if len(lines) != 74 || !strings.HasPrefix(lines[0], "run_id,model,gpu,engine") || !strings.HasPrefix(lines[1], sampleID+",NVIDIA-Nemotron") {
		t.Errorf("runs.csv: %d lines, %q / %q", len(lines), lines[0], lines[1])
	}
	sitemap, err := os.ReadFile(filepath.Join(out, "sitemap.xml"))
	if err != nil || !bytes.Contains(sitemap, []byte("<loc>https://example.org/bench/runs/"+sampleID+"/</loc>")) {
		t.Errorf("sitemap: %v\n%s", err, sitemap)
	}
	for _, p := range []string{"index.html", "methodology.html", "runs/" + sampleID + "/index.html"} {
		page, _ := os.ReadFile(filepath.Join(out, p))
		if !bytes.Contains(page, []byte(`assets/favicon.svg`)) {
			t.Errorf("%s has no favicon", p)
		}
	}
}

// TestComparePages: two runs of one model on one GPU get a compare page
// naming the pair, each run its compare data; a configured pair naming a
// missing run is an error.
func TestComparePages(t *testing.T) {
	runs := sampleRuns(t)
	e, err := runfile.Load(filepath.Join(runs, sampleID+".json"))
	if err != nil {
		t.Fatal(err)
	}
	faster := e.Run
	faster.StartedAt = time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	faster.Engine.Version = "0.31.0"
	for i, d := range faster.Decode {
		if d.TotalTokS != nil {
			faster.Decode[i].TotalTokS = new(*d.TotalTokS * 1.1)
		}
		if d.OutputTokens != nil { // its tokens too, as validate holds them together
			faster.Decode[i].OutputTokens = new(int(math.Round(float64(*d.OutputTokens) * 1.1)))
		}
	}
	data, _ := runfile.Encode(faster)
	writeFile(t, filepath.Join(runs, "faster.json"), data)
	out := filepath.Join(t.TempDir(), "public")
	code, stdout, stderr := matrixgenCmd(t, "build", "-runs", runs, "-o", out)
	if code != 0 || !strings.HasPrefix(stdout, "built 6 pages from 2 runs") {
		t.Fatalf("exit %d: %s %s", code, stdout, stderr)
	}
	page, err := os.ReadFile(filepath.Join(out, "compare", sampleID+"--faster", "index.html"))
	if err != nil {
		t.Fatal(err)
	}
	problems, _, _ := pageProblems(t, page)
	for _, p := range problems {
		t.Errorf("compare page: %s", p)
	}
	if !bytes.Contains(page, []byte(`data-a="`+sampleID+`" data-b="faster"`)) {
		t.Error("the compare page does not name its pair for its script")
	}
	// What the page's script draws from (TestCompareInABrowser draws it).
	data, err = os.ReadFile(filepath.Join(out, "runs", "faster", "compare.js"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"text":"0.31.0"`, `"text":"490.3"`, `"text":"Looped"`} {
		if !bytes.Contains(data, []byte(want)) {
			t.Errorf("faster's compare.js lacks %s", want)
		}
	}
	index, _ := os.ReadFile(filepath.Join(out, "index.html"))
	if !bytes.Contains(index, []byte(`href="compare/`+sampleID+`--faster/index.html"`)) {
		t.Error("the index does not link the comparison")
	}
	cfg := filepath.Join(t.TempDir(), "matrixgen.toml")
	writeFile(t, cfg, []byte("[[site.compare]]\na = \"faster\"\nb = \"missing\"\n"))
	if code, _, stderr := matrixgenCmd(t, "build", "-runs", runs, "-o", out, "-config", cfg); code != 1 || !strings.Contains(stderr, "names run missing, which") {
		t.Errorf("a pair naming a missing run: exit %d, %s", code, stderr)
	}
}

// TestBuildHidesLaunchCommandSecrets: a run file written by hand with a
// key in its launch command had it published in clear on its page, its
// run.json and compare.js, the build saying nothing (found by a newcomer).
// The site hides it and the build names the run.
func TestBuildHidesLaunchCommandSecrets(t *testing.T) {
	runs := t.TempDir()
	sample, err := os.ReadFile(filepath.Join("..", "..", "runs", sampleID+".json"))
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(runs, "clean.json"), sample)
	writeFile(t, filepath.Join(runs, "leak.json"), []byte(strings.Replace(string(sample), `"launch_command": "`,
		`"launch_command": "vllm serve m --api-key sk-proj-Abc123XyZ789LmNoPqRsTuVwXyZ0123456789 `, 1)))
	out := filepath.Join(t.TempDir(), "public")
	code, stdout, stderr := matrixgenCmd(t, "build", "-runs", runs, "-o", out)
	if code != 0 || !strings.Contains(stdout, "hid what looks like a secret in the launch command of 1 run on the site: leak") {
		t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
	}
	for _, f := range []string{"index.html", "run.json", "compare.js"} {
		data, err := os.ReadFile(filepath.Join(out, "runs", "leak", f))
		if err != nil || bytes.Contains(data, []byte("Abc123XyZ789")) {
			t.Errorf("runs/leak/%s holds the key (%v)", f, err)
		}
	}
	// A run without a secret is published byte for byte.
	if data, _ := os.ReadFile(filepath.Join(out, "runs", "clean", "run.json")); !bytes.Equal(data, sample) {
		t.Error("a run without a secret was not published as written")
	}
	// Built again, its pages reused, the run is named again: it was said
	// once, then never, while the run file still held the key.
	code, stdout, stderr = matrixgenCmd(t, "build", "-runs", runs, "-o", out)
	if code != 0 || !strings.Contains(stdout, "(2 runs unchanged: their pages kept)") || !strings.Contains(stdout, "hid what looks like a secret in the launch command of 1 run on the site: leak") {
		t.Errorf("built again: exit %d\n%s%s", code, stdout, stderr)
	}
	// Published to a bucket, the same (a publish said nothing).
	t.Setenv("XDG_CACHE_HOME", t.TempDir()) // where a publish keeps its site
	bucketSite := "file://" + filepath.ToSlash(t.TempDir()) + "/"
	code, stdout, stderr = matrixgenCmd(t, "build", "-runs", runs, "-o", bucketSite)
	if code != 0 || !strings.Contains(stdout, "hid what looks like a secret in the launch command of 1 run on the site: leak") {
		t.Errorf("published: exit %d\n%s%s", code, stdout, stderr)
	}
}
