package runfile

import (
	"encoding/json"
	"reflect"
	"strings"
	"time"

	"github.com/matrixgen/matrixgen"
)

// Schema returns the run file format as a JSON Schema (draft 2020-12),
// derived from the Go types, so it cannot drift from what Decode reads.
// Fields without omitempty are required; no other fields are allowed.
func Schema() ([]byte, error) {
	root := schemaOf(reflect.TypeFor[matrixgen.Run](), "#", map[reflect.Type]string{})
	root["$schema"] = "https://json-schema.org/draft/2020-12/schema"
	root["title"] = "matrixgen run file, schema 1"
	root["description"] = "One benchmark run: the environment, the sweep, and every prefill and decode measurement. See runs/README.md."
	root["properties"].(map[string]any)["schema"] = map[string]any{"const": matrixgen.SchemaVersion}
	out, err := json.MarshalIndent(root, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(out, '\n'), nil
}

// schemaOf is t's schema at path (a JSON pointer from the document's
// root); a struct met again inside itself (a cell's repeats are cells)
// refers back to where it was first described, in open.
func schemaOf(t reflect.Type, path string, open map[reflect.Type]string) map[string]any {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if at, ok := open[t]; ok {
		return map[string]any{"$ref": at}
	}
	switch t {
	case reflect.TypeFor[time.Time]():
		return map[string]any{"type": "string", "format": "date-time"}
	case reflect.TypeFor[matrixgen.Status]():
		return map[string]any{"enum": matrixgen.Statuses}
	case reflect.TypeFor[matrixgen.TokenSource]():
		return map[string]any{"enum": matrixgen.TokenSources}
	}
	switch t.Kind() {
	case reflect.String:
		return map[string]any{"type": "string"}
	case reflect.Bool:
		return map[string]any{"type": "boolean"}
	case reflect.Int, reflect.Int64:
		return map[string]any{"type": "integer", "minimum": 0}
	case reflect.Float64:
		return map[string]any{"type": "number", "minimum": 0}
	case reflect.Slice:
		return map[string]any{"type": "array", "items": schemaOf(t.Elem(), path+"/items", open)}
	case reflect.Map:
		// A request's free-form fields: any JSON value under any name.
		return map[string]any{"type": "object", "additionalProperties": schemaOf(t.Elem(), path+"/additionalProperties", open)}
	case reflect.Struct:
		open[t] = path
		defer delete(open, t)
		props := map[string]any{}
		var required []string
		for f := range t.Fields() {
			if !f.IsExported() {
				continue
			}
			name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "" || name == "-" {
				continue
			}
			props[name] = schemaOf(f.Type, path+"/properties/"+name, open)
			if !strings.Contains(opts, "omitempty") && !strings.Contains(opts, "omitzero") {
				required = append(required, name)
			}
		}
		if t == reflect.TypeFor[matrixgen.Interval]() { // a confidence, from MinLevel to below 1
			props["level"] = map[string]any{"type": "number", "minimum": matrixgen.MinLevel, "exclusiveMaximum": 1}
		}
		s := map[string]any{"type": "object", "properties": props, "additionalProperties": false}
		if len(required) > 0 {
			s["required"] = required
		}
		return s
	}
	return map[string]any{}
}
