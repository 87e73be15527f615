package runner

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/matrixgen/matrixgen"
	"github.com/matrixgen/matrixgen/internal/redact"
	"github.com/matrixgen/matrixgen/runfile"
)

// withRequest is settings whose requests carry thinking off, a
// temperature and a penalty: what two otherwise equal runs may differ in.
func withRequest(s Settings) Settings {
	s.Server.Temperature = new(0.6)
	s.Server.ChatTemplateKwargs = map[string]any{"enable_thinking": false}
	s.Server.Extra = map[string]any{"repetition_penalty": 1.1}
	return s
}

// TestRunKeepsTheRequest: the request's own settings were sent and not
// written, so a run with thinking off looked like one with it on. The run
// file keeps them; a run that set none keeps nothing.
func TestRunKeepsTheRequest(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, url, dial := startMemSim(t, testProfile())
		_, file := sweepWith(t, withRequest(testSettings(url, []string{"1K"}, []int{1}, time.Second)), dial)
		e, err := runfile.Load(file)
		if err != nil {
			t.Fatal(err)
		}
		got := e.Run.Request.Text()
		if want := `temperature 0.6 · chat_template_kwargs {"enable_thinking": false} · extra {"repetition_penalty": 1.1}`; got != want {
			t.Errorf("the run keeps the request %s, want %s", got, want)
		}
		_, file = sweepWith(t, testSettings(url, []string{"1K"}, []int{1}, time.Second), dial)
		data, _ := os.ReadFile(file)
		if strings.Contains(string(data), `"request"`) {
			t.Error("a run that set nothing of the request keeps a request")
		}
	})
}

// TestRequestIsRedacted: a token in extra or in the template's arguments
// would be written into a run file that is published. Every string goes
// through the redaction step, a value under a name that says secret
// whole; what the requests send is left as it was.
func TestRequestIsRedacted(t *testing.T) {
	const key = "sk-live-0123456789abcdefghij"
	extra := map[string]any{
		"api_key":            "hunter2 and more",
		"auth":               map[string]any{"token": "plain", "secrets": []any{"a1", "b2"}},
		"user":               "sees " + key + " here",
		"stop":               []any{"</s>", "END"},
		"repetition_penalty": 1.1,
		"tables":             []map[string]any{{"api_key": "tabled"}, {"note": "sees " + key}}, // an array of TOML tables
	}
	kwargs := map[string]any{"client_secret": "abc", "enable_thinking": false, "Bearer": "note"}
	q := requestOf(Server{Extra: extra, ChatTemplateKwargs: kwargs}, redact.New(key))
	got := q.Text()
	want := `chat_template_kwargs {"Bearer": "note", "client_secret": "<redacted>", "enable_thinking": false} · ` +
		`extra {"api_key": "<redacted>", "auth": "<redacted>", ` +
		`"repetition_penalty": 1.1, "stop": ["</s>", "END"], "tables": [{"api_key": "<redacted>"}, {"note": "sees <redacted>"}], "user": "sees <redacted> here"}`
	if got != want {
		t.Errorf("kept\n%s\nwant\n%s", got, want)
	}
	if extra["api_key"] != "hunter2 and more" || extra["auth"].(map[string]any)["token"] != "plain" {
		t.Errorf("redacting the run's copy changed what requests send: %v", extra)
	}
	if extra["tables"].([]map[string]any)[0]["api_key"] != "tabled" {
		t.Errorf("redacting the run's copy changed a table in a list the requests send: %v", extra)
	}
	for _, secret := range []string{"hunter2", "plain", "abc", "a1", "tabled", key[:12]} {
		if strings.Contains(got, secret) {
			t.Errorf("%q is kept", secret)
		}
	}
}

// TestSecretNamesHideWholeValues: a value under a name that says secret
// was hidden by reading "name=value" as text, so a password that began
// with #, &, =, a quote or a newline was kept whole (the text read as an
// empty value, a comment or a query), and a table or a number under such
// a name was not looked at. Every form under every such name is hidden;
// and a server that repeats one in its errors has it hidden too.
func TestSecretNamesHideWholeValues(t *testing.T) {
	names := []string{"password", "api_key", "API_Key", "X-Api-Key", "token", "client_secret", "Authorization", "auth", "db_password", "secret"}
	forms := []any{"#Tr0ub4dor&3", "&LEAKLEAK", "=LEAKLEAK", "\nLEAKLEAK", `"LEAKLEAK`, "'LEAKLEAK", " LEAKLEAK", "LEAK LEAK LEAK",
		48151623.0, map[string]any{"value": "LEAKLEAK"}, []any{"LEAKLEAK"}, []any{map[string]any{"v": "LEAKLEAK"}}}
	for _, name := range names {
		for _, form := range forms {
			extra := map[string]any{"outer": map[string]any{name: form}, name: form}
			got := requestOf(Server{Extra: extra}, redact.New("")).Text()
			if strings.Contains(got, "LEAK") || strings.Contains(got, "Tr0ub4dor") || strings.Contains(got, "48151623") {
				t.Errorf("%s = %#v is kept: %s", name, form, got)
			}
		}
	}
	kept := requestOf(Server{Extra: map[string]any{"num_api_key_retries": 3.0, "enable_auth": true, "stop": "#end"}}, redact.New("")).Text()
	if kept != `extra {"enable_auth": true, "num_api_key_retries": 3, "stop": "#end"}` {
		t.Errorf("settings that are no secrets were hidden: %s", kept)
	}
	s := Server{Extra: map[string]any{"password": "#Tr0ub4dor&3", "auth": map[string]any{"basic": "hunter2horse"}}}
	red := redact.New("").Also(requestSecrets(s)...)
	echo := "HTTP 400: [{'type': 'extra_forbidden', 'input': '#Tr0ub4dor&3'}, {'input': 'hunter2horse'}]"
	if got := red.Text(echo); strings.Contains(got, "Tr0ub4dor") || strings.Contains(got, "hunter2horse") {
		t.Errorf("a server's echo of the request's secrets is kept: %s", got)
	}
}

// TestResumeComparesTheRequest: a resume that sends other request
// settings would mix two measurements under one name; it is refused, the
// difference named, unless forced, and then recorded. The same settings
// resume.
func TestResumeComparesTheRequest(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		plain := testSettings("http://sim.test", []string{"1K"}, []int{1, 2}, time.Second)
		file, dial := interruptedRun(t, plain)
		thinkingOff := withRequest(plain)
		_, err := Run(context.Background(), Options{Settings: thinkingOff, File: file, Resume: true, Log: io.Discard, dial: dial})
		want := `request: none then, temperature 0.6 · chat_template_kwargs {"enable_thinking": false} · extra {"repetition_penalty": 1.1} now`
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("resumed with other request settings: %v", err)
		}
		run, err := Run(context.Background(), Options{Settings: thinkingOff, File: file, Resume: true, Force: true, Log: io.Discard, dial: dial})
		if err != nil || len(run.ResumedDespite) != 1 || !strings.Contains(run.ResumedDespite[0], want) {
			t.Fatalf("forced: %v, recorded %q", err, run.ResumedDespite)
		}

		file, dial = interruptedRun(t, thinkingOff)
		if _, err := Run(context.Background(), Options{Settings: withRequest(plain), File: file, Resume: true, Log: io.Discard, dial: dial}); err != nil {
			t.Errorf("the same request settings do not resume: %v", err)
		}
	})
}

// TestRequestNamesEveryDifference: each part of the request is compared.
func TestRequestNamesEveryDifference(t *testing.T) {
	base := &matrixgen.Run{Probe: &matrixgen.Probe{BaseURL: "http://sim.test"}, Request: requestOf(withRequest(Settings{}).Server, nil)}
	for name, edit := range map[string]func(s *Server){
		"temperature": func(s *Server) { s.Temperature = new(0.0) },
		"kwargs":      func(s *Server) { s.ChatTemplateKwargs = map[string]any{"enable_thinking": true} },
		"extra":       func(s *Server) { s.Extra = map[string]any{"repetition_penalty": 1.2} },
	} {
		s := withRequest(Settings{}).Server
		edit(&s)
		fresh := &matrixgen.Run{Probe: &matrixgen.Probe{BaseURL: "http://sim.test"}, Request: requestOf(s, nil)}
		diffs := resumeDifferences(base, fresh)
		if len(diffs) != 1 || !strings.HasPrefix(diffs[0], "request: ") {
			t.Errorf("%s: differences %q", name, diffs)
		}
	}
}

// TestSavingLeavesTheRequest: each save redacted and cut the request
// again, so a long value was cut twice in the file and once in a fresh
// copy, and every resume with the same settings was refused.
func TestSavingLeavesTheRequest(t *testing.T) {
	s := Server{Extra: map[string]any{"note": strings.Repeat("a", maxReasonText+100)}}
	run := &matrixgen.Run{Request: requestOf(s, redact.New(""))}
	before := run.Request.Text()
	cleanServerText(run, redact.New(""))
	cleanServerText(run, redact.New(""))
	if after := run.Request.Text(); after != before || after != requestOf(s, redact.New("")).Text() {
		t.Errorf("saving changed the request:\n%.80s…\n%.80s…", before, after)
	}
}

// TestURLPasswordNeverEchoed: with no API key, Go's client sends a base
// URL's user information as Basic authorization; a server that echoes it
// (decoded, or as sent) reaches neither the run file nor the log.
func TestURLPasswordNeverEchoed(t *testing.T) {
	const password = "Sup3rPassw0rdXy"
	p := testProfile()
	url := startSimWith(t, p, func(mux *http.ServeMux) {
		mux.HandleFunc("/v1/models", func(w http.ResponseWriter, r *http.Request) {
			user, pass, _ := r.BasicAuth()
			json.MarshalWrite(w, map[string]any{"object": "list", "data": []map[string]any{{"id": p.Model, "object": "model",
				"root": r.Header.Get("Authorization") + " " + user + ":" + pass + " " + pass, "max_model_len": p.MaxModelLen}}})
		})
	})
	base := strings.Replace(url, "http://", "http://admin:"+password+"@", 1)
	var log bytes.Buffer
	file := filepath.Join(t.TempDir(), "run.json")
	_, err := Run(context.Background(), Options{Settings: testSettings(base, []string{"1K"}, []int{1}, time.Second), File: file, Log: &log, Version: "test", Simulated: true})
	data, _ := os.ReadFile(file)
	basic := base64.StdEncoding.EncodeToString([]byte("admin:" + password))
	for what, text := range map[string]string{"run file": string(data), "log": log.String(), "error": fmt.Sprint(err)} {
		if strings.Contains(text, password) || strings.Contains(text, basic) {
			t.Errorf("the %s holds the URL's password:\n%s", what, text)
		}
	}
	if !strings.Contains(string(data), "model_root") {
		t.Errorf("the run file records no model root: the test checked nothing\n%s", data)
	}
}
