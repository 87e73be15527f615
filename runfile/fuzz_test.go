package runfile

import (
	encjson "encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/matrixgen/matrixgen"
)

// seedRuns are the inputs both fuzz targets start from: the small and the
// sample run, the malformed-file corpus of FuzzDecode, and the cases the
// hand-written decoder got wrong.
func seedRuns(f *testing.F) {
	f.Add([]byte(minimal))
	f.Add([]byte(`{"schema":1,"decode":[{"status":"valid"}]}`))
	f.Add([]byte(`{"schema":1e400}`))
	f.Add([]byte("{\"model\":{\"name\":\"\xff\"}}"))
	f.Add([]byte(`{"schema":1,"tool":{"name":"t\u00e9\ud83d\ude00\ud800x"},"engine":{"name":"e"},"model":{"name":"m","max_model_len":-0},"probe":null,"sweep":{"contexts":[],"ignore_eos":false},"prefill":null}`))
	f.Add([]byte(strings.Replace(minimal, `"schema": 1,`, `"schema": 1, "started_at": "2026\u002d01-02T03:04:05\u005a",`, 1)))
	f.Add([]byte(strings.Replace(minimal, `"status": "valid",`, `"status": "valid", "loop": {"unit": "x", "start_offset": -9223372036854775808},`, 1)))
	f.Add([]byte(strings.Replace(minimal, `"hardware": {}`, `"hardware": {"gpus": 2, "vram_gb": -1, "vram_gb": 2}`, 1)))
	if sample, err := os.ReadFile(sampleRun); err == nil {
		f.Add(sample)
	}
	corpus, _ := filepath.Glob("testdata/fuzz/FuzzDecode/*")
	for _, name := range corpus {
		data, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		_, value, _ := strings.Cut(string(data), "\n[]byte(")
		doc, err := strconv.Unquote(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(value), ")")))
		if err != nil {
			f.Fatalf("%s: %v", name, err)
		}
		f.Add([]byte(doc))
	}
}

// FuzzDecode feeds run-file decoding anything: it must never panic,
// every rejection must be Errors that name the file and place each
// problem, and what it accepts encoding/json (the other JSON library, v1)
// decodes to an equal run.
func FuzzDecode(f *testing.F) {
	seedRuns(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		run, err := Decode("fuzz.json", data)
		if err == nil {
			if run == nil {
				t.Fatal("nil run without an error")
			}
			if _, err := Encode(run); err != nil {
				t.Fatalf("accepted run does not encode: %v", err)
			}
			// encoding/json hands a time its string undecoded, so it reads
			// "2026\u002d01…" as no time: it gets the document with each
			// string in its plainest form, which means the same.
			plain := jsontext.Value(slices.Clone(data))
			if err := plain.Compact(jsontext.PreserveRawStrings(false)); err != nil {
				t.Fatalf("accepted a file jsontext cannot compact: %v", err)
			}
			var want matrixgen.Run
			if err := encjson.Unmarshal(plain, &want); err != nil {
				t.Fatalf("accepted a file encoding/json rejects: %v", err)
			}
			if !reflect.DeepEqual(run, &want) {
				t.Fatalf("decoded differently from encoding/json:\n got %+v\nwant %+v", run, &want)
			}
			return
		}
		problems := decodeErrors(t, err)
		if len(problems) == 0 || len(problems) > matrixgen.MaxProblems {
			t.Fatalf("%d problems listed: %v", len(problems), err)
		}
		for _, p := range problems {
			if p.File != "fuzz.json" || p.Line == 0 {
				t.Fatalf("problem not placed: %v", p)
			}
		}
	})
}

// decodeErrors unpacks Decode's joined error, failing on anything that
// is not an Error.
func decodeErrors(t *testing.T, err error) []*Error {
	t.Helper()
	errs := []error{err}
	if joined, ok := err.(interface{ Unwrap() []error }); ok {
		errs = joined.Unwrap()
	}
	var out []*Error
	for _, e := range errs {
		var de *Error
		if !errors.As(e, &de) {
			t.Fatalf("rejection is not an Error: %v", e)
		}
		out = append(out, de)
	}
	return out
}

// FuzzDecodeAgreesWithLibrary holds Decode to a reading of the same bytes
// that shares none of its strictness: the library's generic decode into
// jsontext values (which refuses bad syntax, duplicate names, invalid UTF-8
// and trailing data), then the published schema's rules walked over those
// values (only known names; each field's JSON type; whole numbers within
// int64; RFC 3339 times; the listed statuses and token sources; null
// anywhere, which the library reads as "nothing"), then Validate on what a
// plain decode reads. Decode must accept exactly the files that reading
// accepts. It also holds the re-reading that lists every problem to the
// library: whenever the library refuses a file, the diagnosis finds at
// least one problem in it.
func FuzzDecodeAgreesWithLibrary(f *testing.F) {
	seedRuns(f)
	raw, err := Schema()
	if err != nil {
		f.Fatal(err)
	}
	var schema map[string]any
	if err := json.Unmarshal(raw, &schema); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		_, err := Decode("fuzz.json", data)
		want := readGenerically(schema, data)
		if (err == nil) != (want == nil) {
			t.Fatalf("Decode: %v\nthe library's generic reading: %v", err, want)
		}
		var run matrixgen.Run
		if libErr := json.Unmarshal(data, &run, strict); libErr != nil {
			if problems := newDiagnosis("fuzz.json", data).run(); len(problems) == 0 {
				t.Fatalf("the library refused the file (%v) and the diagnosis found nothing", libErr)
			}
		}
	})
}

// readGenerically is the reading FuzzDecodeAgreesWithLibrary compares with.
func readGenerically(schema map[string]any, data []byte) error {
	var doc jsontext.Value
	if err := json.Unmarshal(data, &doc); err != nil {
		return err
	}
	if err := bySchema(schema, doc, ""); err != nil {
		return err
	}
	var run matrixgen.Run
	if err := json.Unmarshal(data, &run); err != nil {
		return err
	}
	if problems := run.Validate(); len(problems) > 0 {
		return fmt.Errorf("%v", problems)
	}
	return nil
}

// bySchema checks a value against the schema's names and types.
func bySchema(s map[string]any, v jsontext.Value, at string) error {
	kind := v.Kind()
	if kind == 'n' {
		return nil
	}
	if enum, ok := s["enum"].([]any); ok {
		var str string
		if kind != '"' || json.Unmarshal(v, &str) != nil || !slices.Contains(enum, any(str)) {
			return fmt.Errorf("%s: %s is not one of %v", at, v, enum)
		}
		return nil
	}
	typ, _ := s["type"].(string)
	if _, ok := s["const"]; ok {
		typ = "integer"
	}
	wrong := fmt.Errorf("%s: %s is not %s", at, v, typ)
	switch typ {
	case "object":
		var members map[string]jsontext.Value
		if kind != '{' || json.Unmarshal(v, &members) != nil {
			return wrong
		}
		props, _ := s["properties"].(map[string]any)
		for name, e := range members {
			p, ok := props[name].(map[string]any)
			if !ok {
				return fmt.Errorf("%s.%s: not in the schema", at, name)
			}
			if err := bySchema(p, e, at+"."+name); err != nil {
				return err
			}
		}
	case "array":
		var elems []jsontext.Value
		if kind != '[' || json.Unmarshal(v, &elems) != nil {
			return wrong
		}
		for i, e := range elems {
			if err := bySchema(s["items"].(map[string]any), e, fmt.Sprintf("%s[%d]", at, i)); err != nil {
				return err
			}
		}
	case "string":
		var t time.Time
		if kind != '"' || s["format"] == "date-time" && json.Unmarshal(v, &t) != nil {
			return wrong
		}
	case "boolean":
		if kind != 't' && kind != 'f' {
			return wrong
		}
	case "integer":
		if _, err := strconv.ParseInt(string(v), 10, 64); kind != '0' || err != nil {
			return wrong
		}
	case "number":
		if _, err := strconv.ParseFloat(string(v), 64); kind != '0' || err != nil {
			return wrong
		}
	default:
		return fmt.Errorf("%s: the schema has no type here", at)
	}
	return nil
}
