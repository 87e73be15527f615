package runner

import (
	"maps"
	"slices"
	"strings"

	"github.com/go-json-experiment/json"
	"github.com/matrixgen/matrixgen"
	"github.com/matrixgen/matrixgen/internal/redact"
)

// requestOf is what every chat request carries beside the prompt, as the
// run file keeps it (nil where nothing was set): a copy, so that the
// redaction of its strings never reaches what the requests send.
func requestOf(s Server, red *redact.Redactor) *matrixgen.Request {
	q := &matrixgen.Request{Temperature: s.Temperature,
		ChatTemplateKwargs: copyMap(s.ChatTemplateKwargs), Extra: copyMap(s.Extra)}
	if q.IsZero() {
		return nil
	}
	if q.Temperature != nil {
		q.Temperature = new(*q.Temperature)
	}
	redactRequest(q, red)
	return q
}

// copyMap is m as the run file holds it, a deep copy: every map and list
// of any Go type (an array of TOML tables decodes to []map[string]any),
// and TOML's own values (a datetime), become JSON's objects, arrays,
// strings, numbers and booleans, so the redaction reaches every string
// and never what the requests send. Settings.Check refuses a value JSON
// cannot hold (nan), which no request could send either.
func copyMap(m map[string]any) map[string]any {
	if m == nil {
		return nil
	}
	var out map[string]any
	b, err := json.Marshal(m)
	if err == nil {
		err = json.Unmarshal(b, &out)
	}
	if err != nil {
		return nil
	}
	return out
}

// redactRequest passes every string of the request's maps through the
// one redaction step, as the launch command's: a person may put a token
// in extra as easily as on a command line.
func redactRequest(q *matrixgen.Request, red *redact.Redactor) {
	eachRequestText(q, func(name string, s *string, limit int) {
		*s = redactNamed(red, name, *s)
		if limit > 0 {
			*s = capText(*s, limit)
		}
	})
}

// redactNamed redacts a value as it would stand assigned to its name
// (api_key=…), so that a name saying secret hides its value, whatever the
// value looks like; the whole value, not only its first word, for a
// value that begins hidden.
func redactNamed(red *redact.Redactor, name, value string) string {
	if value == "" || name == "" {
		return red.Text(value)
	}
	prefix := name + "="
	after, ok := strings.CutPrefix(red.Text(prefix+value), prefix)
	switch {
	case !ok: // the name itself read as part of a secret
		return red.Text(value)
	case strings.HasPrefix(after, redact.Mark) && !strings.HasPrefix(value, redact.Mark):
		return redact.Mark
	}
	return after
}

// eachRequestText calls f with every string in the request's maps, its
// keys included, and the name it stands under (a list's items under the
// list's name).
func eachRequestText(q *matrixgen.Request, f func(name string, s *string, limit int)) {
	if q == nil {
		return
	}
	for _, m := range []map[string]any{q.ChatTemplateKwargs, q.Extra} {
		eachMapText(m, f)
	}
}

func eachMapText(m map[string]any, f func(name string, s *string, limit int)) {
	for _, k := range slices.Sorted(maps.Keys(m)) {
		v := m[k]
		name := k
		f("", &name, maxNameText)
		if name != k { // a key that is itself a secret
			delete(m, k)
		}
		m[name] = eachValueText(name, v, f)
	}
}

func eachValueText(name string, v any, f func(name string, s *string, limit int)) any {
	switch v := v.(type) {
	case string:
		f(name, &v, maxReasonText)
		return v
	case map[string]any:
		eachMapText(v, f)
	case []any:
		for i := range v {
			v[i] = eachValueText(name, v[i], f)
		}
	}
	return v
}

// requestText is a request as a resume's difference names it: compact
// JSON, the maps' names in order, or "none".
func requestText(q *matrixgen.Request) string {
	if q.IsZero() {
		return "none"
	}
	b, err := json.Marshal(q, json.Deterministic(true))
	if err != nil {
		return "unreadable: " + err.Error()
	}
	return string(b)
}
