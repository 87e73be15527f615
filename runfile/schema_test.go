package runfile

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"slices"
	"strings"
	"testing"
)

// TestSchemaFileIsCurrent keeps schema/run.schema.json equal to what the Go
// types give; run `go run ./cmd/matrixgen schema > schema/run.schema.json`
// after changing them.
func TestSchemaFileIsCurrent(t *testing.T) {
	want, err := Schema()
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile("../schema/run.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Error("schema/run.schema.json is out of date: regenerate it with `go run ./cmd/matrixgen schema > schema/run.schema.json`")
	}
	for _, field := range []string{`"total_tok_s"`, `"over_capacity"`, `"date-time"`, `"additionalProperties": false`, `"const": 1`} {
		if !bytes.Contains(want, []byte(field)) {
			t.Errorf("the schema lacks %s", field)
		}
	}
}

// TestSchemaAcceptsOurRuns checks, with a small validator of the schema
// keywords the schema uses, that the sample run and a full synthetic run
// satisfy it, and that it rejects what Decode rejects.
func TestSchemaAcceptsOurRuns(t *testing.T) {
	raw, _ := Schema()
	var schema map[string]any
	if err := json.Unmarshal(raw, &schema); err != nil {
		t.Fatal(err)
	}
	sample, err := os.ReadFile(sampleRun)
	if err != nil {
		t.Fatal(err)
	}
	withInterval := strings.Replace(minimal, `"total_tok_s": 10`, `"total_tok_s": 10, "interval": {"low": 0.5, "high": 12, "level": 0.95}`, 1)
	withRequest := strings.Replace(minimal, `"hardware": {}`, `"hardware": {}, "request": {"temperature": 0, "chat_template_kwargs": {"enable_thinking": false}, "extra": {"repetition_penalty": 1.1, "stop": ["a", null], "nested": {"k": "v"}}}`, 1)
	for name, doc := range map[string][]byte{"sample": sample, "minimal": []byte(minimal), "interval": []byte(withInterval), "request": []byte(withRequest)} {
		var v any
		json.Unmarshal(doc, &v)
		if problems := checkSchema(schema, v, ""); len(problems) > 0 {
			t.Errorf("%s: %v", name, problems)
		}
	}
	for name, doc := range map[string]string{
		"unknown field":   strings.Replace(minimal, `"hardware": {}`, `"hardware": {"gpus": 2}`, 1),
		"unknown status":  strings.Replace(minimal, `"valid"`, `"fast"`, 1),
		"negative":        strings.Replace(minimal, `"total_tok_s": 10`, `"total_tok_s": -1`, 1),
		"no model name":   strings.Replace(minimal, `"model": {"name": "m"}`, `"model": {}`, 1),
		"wrong schema":    strings.Replace(minimal, `"schema": 1`, `"schema": 2`, 1),
		"level of 1":      strings.Replace(withInterval, `"level": 0.95`, `"level": 1`, 1),
		"no level":        strings.Replace(withInterval, `, "level": 0.95`, ``, 1),
		"level of 1e-300": strings.Replace(withInterval, `"level": 0.95`, `"level": 1e-300`, 1),
		"low below 0":     strings.Replace(withInterval, `"low": 0.5`, `"low": -1`, 1),
		"request field":   strings.Replace(withRequest, `"temperature": 0`, `"top_p": 0`, 1),
		"request kwargs":  strings.Replace(withRequest, `{"enable_thinking": false}`, `[false]`, 1),
		"cold request":    strings.Replace(withRequest, `"temperature": 0`, `"temperature": -1`, 1),
	} {
		var v any
		json.Unmarshal([]byte(doc), &v)
		if len(checkSchema(schema, v, "")) == 0 {
			t.Errorf("the schema accepts a run with %s", name)
		}
	}
}

// checkSchema validates v against the keywords Schema emits: type,
// properties, required, additionalProperties, items, enum, const, minimum,
// exclusiveMinimum, exclusiveMaximum.
func checkSchema(s map[string]any, v any, at string) []string {
	var out []string
	if c, ok := s["const"]; ok && c != v {
		out = append(out, at+": want const")
	}
	if enum, ok := s["enum"].([]any); ok && !slices.Contains(enum, v) {
		out = append(out, at+": not in enum")
	}
	switch s["type"] {
	case "object":
		m, ok := v.(map[string]any)
		if !ok {
			return append(out, at+": want object")
		}
		props, _ := s["properties"].(map[string]any)
		for _, r := range asStrings(s["required"]) {
			if _, ok := m[r]; !ok {
				out = append(out, at+"."+r+": required")
			}
		}
		for k, e := range m {
			p, ok := props[k].(map[string]any)
			if !ok {
				p, ok = s["additionalProperties"].(map[string]any) // a free-form map's values
			}
			if !ok {
				out = append(out, at+"."+k+": not allowed")
				continue
			}
			out = append(out, checkSchema(p, e, at+"."+k)...)
		}
	case "array":
		a, ok := v.([]any)
		if !ok {
			return append(out, at+": want array")
		}
		for i, e := range a {
			out = append(out, checkSchema(s["items"].(map[string]any), e, fmt.Sprintf("%s[%d]", at, i))...)
		}
	case "string", "boolean":
		want := map[string]string{"string": "string", "boolean": "bool"}[s["type"].(string)]
		if fmt.Sprintf("%T", v) != want {
			out = append(out, at+": want "+want)
		}
	case "integer", "number":
		f, ok := v.(float64)
		if !ok || s["type"] == "integer" && f != math.Trunc(f) {
			return append(out, at+": want "+s["type"].(string))
		}
		if min, ok := s["minimum"].(float64); ok && f < min {
			out = append(out, at+": below minimum")
		}
		if min, ok := s["exclusiveMinimum"].(float64); ok && f <= min {
			out = append(out, at+": not above exclusiveMinimum")
		}
		if max, ok := s["exclusiveMaximum"].(float64); ok && f >= max {
			out = append(out, at+": not below exclusiveMaximum")
		}
	}
	return out
}

func asStrings(v any) []string {
	var out []string
	list, _ := v.([]any)
	for _, x := range list {
		out = append(out, x.(string))
	}
	return out
}
