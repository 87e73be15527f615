package config

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	c, err := Parse("m.toml", []byte(`
# a comment
[site]
title = "GPU lab"
description = "Numbers"
base_url = "https://example.org/bench/"
publish_server_address = true
`))
	if err != nil {
		t.Fatal(err)
	}
	if c.Site.Title != "GPU lab" || c.Site.BaseURL != "https://example.org/bench/" || c.Site.Description != "Numbers" || !c.Site.PublishServerAddress {
		t.Errorf("got %+v", c.Site)
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct{ name, doc, want string }{
		{"unknown key", "[site]\ntitle = \"x\"\n\ntitel = \"y\"\n", `m.toml:4: unknown key "site.titel"; did you mean "title"?`},
		{"misspelt key in a known table", "[sweep]\nduraton = \"5s\"\n", `m.toml:2: unknown key "sweep.duraton"; did you mean "duration"?`},
		{"unknown table", "[site]\ntitle = \"x\"\n[sight]\ntitle = 1\nx = 2\n", `m.toml:3: unknown key "sight"`},
		{"unknown dotted key", "site.colour = \"red\"\n", `m.toml:1: unknown key "site.colour"`},
		{"syntax", "[site\ntitle = 1\n", "to end table name"},
		{"bad value", "[site]\ntitle = nope\n", "m.toml:2:"},
		{"wrong type", "[site]\n\ntitle = 42\n", `m.toml:3: key "site.title":`},
		{"wrong type in an array of tables", "[site]\ntitle = \"x\"\n[[site.compare]]\na = 1\nb = \"y\"\n", `m.toml:3: key "site.compare": an array of tables does not fit`},
		{"wrong type after a table in an array of tables", "[[site.compare]]\na = \"x\"\n[site.compare.t]\nu = 1\n[sweep]\nmax_output = \"x\"\n",
			`m.toml:6: key "sweep.max_output": a TOML string does not fit`}, // misfit panicked on site.compare.t.u
		{"wrong type in a dotted key", "site.title.x = 1\n", `m.toml:1: key "site.title.x": a TOML integer does not fit`},
		{"bad base url", "[site]\nbase_url = \"javascript:alert(1)\"\n", "site.base_url: want an http:// or https:// URL"},
		{"relative base url", "[site]\nbase_url = \"/bench\"\n", "site.base_url"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("m.toml", []byte(tt.doc))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error = %v\nwant it to contain %q", err, tt.want)
			}
		})
	}
}

// TestUnknownTableReportedOnce checks keys inside an unknown table are not
// listed one by one after the table itself.
func TestUnknownTableReportedOnce(t *testing.T) {
	_, err := Parse("m.toml", []byte("[sight]\ntitle = 1\nx = 2\n"))
	if err == nil || strings.Count(err.Error(), "unknown key") != 1 {
		t.Errorf("want one unknown-key error, got %v", err)
	}
}

// TestFreeFormTablesNestAnything checks a table nested in a free-form
// value ([server] extra, chat_template_kwargs) is taken whole, as it is
// sent: BurntSushi/toml decodes it into the map and still lists its keys
// as undecoded. A misspelt key beside them is still unknown.
func TestFreeFormTablesNestAnything(t *testing.T) {
	doc := "[server]\nmodel = \"m\"\nextra = {bar = {baz = 2}, list = [{x = 1}]}\nchat_template_kwargs = {a = {b = true}}\n[server.extra.deep]\nk = 3\n"
	c, err := Parse("m.toml", []byte(doc))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	bar, _ := c.Server.Extra["bar"].(map[string]any)
	deep, _ := c.Server.Extra["deep"].(map[string]any)
	if bar["baz"] != int64(2) || deep["k"] != int64(3) || c.Server.ChatTemplateKwargs["a"] == nil {
		t.Errorf("nested tables not kept: extra %v, kwargs %v", c.Server.Extra, c.Server.ChatTemplateKwargs)
	}
	_, err = Parse("m.toml", []byte(strings.Replace(doc, "model", "modle", 1)+"[server.extra.deep.more]\nx = 1\n"))
	if err == nil || !strings.Contains(err.Error(), `unknown key "server.modle"`) || strings.Count(err.Error(), "unknown key") != 1 {
		t.Errorf("want only server.modle unknown, got %v", err)
	}
}

func TestLoadOptional(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "matrixgen.toml")
	if _, err := Load(missing, true); err != nil {
		t.Errorf("an absent optional config is an error: %v", err)
	}
	if _, err := Load(missing, false); err == nil {
		t.Error("an absent config named on the command line was not an error")
	}
	if err := os.WriteFile(missing, []byte("[site]\ntitle = \"x\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if c, err := Load(missing, true); err != nil || c.Site.Title != "x" {
		t.Errorf("Load = %+v, %v", c, err)
	}
}

// FuzzParse feeds the config loader anything: no panics, and every error
// names the file.
func FuzzParse(f *testing.F) {
	f.Add([]byte("[site]\ntitle = \"x\"\nbase_url = \"https://a.b/\"\n"))
	f.Add([]byte("[[site]]\n"))
	f.Add([]byte("site = 1\n"))
	f.Add([]byte("[site]\ntitle = \"\"\"\nmulti\n\"\"\"\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		_, err := Parse("f.toml", data)
		if err != nil && !strings.HasPrefix(err.Error(), "f.toml") {
			t.Errorf("error does not name the file: %v", err)
		}
	})
}

// TestExampleConfig keeps examples/matrixgen.toml loading, with the sample
// run's sweep, and no trap for a newcomer: no model another server may not
// serve, and no hardware described that a copy of it would claim. Its
// [describe] lines, uncommented, still load.
func TestExampleConfig(t *testing.T) {
	name := filepath.Join("..", "examples", "matrixgen.toml")
	c, err := Load(name, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Sweep.Contexts) != 8 || len(c.Sweep.Concurrency) != 8 || c.Sweep.Duration.Seconds() != 30 || c.Sweep.MaxOutput != 4096 {
		t.Errorf("the example is not the sample run's sweep: %+v", c.Sweep)
	}
	if c.Server.APIKeyEnv != "VLLM_API_KEY" || c.Server.Model != "" || c.Describe != (Describe{}) {
		t.Errorf("server %+v, describe %+v", c.Server, c.Describe)
	}
	data, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	_, describe, _ := strings.Cut(string(data), "[describe]")
	uncommented := strings.ReplaceAll(string(data), describe, strings.ReplaceAll(describe, "\n# ", "\n"))
	c, err = Parse(name+" (describe uncommented)", []byte(uncommented))
	if err != nil {
		t.Fatal(err)
	}
	if d := c.Describe; d.GPU == "" || d.LaunchCommand == "" {
		t.Errorf("the example's [describe], uncommented: %+v", d)
	}
}

// TestFileOnlyErrors: what the file alone can get wrong is placed at its
// line by Parse; the ranges of [server] and [sweep] are the runner's
// (cmd/matrixgen's TestRunSettingsErrorsArePlaced).
func TestFileOnlyErrors(t *testing.T) {
	tests := []struct{ doc, want string }{
		{"[sweep]\nduration = \"0s\"\n", "m.toml:2: sweep.duration: must be positive"},
		{"[sweep]\nduration = \"soon\"\n", `m.toml:2:13: key "sweep.duration"`},
		{"[sweep]\nmax_output = 0\n", "m.toml:2: sweep.max_output"},
		{"[sweep]\n\nrepeats = 0\n", "m.toml:3: sweep.repeats"},
		{"[sweep]\nidle_timeout = \"0s\"\n", "m.toml:2: sweep.idle_timeout"},
		{"[server]\nkey = \"sk-1\"\n", `m.toml:2: unknown key "server.key"`},
	}
	for _, tt := range tests {
		_, err := Parse("m.toml", []byte(tt.doc))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%q: error %v\nwant it to contain %q", tt.doc, err, tt.want)
		}
	}
}

func TestSet(t *testing.T) {
	c, err := Parse("m.toml", []byte("[sweep]\ncache_mode = \"shared\"\nconcurrency = [1, 2]\n"))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Set([]string{"sweep.cache_mode=distinct", "sweep.concurrency=[4, 8]", "server.temperature=0", "describe.gpu=RTX 4090"}); err != nil {
		t.Fatal(err)
	}
	if c.Sweep.CacheMode != "distinct" || len(c.Sweep.Concurrency) != 2 || c.Sweep.Concurrency[0] != 4 ||
		c.Server.Temperature == nil || *c.Server.Temperature != 0 || c.Describe.GPU != "RTX 4090" {
		t.Errorf("after -set: %+v %+v %+v", c.Sweep, c.Server, c.Describe)
	}
	for _, bad := range []string{"cache_mode=x", "sweep.nope=1", "sweep.concurrency=\"0\"", "sweep.duration=soon", "sweep.duration=[1]", "sweep.duration=\"5s",
		"sweep.duration=0s", "sweep.max_output=0", "sweep.repeats=0"} { // a zero typed is no default
		err := c.Set([]string{bad})
		if err == nil {
			t.Errorf("-set %s was accepted", bad)
			continue
		}
		// The override is made into a document of two lines the person
		// never wrote: its errors name the override, not a line of it.
		if msg := err.Error(); regexp.MustCompile(regexp.QuoteMeta(bad) + `:\d`).MatchString(msg) {
			t.Errorf("-set %s: %q places the error at a line of the override", bad, msg)
		}
	}
}

// TestHostileConfigsAreBoundedBeforeDecoding: a megabyte of nested arrays
// took the TOML decoder 13 s and 1 GB; nested inline tables had not
// finished after ten minutes; a key of 300,000 dotted parts neither.
// Generated nestings of arrays, inline tables and dotted keys past the
// bound are refused with their line before the decoder sees them; the
// same brackets inside strings and comments, and nesting within the bound,
// are not; a file past the size bound is refused with the bound.
func TestHostileConfigsAreBoundedBeforeDecoding(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 8))
	opens := []string{"[", "{a=", "{ a = ", "[ ", "[1,", "{x.y="}
	for range 500 {
		deep := maxNesting + 1 + rng.IntN(5000)
		var b strings.Builder
		b.WriteString("[site]\ntitle = \"t\"\n")
		line := 3 + rng.IntN(3)
		for range line - 3 {
			b.WriteString("# a comment [[[{{{\n")
		}
		switch rng.IntN(3) {
		case 0:
			b.WriteString("x = ")
			for range deep {
				b.WriteString(opens[rng.IntN(len(opens))])
			}
		case 1:
			for range deep {
				b.WriteString("k.")
			}
			b.WriteString("v = 1")
		default:
			b.WriteString("[")
			for range deep {
				b.WriteString(`"q".`)
			}
			b.WriteString("t]")
		}
		_, err := Parse("x.toml", []byte(b.String()))
		if want := fmt.Sprintf("x.toml:%d: arrays and inline tables nested", line); err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("%.60q…: %v, want %q", b.String(), err, want)
		}
	}
	shallow := "[site]\ntitle = \"" + strings.Repeat("[{", 100) + "\"\n" + "description = '''" + strings.Repeat("[\n", 100) + "'''\n" +
		"# " + strings.Repeat("{", 100) + "\n[sweep]\ncontexts = [\"8K\", \"16K\"]\n"
	if _, err := Parse("x.toml", []byte(shallow)); err != nil {
		t.Errorf("a config within the bounds: %v", err)
	}
	for _, within := range []string{"x = " + strings.Repeat("[", maxNesting), strings.Repeat("k.", maxNesting-1) + "v = 1", "x = " + strings.Repeat("{a=", maxNesting)} {
		if line := tooDeep([]byte(within)); line != 0 {
			t.Errorf("%.40q… (within the bound) refused at line %d", within, line)
		}
	}
	big := filepath.Join(t.TempDir(), "big.toml")
	os.WriteFile(big, []byte("# "+strings.Repeat("x", maxFileBytes)+"\n"), 0o644)
	if _, err := Load(big, false); err == nil || !strings.Contains(err.Error(), "1048576") {
		t.Errorf("a config past the size bound: %v", err)
	}
}

// TestSiteTextIsBounded: a title of a megabyte went on every page (60
// runs made a site of 246 MB). The title and description are bounded in
// characters, each length around the bound tried, in one and in
// four-byte characters.
func TestSiteTextIsBounded(t *testing.T) {
	for _, c := range []struct {
		key  string
		most int
	}{{"title", maxTitle}, {"description", maxDescription}} {
		for _, char := range []string{"T", "𝕋"} {
			for n := c.most - 1; n <= c.most+1; n++ {
				_, err := Parse("m.toml", []byte("[site]\n"+c.key+" = \""+strings.Repeat(char, n)+"\"\n"))
				if over := n > c.most; over != (err != nil) || over && !strings.Contains(err.Error(), "m.toml:2: site."+c.key) {
					t.Errorf("%s of %d %q: %v", c.key, n, char, err)
				}
			}
		}
	}
}

// TestAMisfitIsReportedAlone: a value that does not fit stops the reading
// of the file; its error is the one reported, never followed by an
// "unknown key" for a key the decoder matched (case aside) or the same
// key again; a misspelt key's suggestion finds its table whatever the
// table's case.
func TestAMisfitIsReportedAlone(t *testing.T) {
	for _, tt := range []struct{ name, doc, want string }{
		{"table in another case", "[Sweep]\nConcurrency = [1]\nduration = 5\n", `key "Sweep.duration"`},
		{"a table where a value goes", "[sweep.stall_timeout]\nx = 1\n", `key "sweep.stall_timeout.x"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("m.toml", []byte(tt.doc))
			if err == nil || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "unknown key") || strings.Contains(err.Error(), "\n") {
				t.Errorf("error %v\nwant one problem, about %s", err, tt.want)
			}
		})
	}
	_, err := Parse("m.toml", []byte("[Sweep]\nduraton = \"5s\"\n"))
	if err == nil || !strings.Contains(err.Error(), `unknown key "Sweep.duraton"; did you mean "duration"?`) {
		t.Errorf("error %v\nwant the misspelt key and its suggestion", err)
	}
}

// TestInFreeForm checks the walk along an undecoded key: inside an
// interface that holds it, yes; a map's key looked up, a map's struct
// values checked as structs; a key the value lacks (a table the decoder
// could not put there) is unknown.
func TestInFreeForm(t *testing.T) {
	type inner struct {
		Known int `toml:"known"`
	}
	type doc struct {
		Free  map[string]any   `toml:"free"`
		Typed map[string]inner `toml:"typed"`
		Plain inner            `toml:"plain"`
		Any   any              `toml:"any"`
		Ptr   *map[string]any  `toml:"ptr"`
		Empty map[string]any   `toml:"empty"`
	}
	m := map[string]any{"a": map[string]any{"b": map[string]any{"c": int64(1)}, "list": []any{map[string]any{"x": int64(1)}}}}
	d := &doc{Free: m, Typed: map[string]inner{"a": {}}, Any: m, Ptr: &m}
	for key, want := range map[string]bool{
		"free.a": true, "free.a.b.c": true, "free.a.list.x": true, "any.a.b": true, "ptr.a.b.c": true,
		"free.z": false, "free.a.z": false, "empty.a": false, "empty.a.b": false,
		"typed.a.known": false, "typed.a.unknown": false, "typed.b.known": false, "plain.x": false, "other": false, "other.x": false,
	} {
		if got := inFreeForm(reflect.ValueOf(d), strings.Split(key, ".")); got != want {
			t.Errorf("inFreeForm(%s) = %v, want %v", key, got, want)
		}
	}
}

// TestAWrongShapedExtraIsUnknown: a table BurntSushi/toml could not put
// into [server] extra (an array of tables) is not in it, so its keys are
// unknown, with their line; and a mistake is reported once, at the first
// unknown name of its path, not again for the keys of a table under it.
func TestAWrongShapedExtraIsUnknown(t *testing.T) {
	for doc, want := range map[string]string{
		"[[server.extra]]\na = 1\n":            `m.toml:2: unknown key "server.extra.a"`,
		"[server]\nextra = [{a = {b = 1}}]\n":  `unknown key "server.extra.a"`,
		"[server]\nextr = {bar = {baz = 2}}\n": `m.toml:2: unknown key "server.extr"; did you mean "extra"?`,
		"[foo]\na = {b = {c = 1}}\n":           `m.toml:1: unknown key "foo"`,
	} {
		_, err := Parse("m.toml", []byte(doc))
		if err == nil || !strings.Contains(err.Error(), want) || strings.Count(err.Error(), "unknown key") != 1 {
			t.Errorf("%q: got %v, want only %q", doc, err, want)
		}
	}
}

// TestAFreeFormTableMustBeATable: BurntSushi/toml leaves [server] extra
// empty, without an error, when the file gives it a value that is no
// table, so extra = 5 sent nothing and said nothing. It is refused at
// its line; a table, inline or not, is taken.
func TestAFreeFormTableMustBeATable(t *testing.T) {
	for doc, want := range map[string]string{
		"[server]\nextra = 5\n":                               `m.toml:2: server.extra: want a table, got an integer`,
		"[server]\nextra = [1, 2]\n":                          `m.toml:2: server.extra: want a table, got an array`,
		"[server]\nchat_template_kwargs = \"thinking off\"\n": `m.toml:2: server.chat_template_kwargs: want a table, got a string`,
		"[server]\nextra = true\n":                            `server.extra: want a table, got a boolean`,
	} {
		if _, err := Parse("m.toml", []byte(doc)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: got %v, want %q", doc, err, want)
		}
	}
	for _, doc := range []string{"[server]\nextra = {a = 1}\n", "[server.extra]\na = 1\n", "server.extra.a = 1\n", "[server]\nchat_template_kwargs = {}\n"} {
		if _, err := Parse("m.toml", []byte(doc)); err != nil {
			t.Errorf("%q: %v", doc, err)
		}
	}
}
