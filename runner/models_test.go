package runner

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestModelChoiceErrors: a model the server does not serve, or no model
// named where it serves several, is an error listing what it serves (at
// most maxModelsListed of them, the rest counted), quoted.
func TestModelChoiceErrors(t *testing.T) {
	serving := func(ids ...string) string {
		var data []map[string]string
		for _, id := range ids {
			data = append(data, map[string]string{"id": id})
		}
		ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			json.NewEncoder(w).Encode(map[string]any{"data": data})
		}))
		t.Cleanup(ts.Close)
		return ts.URL
	}
	many := make([]string, 25)
	for i := range many {
		many[i] = fmt.Sprintf("m%02d", i)
	}
	for _, tt := range []struct {
		name, asked string
		served      []string
		want        string
	}{
		{"not served", "nemotron", []string{"sim"}, `does not serve model "nemotron"; it serves "sim" (name one`},
		{"several, none asked", "", []string{"a", "b"}, `the server serves 2 models: "a", "b"; name the one to measure`},
		{"none at all", "x", nil, `does not serve model "x"; it serves none`},
		{"none, none asked", "", nil, "lists no models"},
		{"many", "x", many, `"m19", and 5 more (name one`},
		{"a quote in a name", "x", []string{`a"b`}, `it serves "a\"b"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := newClient(serving(tt.served...), "", 1, nil)
			c.model = tt.asked
			_, err := c.probe(context.Background(), "")
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want %q", err, tt.want)
			}
		})
	}
}

// TestBaseURLWithV1: a base URL given as OpenAI's clients take it, with
// /v1, reaches the same routes as the server's root (not /v1/v1/models).
func TestBaseURLWithV1(t *testing.T) {
	_, url := startSim(t, testProfile())
	for _, base := range []string{url + "/v1", url + "/v1/"} {
		if _, err := newClient(base, "", 1, nil).probe(context.Background(), ""); err != nil {
			t.Errorf("%s: %v", base, err)
		}
	}
}
