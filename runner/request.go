package runner

import (
	"maps"
	"net/url"
	"slices"
	"strconv"

	"github.com/go-json-experiment/json"
	"github.com/matrixgen/matrixgen"
	"github.com/matrixgen/matrixgen/internal/redact"
)

// requestOf is what every chat request carries beside the prompt, as the
// run file keeps it (nil where nothing was set), redacted.
func requestOf(s Server, red *redact.Redactor) *matrixgen.Request {
	q := &matrixgen.Request{Temperature: s.Temperature,
		ChatTemplateKwargs: copyMap(s.ChatTemplateKwargs), Extra: copyMap(s.Extra)}
	if q.IsZero() {
		return nil
	}
	if q.Temperature != nil {
		q.Temperature = new(*q.Temperature)
	}
	q.ChatTemplateKwargs, q.Extra = redactMap(q.ChatTemplateKwargs, red), redactMap(q.Extra, red)
	return q
}

// copyMap is m as the run file holds it, a deep copy in JSON's own types
// (an array of TOML tables decodes to []map[string]any), so the redaction
// reaches every string and never what the requests send.
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

// redactMap hides the secrets of a request's map: a value under a name
// that says secret (api_key, password, auth) whole, whatever it is; every
// other string, keys included, through the redaction step, then cut.
func redactMap(m map[string]any, red *redact.Redactor) map[string]any {
	if m == nil {
		return nil
	}
	out := make(map[string]any, len(m))
	for _, k := range slices.Sorted(maps.Keys(m)) {
		name := capText(red.Text(k), maxNameText)
		if _, taken := out[name]; taken { // two keys that were secrets
			name += " " + strconv.Itoa(len(out)+1)
		}
		out[name] = redactValue(k, m[k], red)
	}
	return out
}

// redactValue is v, standing under the name name ("" for none), with its
// secrets hidden.
func redactValue(name string, v any, red *redact.Redactor) any {
	_, isNumber := v.(float64)
	if name != "" && v != nil && redact.NamesSecret(name, isNumber) {
		if _, isBool := v.(bool); !isBool {
			return redact.Mark
		}
	}
	switch v := v.(type) {
	case string:
		return capText(red.Text(v), maxReasonText)
	case map[string]any:
		return redactMap(v, red)
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = redactValue(name, e, red) // a list's items stand under its name
		}
		return out
	}
	return v
}

// urlPasswords are the passwords in the server's addresses: Go's client
// sends them (Basic), and a server may echo them back.
func urlPasswords(s Server) []string {
	var out []string
	for _, raw := range []string{s.BaseURL, s.MetricsURL} {
		if u, err := url.Parse(raw); err == nil {
			out = append(out, redact.Password(u)...)
		}
	}
	return out
}

// requestSecrets are the texts a person put under secret names in the
// request's settings: Run's redaction hides them wherever a server
// repeats them, as it hides the live key.
func requestSecrets(s Server) []string {
	var out []string
	var walk func(name string, v any, secret bool)
	walk = func(name string, v any, secret bool) {
		_, isNumber := v.(float64)
		secret = secret || name != "" && redact.NamesSecret(name, isNumber)
		switch v := v.(type) {
		case string:
			if secret {
				out = append(out, v)
			}
		case map[string]any:
			for k, e := range v {
				walk(k, e, secret)
			}
		case []any:
			for _, e := range v {
				walk(name, e, secret)
			}
		}
	}
	for _, m := range []map[string]any{copyMap(s.ChatTemplateKwargs), copyMap(s.Extra)} {
		walk("", m, false)
	}
	return out
}
