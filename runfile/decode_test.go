package runfile

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/matrixgen/matrixgen"
)

const sampleRun = "../runs/nemotron-3.5-lightning-nvfp4-rtx-pro-6000-vllm.json"

func TestSampleRunLoads(t *testing.T) {
	e, err := Load(sampleRun)
	if err != nil {
		t.Fatal(err)
	}
	r := e.Run
	if len(r.Prefill) != 9 || len(r.Decode) != 64 {
		t.Fatalf("sample has %d prefill rows and %d decode cells, want 9 and 64", len(r.Prefill), len(r.Decode))
	}
	if len(e.Notes) == 0 {
		t.Error("the sample's notes were not loaded")
	}
	count := map[matrixgen.Status]int{}
	for _, d := range r.Decode {
		count[d.Status]++
	}
	want := map[matrixgen.Status]int{matrixgen.StatusValid: 34, matrixgen.StatusLooped: 12, matrixgen.StatusQueued: 1, matrixgen.StatusOverCapacity: 17}
	for s, n := range want {
		if count[s] != n {
			t.Errorf("%d %s cells, want %d", count[s], s, n)
		}
	}
	if best, _ := r.BestSingleStream(); best != 445.7 {
		t.Errorf("best single stream = %v, want 445.7", best)
	}
	if peak, _ := r.PeakTotal(); peak != 6904 {
		t.Errorf("peak total = %v, want 6904", peak)
	}
	if !strings.Contains(r.LaunchCommand, "--api-key <redacted>") {
		t.Error("launch command lost its <redacted>")
	}
}

// TestEncodeRoundTrip checks that what Encode writes decodes to the same
// bytes again: the run.json download is itself a valid run file.
func TestEncodeRoundTrip(t *testing.T) {
	e, err := Load(sampleRun)
	if err != nil {
		t.Fatal(err)
	}
	first, err := Encode(e.Run)
	if err != nil {
		t.Fatal(err)
	}
	back, err := Decode("encoded.json", first)
	if err != nil {
		t.Fatalf("encoded run does not decode: %v", err)
	}
	second, _ := Encode(back)
	if !bytes.Equal(first, second) {
		t.Error("encoding is not stable across a round trip")
	}
}

// minimal is the smallest valid run; cases below break it one way each.
const minimal = `{
  "schema": 1,
  "tool": {"name": "t"},
  "engine": {"name": "vllm"},
  "model": {"name": "m"},
  "hardware": {},
  "sweep": {"contexts": [8192], "concurrency": [1, 2]},
  "decode": [
    {"context_tokens": 8192, "concurrency": 1, "status": "valid", "total_tok_s": 10}
  ]
}`

func TestDecodeErrors(t *testing.T) {
	tests := []struct {
		name, doc string
		want      string // the error must contain this
	}{
		{"syntax", strings.Replace(minimal, `"name": "t"`, `"name" "t"`, 1), "f.json:3:19: tool.name: invalid character"},
		{"truncated", minimal[:40], "unexpected end of file"},
		{"unknown field", strings.Replace(minimal, `"hardware": {}`, `"hardware": {"gpus": 2}`, 1), "f.json:6:16: hardware.gpus: unknown field"},
		{"a misspelt field", strings.Replace(minimal, `"total_tok_s": 10`, `"total_tok_s": 10, "concurency": 2`, 1), `f.json:9:86: decode[0].concurency: unknown field; did you mean "concurrency"?`},
		{"case-folded field", strings.Replace(minimal, `"schema"`, `"Schema"`, 1), "f.json:2:3: Schema: unknown field"},
		{"duplicate key", strings.Replace(minimal, `"hardware": {}`, `"hardware": {}, "hardware": {}`, 1), "f.json:6:19: hardware: field appears twice"},
		{"wrong type", strings.Replace(minimal, `"total_tok_s": 10`, `"total_tok_s": "fast"`, 1), "f.json:9:67: decode[0].total_tok_s: want a number, got a string"},
		{"fraction for a count", strings.Replace(minimal, `"concurrency": 1,`, `"concurrency": 1.5,`, 1), "decode[0].concurrency: want a whole number"},
		{"missing required", strings.Replace(minimal, `"model": {"name": "m"}`, `"model": {}`, 1), "f.json:5:3: model.name: required"},
		{"missing schema", strings.Replace(minimal, `"schema": 1,`, ``, 1), "schema: required: the run file format's version (this build reads 1)"},
		{"future schema", strings.Replace(minimal, `"schema": 1`, `"schema": 2`, 1), "f.json:2:3: schema: unsupported version 2"},
		{"negative tok/s", strings.Replace(minimal, `"total_tok_s": 10`, `"total_tok_s": -1`, 1), "f.json:9:67: decode[0].total_tok_s: must not be negative"},
		{"concurrency 0", strings.Replace(minimal, `"concurrency": 1,`, `"concurrency": 0,`, 1), "decode[0].concurrency: must be at least 1, got 0"},
		{"unknown status", strings.Replace(minimal, `"valid"`, `"fast"`, 1), `f.json:9:48: decode[0].status: unknown status "fast"`},
		{"valid without figure", strings.Replace(minimal, `, "total_tok_s": 10`, ``, 1), "decode[0].total_tok_s: required for a valid measurement"},
		{"duplicate cell", strings.Replace(minimal, `"total_tok_s": 10}`, `"total_tok_s": 10},
    {"context_tokens": 8192, "concurrency": 1, "status": "looped"}`, 1), "f.json:10:5: decode[1]: cell 8K × 1 appears twice (first as decode[0])"},
		{"prefill measured twice", strings.Replace(minimal, `"decode": [`, `"prefill": [
    {"context_tokens": 8192, "prompt_tokens": 8192, "status": "valid", "prompt_tok_s": 1000, "ttft_ms": 8192},
    {"context_tokens": 8192, "prompt_tokens": 8192, "status": "valid", "prompt_tok_s": 1000, "ttft_ms": 8192}],
  "decode": [`, 1), "f.json:10:6: prefill[1].context_tokens: context 8K is measured twice (first as prefill[0])"},
		{"context outside sweep", strings.Replace(minimal, `{"context_tokens": 8192,`, `{"context_tokens": 16384,`, 1), "decode[0].context_tokens: 16K is not in sweep.contexts"},
		{"unsorted sweep", strings.Replace(minimal, `[1, 2]`, `[2, 1]`, 1), "sweep.concurrency: must be ascending"},
		{"trailing data", minimal + " {}", "unexpected data after the run object"},
		{"huge number", strings.Replace(minimal, `"total_tok_s": 10`, `"total_tok_s": 1e999`, 1), "decode[0].total_tok_s: want a number"},
		{"not an object", `[1, 2]`, "f.json:1:1: want an object, got an array"},
		// A request's free-form maps are read as strictly as the rest; an
		// object there is what is wanted, never a problem of its own.
		{"request name twice", strings.Replace(minimal, `"hardware": {}`, `"hardware": {}, "request": {"extra": {"top_k": 1, "top_k": 2}}`, 1), "request.extra"},
		{"request kwargs not an object", strings.Replace(minimal, `"hardware": {}`, `"hardware": {}, "request": {"chat_template_kwargs": [true]}`, 1), "f.json:6:31: request.chat_template_kwargs: want an object, got an array"},
		{"request beside another problem", strings.Replace(strings.Replace(minimal, `"hardware": {}`, `"hardware": {}, "request": {"extra": {"a": {"b": [1, null, "x"]}}}`, 1), `"total_tok_s": 10`, `"total_tok_s": -1`, 1), "decode[0].total_tok_s: must not be negative"},
		{"request temperature below 0", strings.Replace(minimal, `"hardware": {}`, `"hardware": {}, "request": {"temperature": -0.5}`, 1), "f.json:6:31: request.temperature: must not be negative, got -0.5"},
		{"bad time", strings.Replace(minimal, `"schema": 1,`, `"schema": 1, "started_at": "yesterday",`, 1), "f.json:2:16: started_at:"},
		{"deep nesting", strings.Replace(minimal, `"hardware": {}`, `"hardware": {"gpu": `+strings.Repeat("[", 100000)+strings.Repeat("]", 100000)+`}`, 1), "f.json:6:16: hardware.gpu: want a string, got an array"},
		{"invalid utf-8", strings.Replace(minimal, `"m"`, "\"m\xff\"", 1), "f.json:5:23: model.name: invalid UTF-8"},
		{"interval upside down", strings.Replace(minimal, `"total_tok_s": 10`, `"total_tok_s": 10, "interval": {"low": 11, "high": 9, "level": 0.95}`, 1), "decode[0].interval: low 11 is above high 9"},
		{"interval of certainty", strings.Replace(minimal, `"total_tok_s": 10`, `"total_tok_s": 10, "interval": {"low": 9, "high": 11, "level": 1}`, 1), "decode[0].interval.level: a confidence from 0.5"},
		{"interval without level", strings.Replace(minimal, `"total_tok_s": 10`, `"total_tok_s": 10, "interval": {"low": 9, "high": 11}`, 1), "decode[0].interval.level: a confidence from 0.5"},
		// What an attack found validate let through, each placed and named:
		{"interval all below 0", strings.Replace(minimal, `"total_tok_s": 10`, `"total_tok_s": 10, "interval": {"low": -1e12, "high": -1, "level": 0.95}`, 1),
			"f.json:9:99: decode[0].interval.low: an interval of a rate cannot reach below 0, got -1e+12"},
		{"interval high below 0", strings.Replace(minimal, `"total_tok_s": 10`, `"total_tok_s": 10, "interval": {"low": 0, "high": -1, "level": 0.95}`, 1),
			"decode[0].interval.high: an interval of a rate cannot reach below 0, got -1"},
		{"level of 1e-300", strings.Replace(minimal, `"total_tok_s": 10`, `"total_tok_s": 10, "interval": {"low": 9, "high": 11, "level": 1e-300}`, 1),
			"f.json:9:121: decode[0].interval.level: a confidence from 0.5 (the median of 2 repeats) to below 1 (0.95), got 1e-300"},
		{"level below the median of 2", strings.Replace(minimal, `"total_tok_s": 10`, `"total_tok_s": 10, "interval": {"low": 9, "high": 11, "level": 0.49}`, 1),
			"decode[0].interval.level: a confidence from 0.5"},
		{"interval on a repeat", strings.Replace(strings.Replace(minimal, `"total_tok_s": 10}`,
			`"total_tok_s": 10, "repeats": [{"context_tokens": 8192, "concurrency": 1, "status": "valid", "total_tok_s": 10, "interval": {"low": 9, "high": 11, "level": 0.95}}]}`, 1),
			`"concurrency": [1, 2]}`, `"concurrency": [1, 2], "repeats": 2}`, 1),
			"f.json:9:179: decode[0].repeats[0].interval: a repeat carries no interval"},
		{"figure not the median repeat's", strings.Replace(strings.Replace(minimal, `"total_tok_s": 10}`,
			`"total_tok_s": 10, "repeats": [{"context_tokens": 8192, "concurrency": 1, "status": "valid", "total_tok_s": 8}, {"context_tokens": 8192, "concurrency": 1, "status": "valid", "total_tok_s": 9}]}`, 1),
			`"concurrency": [1, 2]}`, `"concurrency": [1, 2], "repeats": 2}`, 1),
			"f.json:9:67: decode[0].total_tok_s: 10, but its median repeat, repeats[0], is 8: a repeated cell's figures are its median repeat's"},
		{"latency not the median repeat's", strings.Replace(strings.Replace(minimal, `"total_tok_s": 10}`,
			`"total_tok_s": 10, "ttft_ms": {"p50": 1}, "repeats": [{"context_tokens": 8192, "concurrency": 1, "status": "valid", "total_tok_s": 10, "ttft_ms": {"p50": 300}}, {"context_tokens": 8192, "concurrency": 1, "status": "valid", "total_tok_s": 11}]}`, 1),
			`"concurrency": [1, 2]}`, `"concurrency": [1, 2], "repeats": 2}`, 1),
			"decode[0].ttft_ms: is not its median repeat's, repeats[0]: a repeated cell's figures are its median repeat's"},
		{"status not the median repeat's", strings.Replace(strings.Replace(minimal, `"total_tok_s": 10}`,
			`"total_tok_s": 10, "repeats": [{"context_tokens": 8192, "concurrency": 1, "status": "looped", "total_tok_s": 10}]}`, 1),
			`"concurrency": [1, 2]}`, `"concurrency": [1, 2], "repeats": 2}`, 1),
			"decode[0].status: valid, but its median repeat, repeats[0], is looped"},
		{"interval of no figure", strings.Replace(minimal, `"status": "valid", "total_tok_s": 10`, `"status": "error", "interval": {"low": 9, "high": 11, "level": 0.95}`, 1), "decode[0].interval: an interval of no figure"},
		{"interval past any figure", strings.Replace(minimal, `"total_tok_s": 10`, `"total_tok_s": 10, "interval": {"low": 9, "high": 1e300, "level": 0.95}`, 1), "decode[0].interval.high: must be a finite number"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Decode("f.json", []byte(tt.doc))
			if err == nil {
				t.Fatalf("no error; want one containing %q", tt.want)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error = %q\nwant it to contain %q", err, tt.want)
			}
		})
	}
}

func TestMinimalDecodes(t *testing.T) {
	r, err := Decode("f.json", []byte(minimal))
	if err != nil {
		t.Fatal(err)
	}
	if got := r.ConcurrencyLevels(); len(got) != 2 {
		t.Errorf("columns = %v, want [1 2] from the sweep", got)
	}
}

// TestIntervalMayMissItsFigure: a stored interval is of the samples' mean
// (or the repeats' median), which a cell's figure need not be, so a figure
// outside its interval is read as it is.
func TestIntervalMayMissItsFigure(t *testing.T) {
	doc := strings.Replace(minimal, `"total_tok_s": 10`, `"total_tok_s": 10, "interval": {"low": 10.5, "high": 19.5, "level": 0.875}`, 1)
	r, err := Decode("f.json", []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := *r.Decode[0].Interval, (matrixgen.Interval{Low: 10.5, High: 19.5, Level: 0.875}); got != want {
		t.Errorf("interval = %+v, want %+v", got, want)
	}
}

// TestDecodeListsEveryProblem checks that one file's problems all come back,
// each placed, not just the first.
func TestDecodeListsEveryProblem(t *testing.T) {
	doc := strings.Replace(minimal, `"total_tok_s": 10`, `"total_tok_s": -1, "avg_active": -2`, 1)
	doc = strings.Replace(doc, `"model": {"name": "m"}`, `"model": {}`, 1)
	_, err := Decode("f.json", []byte(doc))
	var joined interface{ Unwrap() []error }
	if !errors.As(err, &joined) || len(joined.Unwrap()) != 3 {
		t.Fatalf("want 3 joined problems, got %v", err)
	}
	for _, e := range joined.Unwrap() {
		var de *Error
		if !errors.As(e, &de) || de.Line == 0 || de.Field == "" {
			t.Errorf("problem %q has no line or field", e)
		}
	}
}

// TestProblemsHideNoOthers: an unknown field once hid a file's other errors.
// Refused values, unknown and repeated fields and impossible figures are
// all listed, each at its place, in file order; a value the file got wrong
// is reported once, not again by the checks of what it would have held.
func TestProblemsHideNoOthers(t *testing.T) {
	doc := strings.Replace(minimal, `"hardware": {}`, `"hardware": {"gpus": 2, "vram_gb": "96", "os": "linux", "os": "mac"}`, 1)
	doc = strings.Replace(doc, `"concurrency": [1, 2]`, `"concurrency": [1, 2], "contexts": [1]`, 1)
	doc = strings.Replace(doc, `"status": "valid", "total_tok_s": 10`, `"status": "fast", "total_tok_s": -1, "psu": "1600W"`, 1)
	_, err := Decode("f.json", []byte(doc))
	want := []string{
		"f.json:6:16: hardware.gpus: unknown field",
		`f.json:6:27: hardware.vram_gb: want a number, got a string`,
		"f.json:6:59: hardware.os: field appears twice",
		"f.json:7:56: sweep.contexts: field appears twice",
		`f.json:9:48: decode[0].status: unknown status "fast"`,
		"f.json:9:66: decode[0].total_tok_s: must not be negative, got -1",
		"f.json:9:85: decode[0].psu: unknown field",
	}
	if err == nil {
		t.Fatal("no error")
	}
	lines := strings.Split(err.Error(), "\n")
	if len(lines) != len(want) {
		t.Fatalf("%d problems, want %d:\n%v", len(lines), len(want), err)
	}
	for i, w := range want {
		if !strings.HasPrefix(lines[i], w) {
			t.Errorf("problem %d = %q\nwant it to start %q", i, lines[i], w)
		}
	}
}

// TestProblemsAreCapped: a file of a hundred thousand unknown fields
// reports the first matrixgen.MaxProblems of them, in file order, and the reading
// stops there rather than placing every one.
func TestProblemsAreCapped(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"schema": 1`)
	for i := range 100000 {
		fmt.Fprintf(&b, `, "x%d": [1]`, i)
	}
	b.WriteString("}")
	_, err := Decode("f.json", []byte(b.String()))
	lines := strings.Split(fmt.Sprint(err), "\n")
	if len(lines) != matrixgen.MaxProblems || !strings.HasPrefix(lines[0], "f.json:1:15: x0: unknown field") || !strings.Contains(lines[matrixgen.MaxProblems-1], fmt.Sprintf("x%d: unknown field", matrixgen.MaxProblems-1)) {
		t.Errorf("%d problems:\n%v", len(lines), err)
	}
}

// TestDecodeReadsWhatJSONSays: two bugs of the hand-written decoder. The
// smallest int64 is a whole number like any other, and a string's \u
// escapes mean their characters, in a time as anywhere.
func TestDecodeReadsWhatJSONSays(t *testing.T) {
	doc := strings.Replace(minimal, `"schema": 1,`, `"schema": 1, "started_at": "2026\u002d01-02T03:04:05\u005a",`, 1)
	doc = strings.Replace(doc, `"status": "valid",`, `"status": "valid", "loop": {"unit": "\u0041", "start_offset": `+strconv.Itoa(math.MinInt)+`},`, 1)
	r, err := Decode("f.json", []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	if want := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC); !r.StartedAt.Equal(want) {
		t.Errorf("started_at = %v, want %v", r.StartedAt, want)
	}
	if l := r.Decode[0].Loop; l.StartOffset != math.MinInt || l.Unit != "A" {
		t.Errorf("loop = %+v, want unit A at %d", l, math.MinInt)
	}
}

// TestLoadFileNamesEachBadFile: every run file of a folder is read on its
// own, a bad one refused in an error naming it, the good one read.
func TestLoadFileNamesEachBadFile(t *testing.T) {
	dir := t.TempDir()
	write := func(name, doc string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("good.json", minimal)
	write("bad-one.json", "{")
	write("bad-two.json", strings.Replace(minimal, `"hardware": {}`, `"hardware": {"x": 1}`, 1))
	write("bad id!.json", minimal)
	names, err := Files(dir)
	if err != nil || len(names) != 4 {
		t.Fatalf("Files = %v, %v; want 4 files", names, err)
	}
	for _, name := range names {
		e, err := Load(name)
		switch base := filepath.Base(name); {
		case base == "good.json":
			if err != nil || e.ID != "good" {
				t.Errorf("good.json: %+v, %v", e.ID, err)
			}
		case err == nil || !strings.Contains(err.Error(), base):
			t.Errorf("%s: error %v does not name the file", base, err)
		}
	}
}

// TestLocate: a JSON pointer's place in a document and its path as errors
// name it, for members, elements, escaped and odd names, and pointers that
// lead past what the document holds or past a syntax error.
func TestLocate(t *testing.T) {
	doc := "{\n  \"a\": {\"b\": [10, {\"c\": 1}]},\n  \"x\\u002fy~\": [], \"a\": 2\n}"
	for _, tt := range []struct {
		ptr       jsontext.Pointer
		line, col int
		field     string
	}{
		{"", 1, 1, ""},
		{"/a", 2, 3, "a"},
		{"/a/b/0", 2, 15, "a.b[0]"},
		{"/a/b/1/c", 2, 20, "a.b[1].c"},
		{"/a/b/1/d", 2, 19, "a.b[1].d"},    // missing: at the object that lacks it
		{"/a/b/7", 2, 9, "a.b[7]"},         // past the end of the array: at the array's member
		{"/x~1y~0", 3, 3, "x/y~"},          // escaped in the document and in the pointer
		{"/missing/3", 1, 1, "missing[3]"}, // nothing of it there: at the document
	} {
		off, field := Locate([]byte(doc), tt.ptr)
		if line, col := LineCol([]byte(doc), off); line != tt.line || col != tt.col || field != tt.field {
			t.Errorf("Locate(%q) = %d:%d %q, want %d:%d %q", tt.ptr, line, col, field, tt.line, tt.col, tt.field)
		}
	}
	broken := `{"a": [1, 2, {"b" 3}]}`
	if off, field := Locate([]byte(broken), "/a/2/b"); off != 14 || field != "a[2].b" {
		t.Errorf("in a broken document: %d %q, want 14 a[2].b", off, field)
	}
}

// TestNoFollowOnProblems: a value of the wrong type is reported once, by
// the decoder, and not again by a check that reads it beside another field
// (a cell's average of active requests against its concurrency, which the
// failed decode left at 0); a field's own checks still report.
func TestNoFollowOnProblems(t *testing.T) {
	for _, tt := range []struct {
		name, from, to string
		want           []string // each problem, in order
	}{
		{"concurrency a string", `"concurrency": 1, "status": "valid", "total_tok_s": 10`, `"concurrency": "4", "status": "valid", "total_tok_s": -5, "avg_active": 4`,
			[]string{"decode[0].concurrency: want a whole number, got a string", "decode[0].total_tok_s: must not be negative, got -5"}},
		{"sweep's concurrency a string", `"concurrency": [1, 2]}`, `"concurrency": "1, 2"}`,
			[]string{"sweep.concurrency: want an array"}},
		{"started_at a number", `"schema": 1,`, `"schema": 1, "started_at": 5, "finished_at": "2026-01-01T00:00:00Z",`,
			[]string{"started_at: want a string, got a number"}},
		{"completed a string", `"concurrency": [1, 2]}`, `"concurrency": [1, 2], "max_output_tokens": 10}`,
			[]string{"decode[0].completed: want a whole number, got a string"}},
		{"gpu_count a string", `"hardware": {}`, `"hardware": {"gpu_count": "2"}`,
			[]string{"hardware.gpu_count: want a whole number, got a string"}},
		{"sweep's repeats a string", `"concurrency": [1, 2]}`, `"concurrency": [1, 2], "repeats": "2"}`,
			[]string{"sweep.repeats: want a whole number, got a string"}},
		// A field under a misspelt name is reported as that, not also as
		// missing: the check that wants it follows from the misspelling.
		{"a figure misspelt", `"total_tok_s": 10}`, `"totl_tok_s": 10}`,
			[]string{`decode[0].totl_tok_s: unknown field; did you mean "total_tok_s"?`}},
		{"schema misspelt", `"schema": 1,`, `"shema": 1,`,
			[]string{`shema: unknown field; did you mean "schema"?`}},
		// A cell appears twice whatever else of it is wrong: the check
		// reads only its context and concurrency.
		{"a repeated cell with a figure a string", `"total_tok_s": 10}`, `"total_tok_s": 10},
    {"context_tokens": 8192, "concurrency": 1, "status": "valid", "total_tok_s": "10"}`,
			[]string{"decode[1]: cell 8K × 1 appears twice", "decode[1].total_tok_s: want a number, got a string"}},
		{"a repeated cell with its concurrency a string", `"total_tok_s": 10}`, `"total_tok_s": 10},
    {"context_tokens": 8192, "concurrency": "1", "status": "valid", "total_tok_s": 10}`,
			[]string{"decode[1].concurrency: want a whole number, got a string"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if !strings.Contains(minimal, tt.from) {
				t.Fatalf("%q is not in the minimal run", tt.from)
			}
			doc := strings.Replace(minimal, tt.from, tt.to, 1)
			switch tt.name {
			case "completed a string": // 1 request of 10 tokens cannot bring 60; 4 can
				doc = strings.Replace(doc, `"total_tok_s": 10}`, `"total_tok_s": 2, "window_seconds": 30, "completed": "3", "output_tokens": 60}`, 1)
			case "gpu_count a string": // one GPU cannot draw 6,000 W; two can
				doc = strings.Replace(doc, `"total_tok_s": 10}`, `"total_tok_s": 10, "window_seconds": 30, "power": {"energy_joules": 1000, "mean_power_w": 6000}}`, 1)
			}
			if tt.name == "sweep's repeats a string" {
				doc = strings.Replace(doc, `"total_tok_s": 10}`, `"total_tok_s": 10, "repeats": [
      {"context_tokens": 8192, "concurrency": 1, "status": "valid", "total_tok_s": 10},
      {"context_tokens": 8192, "concurrency": 1, "status": "valid", "total_tok_s": 10}]}`, 1)
			}
			_, err := Decode("f.json", []byte(doc))
			if err == nil {
				t.Fatal("no error")
			}
			lines := strings.Split(err.Error(), "\n")
			if len(lines) != len(tt.want) {
				t.Fatalf("%d problems, want %d:\n%v", len(lines), len(tt.want), err)
			}
			for i, w := range tt.want {
				if !strings.Contains(lines[i], w) {
					t.Errorf("problem %d = %q, want %q", i, lines[i], w)
				}
			}
		})
	}
}

// TestRequestIsNoProblemBesideOne: a file refused for another problem is
// read again member by member, and a request's free-form maps must read
// there as Decode reads them, not as a problem of their own.
func TestRequestIsNoProblemBesideOne(t *testing.T) {
	doc := strings.Replace(strings.Replace(minimal, `"hardware": {}`,
		`"hardware": {}, "request": {"temperature": 0.6, "chat_template_kwargs": {"enable_thinking": false}, "extra": {"a": {"b": [1, null, "x"]}}}`, 1),
		`"total_tok_s": 10`, `"total_tok_s": -1`, 1)
	_, err := Decode("f.json", []byte(doc))
	if err == nil || strings.Contains(err.Error(), "request") {
		t.Errorf("error = %v; want only decode[0].total_tok_s's", err)
	}
}
